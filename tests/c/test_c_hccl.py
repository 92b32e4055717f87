"""libhccl's communicators and collectives from C, without MPI: tests/c/hccl_check.c
is compiled against build/lib (make -C csrc) and started once per rank; rank 0
writes the root info to a file that the other ranks read.

hccl_check.c's modes are one table (kModes; `hccl_check --list`). CASES below runs
each mode in its cases, one pytest per case, named MODE-CASE, so a failure names the
mode; test_every_mode_has_a_case keeps CASES and the C table in step.

Covers every collective x dtypes x ops x counts (0, 1, 7, 1000, 1000003), in
place and not, host and aclrtMalloc memory, 1/2/3/4 ranks, two communicators
at once, each forced algorithm path, argument errors, a rank that never joins
a collective (HCCL_EXEC_TIMEOUT=2), a rank killed mid-collective, and that
nothing is left in /dev/shm.

Under mpiexec only the first rank runs these (they start their own processes).
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
from cdrivers import CDIR, assert_all_pass, build_libs, compile_check, no_shm_leftovers  # noqa: F401
from cdrivers import rank_env, rootfile, run_mode
from conftest import first_rank_only, scaled

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found"),
    first_rank_only,
]

SOURCE = CDIR / "hccl_check.c"
# The names in hccl_check.c's mode table, in its order (the exe fixture checks --list).
MODES = re.findall(r'^ +\{"(\w+)", "', SOURCE.read_text().split("kModes[] = {")[1].split("};")[0],
                   re.M)


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    """The compiled checker, linked against freshly built libraries."""
    build_libs()
    out = compile_check("hccl_check.c", tmp_path_factory.mktemp("hccl_check") / "hccl_check")
    listed = subprocess.run([str(out), "--list"], capture_output=True, text=True, timeout=30)
    assert listed.stdout.split() == MODES, listed
    return out


def hosts_env(hosts, extra=None):
    """Rank r on simulated host hosts[r] (PYHCCL_HOST_TAG), with extra[r]'s variables."""
    return lambda r: {"PYHCCL_HOST_TAG": f"h{hosts[r]}", **(extra or {}).get(r, {})}


# ---- the expectations of some cases beyond "every rank passed" (results, seconds taken)

def _names_absent_rank(rank):
    def check(results, took):
        for _, out in results[:-1]:
            assert f"timed out after 2 s waiting for rank {rank}" in out, out
        assert took < scaled(40)
    return check


def _late_fails_too(results, took):
    for _, out in results[:-1]:
        assert "timed out after 2 s waiting for rank 2" in out and "this rank is at collective #1" in out, out
    assert "rank 0 failed" in results[-1][1] or "rank 1 failed" in results[-1][1], results[-1][1]


def _one_verdict_naming_the_secret(results, took):
    verdicts = {line.split(": ", 3)[-1] for _, out in results for line in out.splitlines()
                if "init failed" in line and "PASS" not in line}
    assert len(verdicts) == 1 and "secret" in verdicts.pop(), results
    assert took < scaled(20)


def _relayed_names_rank_2(results, took):
    assert "rank 0 failed (" in results[1][1], results[1][1]


def _one_names_the_order(results, took):
    assert any("use one order on every rank" in out for _, out in results), results


def _warns_once(value):
    def check(results, took):
        out = results[0][1]
        assert out.count("ignoring HCCL_DETERMINISTIC") == (1 if value == "maybe" else 0), out
    return check


def _counts_differ(results, took):
    for _, out in results:
        assert "differs between ranks" in out and "Counts arrays" in out, out


UNKNOWN_ALGO = "broadcast:bogus,allgather:latency,reducescatter:nope,allreduce:odd,frob:chunked"


def _unknown_algo_warned_once(results, took):
    for _, out in results:
        assert out.count(f"PYHCCL_ALGO={UNKNOWN_ALGO}") == 1, out
        for entry in UNKNOWN_ALGO.split(","):
            assert entry in out, out


def _bad_inline_us_warned(logged):
    def check(results, took):
        for _, out in results:
            if logged:
                assert out.count("ignoring PYHCCL_INLINE_US=soon") == 1, out
                assert "[WARNING] PYHCCL(" in out, out  # through the logger, not a bare fprintf
            else:  # ASCEND_GLOBAL_LOG_LEVEL=4 (CANN's "null") silences every diagnostic
                assert "ignoring PYHCCL_INLINE_US" not in out, out
    return check


def _deadlock_named(results, took):
    assert took < scaled(20)
    assert any("deadlock: ranks " in out for _, out in results), results


# ---- the cases ---------------------------------------------------------------

# A case: n ranks run `mode` with `args`; `timeout` bounds the ranks, `limit` the test;
# every rank must pass unless all_pass is False; `check(results, seconds)` asserts more.
Case = collections.namedtuple("Case", "mode label n args env rank_env_of timeout limit all_pass check",
                              defaults=((), None, None, 120, 120, True, None))
CASES = []


def case(mode, label, n, *args, **kw):
    CASES.append(Case(mode, label, n, tuple(args), **kw))


# suite: all collectives, dtypes, ops and counts on two communicators; argument errors.
for n in (1, 2, 3, 4):
    for mem in ("host", "device"):
        case("suite", f"n{n}-{mem}", n, mem, timeout=120, limit=300)
# Each algorithm, forced, gives the same exact results (4 ranks, aclrtMalloc memory); so
# do boards of 1 MiB, which take most of the suite's collectives. With 64-byte chunks in 2
# slots every few bytes wait on a peer: about 5 s on an idle 2-core machine, 130 s with
# three busy processes beside it, hence the long limit.
for label, env in {
    "flat": {"PYHCCL_ALGO": "allreduce:flat,reduce:flat", "PYHCCL_BOARD_BYTES": "0"},
    "hier": {"PYHCCL_ALGO": "allreduce:hier,allgather:hier,reducescatter:hier"},
    "direct": {"PYHCCL_ALGO": "allreduce:direct,reduce:direct,broadcast:direct,allgather:direct,"
                              "reducescatter:direct,alltoall:direct"},
    "ring": {"PYHCCL_ALGO": "allreduce:ring,allgather:ring,reducescatter:ring,alltoall:pairwise",
             "CHECK_FOLD_ORDER": "any"},
    "old-names": {"PYHCCL_ALGO": "allreduce:latency,reduce:chunked,broadcast:single"},
    "chain": {"PYHCCL_ALGO": "reduce:tree,broadcast:tree", "PYHCCL_CHAIN_BYTES": "1"},
    "small-slots": {"PYHCCL_SLOT_BYTES": "4K", "PYHCCL_SLOTS": "2", "PYHCCL_CHUNK_BYTES": "64",
                    "PYHCCL_LATENCY_BYTES": "1"},
    "big-boards": {"PYHCCL_BOARD_BYTES": "1M"},
}.items():
    case("suite", f"forced-{label}", 4, "device", env=env, timeout=280, limit=300)
# Simulated hosts on one machine: ranks with different host tags count as different hosts
# and talk over TCP (loopback), shared memory inside a host; the layouts of issue 5.
LAYOUTS = {"2x2": [0, 0, 1, 1], "4x1": [0, 1, 2, 3], "3+1": [0, 0, 0, 1], "1+2": [0, 1, 1]}
for layout, hosts in sorted(LAYOUTS.items()):
    for mem in ("host", "device"):
        case("suite", f"hosts-{layout}-{mem}", len(hosts), mem, limit=300,
             env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": len(set(hosts))},
             rank_env_of=hosts_env(hosts))
# Every AllReduce, AllGather and ReduceScatter by the leader algorithm: one rank per host
# gathers or reduces, the leaders exchange, on uneven hosts (test_algo_choice.py checks the
# results it gives on 2 x 2 and 4 x 1).
case("suite", "leader-3+1", 4, "host", limit=300, rank_env_of=hosts_env(LAYOUTS["3+1"]),
     env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": 2,
          "PYHCCL_ALGO": "allreduce:leader,allgather:leader,reducescatter:leader,alltoall:leader"})
case("suite", "leader-1+2", 3, "device", limit=300, rank_env_of=hosts_env(LAYOUTS["1+2"]),
     env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": 2,
          "PYHCCL_ALGO": "allreduce:leader,allgather:leader,reducescatter:leader,alltoall:leader"})
# Four hosts, one of them with two ranks: the leaders by recursive doubling (leader.cc);
# on a slow link declared, AllReduces from a few hundred bytes halve, then double.
for label, link in (("", {}), ("-halving", {"PYHCCL_NET_MBITS": "100", "PYHCCL_NET_LATENCY_US": "1",
                                            "PYHCCL_NET_MESSAGE_US": "1"})):
    case("suite", f"leader{label}-2+1+1+1", 5, "host", limit=300,
         rank_env_of=hosts_env([0, 0, 1, 2, 3]),
         env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": 4, **link,
              "PYHCCL_ALGO": "allreduce:leader,allgather:leader,reducescatter:leader,alltoall:leader"})
# Six hosts, one with two ranks: AllReduce's leaders fold into doubling over four (hosts 1
# and 3 hand their sums to 0 and 2: leader.cc), where messages are declared dear and latency
# cheap, as the cost model then prefers to the one-step exchange.
case("suite", "leader-fold-2+1+1+1+1+1", 7, "host", limit=300,
     rank_env_of=hosts_env([0, 0, 1, 2, 3, 4, 5]),
     env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": 6, "PYHCCL_ALGO": "allreduce:leader",
          "PYHCCL_NET_LATENCY_US": "1", "PYHCCL_NET_MESSAGE_US": "100"})
# Eight hosts, one with two ranks: Broadcast and Reduce between the hosts along a binomial
# tree (tree.cc), where latency and messages are declared as dear as the cost model then
# prefers it to a star and a chain.
case("suite", "tree-binomial-2+1+1+1+1+1+1+1", 9, "host", limit=300,
     rank_env_of=hosts_env([0, 0, 1, 2, 3, 4, 5, 6, 7]),
     env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": 8, "PYHCCL_ALGO": "reduce:tree,broadcast:tree",
          "PYHCCL_NET_LATENCY_US": "50", "PYHCCL_NET_MESSAGE_US": "30"})
# Pairwise AlltoAll(V) and AllGatherV between hosts one step at a time: each send waits until the
# previous step's receive is in (pairwise.cc's window, at 1).
case("suite", "alltoall-window-2+1+1+1", 5, "host", limit=300, rank_env_of=hosts_env([0, 0, 1, 2, 3]),
     env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": 4, "PYHCCL_ALGO": "alltoall:pairwise",
          "PYHCCL_ALLTOALL_WINDOW": "1"})
# AlltoAll by rails (pairwise.cc) on three hosts of two ranks, in place too, one host step
# at a time: each waits for the previous one's first block from its partner.
case("suite", "rail-3x2-window", 6, "device", limit=300, rank_env_of=hosts_env([0, 0, 1, 1, 2, 2]),
     env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": 3, "PYHCCL_ALGO": "alltoall:rail",
          "PYHCCL_ALLTOALL_WINDOW": "1"})
# TCP between every pair of ranks (one host).
case("suite", "tcp", 3, "host", env={"PYHCCL_TRANSPORT": "tcp"}, limit=300)
case("suite", "tcp-ring-small-chunks", 3, "host", limit=300, env={
    "PYHCCL_TRANSPORT": "tcp", "PYHCCL_SOCKETS_PER_PEER": "1", "PYHCCL_CHUNK_BYTES": "4K",
    "PYHCCL_ALGO": "allreduce:ring,allgather:ring,reducescatter:ring,reduce:tree,broadcast:tree",
    "PYHCCL_CHAIN_BYTES": "1", "CHECK_FOLD_ORDER": "any"})
# A rank waiting on a board may look at a peer's FIFO after the peer posted and went on
# (host-memory AllGather: descriptors on a board, then FIFO messages): no mismatch. The
# fault delays the second look of every wait, so this fails without the check of the
# board behind the FIFO.
case("suite", "slow-board-look", 2, "host", env={"PYHCCL_FAULT": "slow_board_look"},
     timeout=280, limit=300)
# PYHCCL_ALGO entries that cannot be honoured warn once per process, naming the variable
# and its value, and results stay exact.
case("suite", "unknown-algo", 3, "device", env={"PYHCCL_ALGO": UNKNOWN_ALGO}, limit=300,
     check=_unknown_algo_warned_once)

# initfail: a rank presents (and expects) a wrong job secret on its TCP data connections:
# set-up fails on every rank, quickly, with one message that says so.
for bad in (0, 3):
    case("initfail", f"wrong-data-secret-{bad}", 4, timeout=60,
         env={"HCCL_CONNECT_TIMEOUT": "30"}, check=_one_verdict_naming_the_secret,
         rank_env_of=hosts_env(LAYOUTS["2x2"], {bad: {"PYHCCL_FAULT": "bad_data_secret"}}))

# timeout: a 2 s exec timeout (HCCL_EXEC_TIMEOUT or the config's hcclExecTimeOut) and the
# last rank stays away: the others fail within seconds.
case("timeout", "env", 4, env={"HCCL_EXEC_TIMEOUT": "2"}, timeout=60, check=_names_absent_rank(3))
case("timeout", "cfg", 4, "cfg", timeout=60, check=_names_absent_rank(3))
# Rank 0 times out first (2 s) on the absent rank 2 and tells rank 1, whose own timeout
# is far off: rank 1's error names rank 2, the rank at fault, not rank 0, which relayed it.
case("timeout", "relayed", 3, timeout=90, check=_relayed_names_rank_2,
     rank_env_of=lambda r: {"HCCL_EXEC_TIMEOUT": "2" if r == 0 else "30"})


def _victim_killed(results, took):
    assert results[-1][0] == -9, f"victim exit {results[-1][0]}\n{results[-1][1]}"
    assert_all_pass(results[:-1], "kill")
    for _, out in results[:-1]:
        assert "rank 3 (pid" in out, out


# kill: the last rank is SIGKILLed mid-collective (small and large): the others get an
# error naming it, not a hang.
for count in (8, 1 << 20):
    case("kill", f"count{count}", 4, count, "host", timeout=60, all_pass=False,
         check=_victim_killed)

# abort: PyhcclCommAbort: the aborting rank's ops fail at once (HCCL_E_UNAVAIL), its peers'
# within a second naming it, destroy is quick, and the survivors build a new communicator.
for n in (2, 4):
    case("abort", f"n{n}", n, timeout=60)

# late: the others time out (2 s) on a rank 4 s late: it fails as well, never reports
# success on a collective its peers gave up; the flight record shows the failed operation.
case("late", "4s-behind-2s-timeout", 3, env={"HCCL_EXEC_TIMEOUT": "2"}, timeout=60,
     check=_late_fails_too)

# mismatch: rank 0 calls something else than the others: every rank fails with HCCL_E_PARA
# and a message saying what differs, within seconds (no garbage, no wait for a timeout).
for n in (2, 4):
    for what in ("count", "count0", "bigcount", "bcastbig", "bcastroot", "reduceroot",
                 "scatterroot", "dtype", "op", "send", "p2pdtype"):
        case("mismatch", f"{what}-n{n}", n, what, timeout=60)

# Across simulated hosts, where a Broadcast or Reduce tree compares signatures in its own
# step (algo/tree.cc), not on boards: still every rank fails, within seconds.
# q-: between agreeing Broadcasts and Reduces, all queued behind a held stream, each of
# which leaves its signature check to the next (algo/ctx.h, signature_check).
for layout in ("2x2", "4x1"):
    for what in ("count", "bcastbig", "bcastroot", "reduceroot", "q-bcastroot", "q-reduceroot"):
        case("mismatch", f"{what}-hosts-{layout}", 4, what, timeout=60,
             rank_env_of=hosts_env(LAYOUTS[layout]))
case("mismatch", "q-bcastroot-n4", 4, "q-bcastroot", timeout=60)
# On 4x1 hosts, rank 2 in a Broadcast along the chain of hosts (the link declared so), the
# others in an AllGather by recursive doubling between the leaders (leader.cc): still every
# rank fails, within seconds.
CHAIN_LINK = {r: {"PYHCCL_NET_MBITS": "1000", "PYHCCL_NET_LATENCY_US": "50",
                  "PYHCCL_NET_MESSAGE_US": "40"} for r in range(4)}
case("mismatch", "agbcast-hosts-4x1", 4, "agbcast", timeout=60,
     rank_env_of=hosts_env(LAYOUTS["4x1"], CHAIN_LINK))

# pipeline: queued Broadcasts (Reduces) across hosts do not wait for the signature check
# of a late rank they exchange no data with, but the last one, which a synchronize waits
# for, does. The link declared so that the star (flat) is chosen, not a chain through
# the late rank.
STAR_LINK = {r: {"PYHCCL_NET_LATENCY_US": "50", "PYHCCL_NET_MESSAGE_US": "1"} for r in range(4)}
for kind in ("broadcast", "reduce"):
    case("pipeline", f"{kind}-hosts-4x1", 4, kind, timeout=60,
         rank_env_of=hosts_env(LAYOUTS["4x1"], STAR_LINK))

# held: queued Reduces hold their signature check's headers; the rank holding them sends
# them when its stream runs out of the communicator's operations (its last, a Send to
# another rank, does not take them along).
case("held", "reduce-send-hosts-4x1", 4, timeout=60, env={"HCCL_EXEC_TIMEOUT": "30"},
     rank_env_of=hosts_env(LAYOUTS["4x1"], STAR_LINK))

# mismatch_v: rank 0 passes another recvCounts (AllGatherV) / sendCounts (ReduceScatterV)
# array, or one of zeros: HCCL_E_PARA on every rank within seconds.
for kind in ("allgatherv", "reducescatterv"):
    for how in ("other", "zero"):
        case("mismatch_v", f"{kind}-{how}", 3, kind, how, timeout=60, check=_counts_differ)
# The rendezvous is a thread of rank 0's process, which may get the last set-up answer,
# fail its first collective and exit before that thread answered the others: they must
# still get their answer. The fault makes the thread pause after each answer.
case("mismatch_v", "slow-rendezvous", 3, "reducescatterv", "zero", timeout=60,
     env={"PYHCCL_FAULT": "slow_bootstrap_server"})

# config: HcclGetConfig(HCCL_DETERMINISTIC) reads the variable until HcclSetConfig; the
# global value is the default of communicators created later; a bad value warns once.
for value, expect in ((None, 0), ("0", 0), ("1", 1), ("2", 2), ("true", 1), ("false", 0),
                      ("maybe", 0)):
    case("config", f"{value}", 1, expect, env={"HCCL_DETERMINISTIC": value}, timeout=60,
         check=_warns_once(value))

# perf: the timing mode runs and checks its result (numbers are not asserted).
for n in (2, 4):
    case("perf", f"n{n}", n, 4 << 20, 5, "device")

# inline: small ops may run inline when all peers are present: crossed communicators do
# not deadlock, a late peer does not hold the caller, an inline op is done on return.
case("inline", "crossed", 3, "crossed", timeout=150, limit=180)
case("inline", "crossed-long-waits", 3, "crossed", env={"PYHCCL_INLINE_US": "20000"},
     timeout=150, limit=180)
case("inline", "late", 3, "late", timeout=150, limit=180)
case("inline", "done", 3, "done", env={"PYHCCL_INLINE_US": "1000000"}, timeout=150, limit=180)
# PYHCCL_INLINE_US is read for every communicator; a bad value warns once per process
# (crossed builds two), through the logger, which ASCEND_GLOBAL_LOG_LEVEL=4 silences.
case("inline", "bad-variable-warns-once", 2, "crossed", env={"PYHCCL_INLINE_US": "soon"},
     timeout=100, check=_bad_inline_us_warned(True))
case("inline", "bad-variable-logging-off", 2, "crossed", timeout=100,
     env={"PYHCCL_INLINE_US": "soon", "ASCEND_GLOBAL_LOG_LEVEL": "4"},
     check=_bad_inline_us_warned(False))

# p2pring: each rank sends to the next, then receives (1 MiB and 4 MiB, more than the
# channel): without a group a deadlock, which every rank reports within seconds saying to
# use a group; inside a group it delivers; a receiver 1 s late is no deadlock.
for what, count in (("ring", 1 << 18), ("ring", 1 << 20), ("group", 1 << 20), ("late", 1 << 20)):
    case("p2pring", f"{what}-{count}", 3, what, count, "host", timeout=60,
         check=_deadlock_named if what == "ring" else None)
# The same ring between hosts (peers' states cannot be seen; one socket, 64 MiB messages):
# it times out (HCCL_EXEC_TIMEOUT=2) with a message that says to use a group.
case("p2pring", "timeout-across-hosts", 2, "timeout", 16 << 20, "host", timeout=60,
     env={"HCCL_EXEC_TIMEOUT": "2", "PYHCCL_SOCKETS_PER_PEER": "1"}, rank_env_of=hosts_env([0, 1]))

# order: rank 0 enqueues an AllReduce on communicator a then one on b, rank 1 b then a, on
# one stream: a deadlock both report within seconds naming both communicators; with
# PYHCCL_ORDER_CHECK=0 it times out (HCCL_EXEC_TIMEOUT=2) naming the likely cause; the same
# order works.
for what, count in (("opposite", 8), ("opposite", 1 << 18), ("same", 1 << 18), ("off", 1 << 18)):
    case("order", f"{what}-{count}", 2, what, count, "host", timeout=60,
         env={"PYHCCL_ORDER_CHECK": "0", "HCCL_EXEC_TIMEOUT": "2"} if what == "off" else None,
         check=_one_names_the_order if what == "off" else None)


@pytest.mark.parametrize("c", [pytest.param(c, id=f"{c.mode}-{c.label}",
                                            marks=pytest.mark.timeout(c.limit)) for c in CASES])
def test_mode(exe, tmp_path, c):
    """One case of one mode of hccl_check.c: every rank passes, and the case's own check."""
    t0 = time.monotonic()
    results = run_mode(exe, tmp_path, c.n, c.mode, *c.args, env=c.env, rank_env_of=c.rank_env_of,
                       timeout=c.timeout)
    took = time.monotonic() - t0
    if c.all_pass:
        assert_all_pass(results, f"{c.mode} {' '.join(map(str, c.args))}")
    if c.check:
        c.check(results, took)


def test_every_mode_has_a_case():
    """Every mode of the C table runs in some case here, and no case names another mode."""
    assert {c.mode for c in CASES} | OWN_DRIVERS == set(MODES)


# Modes whose processes the tests below start and steer themselves.
OWN_DRIVERS = {"sigstop"}


@pytest.mark.timeout(120)
def test_sigstop_never_succeeds_on_abandoned_buffers(exe, tmp_path):
    """SIGSTOP of a rank during single-copy AllReduces (device memory); resumed after the others
    timed out: no rank reports a wrong result as a success, and every rank ends with an error."""
    root = rootfile(tmp_path, "sigstop")
    env = rank_env({"HCCL_EXEC_TIMEOUT": "2"})
    procs = [subprocess.Popen([str(exe), "sigstop", str(r), "4", str(root), "device"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for r in range(4)]
    try:
        victim = procs[-1]
        deadline = time.monotonic() + scaled(30)
        while time.monotonic() < deadline:  # wait until it has stopped itself
            with open(f"/proc/{victim.pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "T":
                    break
            time.sleep(0.01)
        time.sleep(4)  # the others time out meanwhile
        os.kill(victim.pid, signal.SIGCONT)
        results = [(p.wait(timeout=60), p.stdout.read()) for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert_all_pass(results, "sigstop")


@pytest.mark.timeout(120)
def test_perf_idle_connections_do_not_keep_ranks_out(exe, tmp_path):
    """Hostile peers hold 200 idle connections to the rendezvous of a root process limited to
    128 descriptors: the server keeps few of them (1 s each) and the real ranks still join."""
    import resource
    import socket
    import struct

    root = rootfile(tmp_path, "dos")
    env = rank_env({"HCCL_CONNECT_TIMEOUT": "30", "HCCL_EXEC_TIMEOUT": "30"})
    args = lambda r: [str(exe), "perf", str(r), "4", str(root), str(4096), "3", "host"]
    limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
    procs = [subprocess.Popen(args(0), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env, preexec_fn=limit)]
    idle = []
    try:
        deadline = time.monotonic() + scaled(20)
        while not root.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        blob = root.read_bytes()
        # RootInfoView: magic[8], version u32, secret[32], job_id[16], host[64], port u16.
        host = blob[60:124].split(b"\0")[0].decode()
        port = struct.unpack_from("<H", blob, 124)[0]
        for _ in range(200):
            sock = socket.create_connection((host, port), timeout=5)
            idle.append(sock)
        t0 = time.monotonic()
        procs += [subprocess.Popen(args(r), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env=env) for r in range(1, 4)]
        results = [(p.wait(timeout=60), p.stdout.read()) for p in procs]
        took = time.monotonic() - t0
    finally:
        for sock in idle:
            sock.close()
        for p in procs:
            p.kill()
    assert_all_pass(results, "ranks joining past idle connections")
    assert took < scaled(15), f"joining took {took:.1f} s"
