"""libhccl's communicators and collectives from C, without MPI: tests/c/hccl_check.c
is compiled against build/lib (make -C csrc) and started once per rank; rank 0
writes the root info to a file that the other ranks read.

Covers every collective x dtypes x ops x counts (0, 1, 7, 1000, 1000003), in
place and not, host and aclrtMalloc memory, 1/2/3/4 ranks, two communicators
at once, each forced algorithm path, argument errors, a rank that never joins
a collective (HCCL_EXEC_TIMEOUT=2), a rank killed mid-collective, and that
nothing is left in /dev/shm.

Under mpiexec only the first rank runs these (they start their own processes).
"""
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import SLOWDOWN, first_rank_only

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "build" / "lib"
SOURCE = ROOT / "tests" / "c" / "hccl_check.c"



pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found"),
    first_rank_only,
]


def _shm_names():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("pyhccl-")}
    except FileNotFoundError:
        return set()


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    """The compiled checker, linked against freshly built libraries."""
    build = subprocess.run(["make", "-C", str(ROOT / "csrc"), "-j2"], capture_output=True,
                           text=True, timeout=900)
    assert build.returncode == 0, f"make -C csrc failed:\n{build.stdout}\n{build.stderr}"
    out = tmp_path_factory.mktemp("hccl_check") / "hccl_check"
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}",
           str(SOURCE), f"-L{LIB}", "-lhccl", "-lascendcl", f"-Wl,-rpath,{LIB}", "-lpthread",
           "-lm", "-o", str(out)]
    cc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, f"compile failed:\n{cc.stderr}"
    return out


@pytest.fixture(autouse=True)
def no_shm_leftovers():
    """Every test leaves /dev/shm as it found it."""
    before = _shm_names()
    yield
    left = _shm_names() - before
    if left:  # another job's segments come and go within moments; ours would stay
        time.sleep(2)
        left &= _shm_names()
    assert not left, f"left in /dev/shm: {sorted(left)}"


def run_ranks(exe, tmp_path, n, mode, *args, env=None, rank_env=None, timeout=120):
    """Start n ranks of the checker; return [(returncode, output)] in rank order.

    `rank_env(r)` adds variables for rank r only (e.g. a host tag)."""
    rootfile = tmp_path / f"root-{mode}-{n}-{time.monotonic_ns()}"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PYHCCL_")}
    full_env.setdefault("HCCL_CONNECT_TIMEOUT", "60")
    full_env.setdefault("HCCL_EXEC_TIMEOUT", "60")
    full_env["PYHCCL_TEST_SLOWDOWN"] = str(SLOWDOWN)  # scales the checker's time bounds
    full_env.update(env or {})
    procs = [subprocess.Popen([str(exe), mode, str(r), str(n), str(rootfile), *map(str, args)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**full_env, **(rank_env(r) if rank_env else {})})
             for r in range(n)]
    results = []
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            results.append((p.returncode, out))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        outs = [p.communicate()[0] for p in procs]
        pytest.fail(f"{mode} with {n} ranks timed out after {timeout} s:\n" +
                    "\n".join(f"--- rank {r}\n{o}" for r, o in enumerate(outs)))
    return results


def assert_all_pass(results, what):
    report = "\n".join(f"--- rank {r} (exit {rc})\n{out}" for r, (rc, out) in enumerate(results))
    for r, (rc, out) in enumerate(results):
        assert rc == 0 and f"rank {r}: PASS" in out, f"{what}: rank {r} failed\n{report}"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mem", ["host", "device"])
@pytest.mark.parametrize("nranks", [1, 2, 3, 4])
def test_suite(exe, tmp_path, nranks, mem):
    """All collectives, dtypes, ops and counts on two communicators; argument errors."""
    assert_all_pass(run_ranks(exe, tmp_path, nranks, "suite", mem), f"suite n={nranks} {mem}")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("env", [
    {"PYHCCL_ALGO": "allreduce:flat,reduce:flat", "PYHCCL_BOARD_BYTES": "0"},
    {"PYHCCL_ALGO": "allreduce:hier,allgather:hier,reducescatter:hier"},
    {"PYHCCL_ALGO": "allreduce:direct,reduce:direct,broadcast:direct,allgather:direct,"
                    "reducescatter:direct,alltoall:direct"},
    {"PYHCCL_ALGO": "allreduce:ring,allgather:ring,reducescatter:ring,alltoall:pairwise",
     "CHECK_FOLD_ORDER": "any"},
    {"PYHCCL_ALGO": "allreduce:latency,reduce:chunked,broadcast:single"},
    {"PYHCCL_ALGO": "reduce:tree,broadcast:tree", "PYHCCL_CHAIN_BYTES": "1"},
    {"PYHCCL_SLOT_BYTES": "4K", "PYHCCL_SLOTS": "2", "PYHCCL_CHUNK_BYTES": "64",
     "PYHCCL_LATENCY_BYTES": "1"},
    {"PYHCCL_BOARD_BYTES": "1M"},
], ids=["flat", "hier", "direct", "ring", "old-names", "chain", "small-slots", "big-boards"])
def test_forced_paths(exe, tmp_path, env):
    """Each algorithm, forced, gives the same exact results (4 ranks, aclrtMalloc memory);
    so do boards of 1 MiB, which take most of the suite's collectives.

    With 64-byte chunks in 2 slots every few bytes wait on a peer: about 5 s on an idle
    2-core machine, 130 s with three busy processes beside it, hence the long limit."""
    assert_all_pass(run_ranks(exe, tmp_path, 4, "suite", "device", env=env, timeout=280),
                    f"suite {env}")


# Simulated hosts on one machine: ranks with different host tags count as
# different hosts and talk over TCP (loopback); the layouts of issue 5.
LAYOUTS = {"2x2": [0, 0, 1, 1], "4x1": [0, 1, 2, 3], "3+1": [0, 0, 0, 1], "1+2": [0, 1, 1]}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mem", ["host", "device"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_suite_across_hosts(exe, tmp_path, layout, mem):
    """Every collective across tagged hosts: shared memory inside a host, TCP between them."""
    hosts = LAYOUTS[layout]
    results = run_ranks(exe, tmp_path, len(hosts), "suite", mem,
                        env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": str(len(set(hosts)))},
                        rank_env=lambda r: {"PYHCCL_HOST_TAG": f"h{hosts[r]}"})
    assert_all_pass(results, f"suite {layout} {mem}")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("layout", ["3+1"])
def test_suite_leader_across_hosts(exe, tmp_path, layout):
    """Every AllReduce of the suite by the leader algorithm (PYHCCL_ALGO=allreduce:leader):
    one rank per host reduces, the leaders exchange, on uneven hosts (test_algo_choice.py
    checks the results it gives on 2 x 2)."""
    hosts = LAYOUTS[layout]
    results = run_ranks(exe, tmp_path, len(hosts), "suite", "host",
                        env={"CHECK_FOLD_ORDER": "any", "CHECK_HOSTS": str(len(set(hosts))),
                             "PYHCCL_ALGO": "allreduce:leader"},
                        rank_env=lambda r: {"PYHCCL_HOST_TAG": f"h{hosts[r]}"})
    assert_all_pass(results, f"suite leader {layout}")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("env", [
    {"PYHCCL_TRANSPORT": "tcp"},
    {"PYHCCL_TRANSPORT": "tcp", "PYHCCL_SOCKETS_PER_PEER": "1", "PYHCCL_CHUNK_BYTES": "4K",
     "PYHCCL_ALGO": "allreduce:ring,allgather:ring,reducescatter:ring,reduce:tree,broadcast:tree",
     "PYHCCL_CHAIN_BYTES": "1", "CHECK_FOLD_ORDER": "any"},
], ids=["tcp", "tcp-ring-small-chunks"])
def test_suite_over_tcp(exe, tmp_path, env):
    """Every collective with TCP between every pair of ranks (one host)."""
    assert_all_pass(run_ranks(exe, tmp_path, 3, "suite", "host", env=env), f"suite {env}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("nranks", [2, 4])
def test_abort(exe, tmp_path, nranks):
    """PyhcclCommAbort: the aborting rank's ops fail at once (HCCL_E_UNAVAIL), its peers' within
    a second naming it, destroy is quick, and the survivors build a new communicator."""
    assert_all_pass(run_ranks(exe, tmp_path, nranks, "abort", timeout=60), "abort")


@pytest.mark.timeout(120)
def test_stopped_rank_never_succeeds_on_abandoned_buffers(exe, tmp_path):
    """SIGSTOP of a rank during single-copy AllReduces (device memory); resumed after the others
    timed out: no rank reports a wrong result as a success, and every rank ends with an error."""
    rootfile = tmp_path / "root-sigstop"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYHCCL_")}
    env.update(HCCL_CONNECT_TIMEOUT="60", HCCL_EXEC_TIMEOUT="2")
    procs = [subprocess.Popen([str(exe), "sigstop", str(r), "4", str(rootfile), "device"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for r in range(4)]
    try:
        victim = procs[-1]
        deadline = time.monotonic() + 30
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
def test_late_rank_does_not_succeed_alone(exe, tmp_path):
    """The others time out (2 s) on a rank 4 s late: it fails as well, never reports success on
    a collective its peers gave up; the flight record shows the failed operation."""
    results = run_ranks(exe, tmp_path, 3, "late", env={"HCCL_EXEC_TIMEOUT": "2"}, timeout=60)
    assert_all_pass(results, "late")
    for _, out in results[:-1]:
        assert "timed out after 2 s waiting for rank 2" in out and "this rank is at collective #1" in out, out
    assert "rank 0 failed" in results[-1][1] or "rank 1 failed" in results[-1][1], results[-1][1]


@pytest.mark.timeout(120)
def test_idle_connections_do_not_keep_ranks_out(exe, tmp_path):
    """Hostile peers hold 200 idle connections to the rendezvous of a root process limited to
    128 descriptors: the server keeps few of them (1 s each) and the real ranks still join."""
    import resource
    import socket
    import struct

    rootfile = tmp_path / "root-dos"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYHCCL_")}
    env.update(HCCL_CONNECT_TIMEOUT="30", HCCL_EXEC_TIMEOUT="30")
    args = lambda r: [str(exe), "perf", str(r), "4", str(rootfile), str(4096), "3", "host"]
    limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
    procs = [subprocess.Popen(args(0), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env, preexec_fn=limit)]
    idle = []
    try:
        deadline = time.monotonic() + 20
        while not rootfile.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        blob = rootfile.read_bytes()
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
    assert took < 15, f"joining took {took:.1f} s"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("bad", [0, 3])
def test_wrong_secret_on_a_data_connection(exe, tmp_path, bad):
    """A rank that presents (and expects) a wrong job secret on its TCP data connections:
    set-up fails on every rank, quickly, with one message that says so."""
    hosts = LAYOUTS["2x2"]
    t0 = time.monotonic()
    results = run_ranks(exe, tmp_path, 4, "initfail", env={"HCCL_CONNECT_TIMEOUT": "30"},
                        rank_env=lambda r: {"PYHCCL_HOST_TAG": f"h{hosts[r]}",
                                            **({"PYHCCL_FAULT": "bad_data_secret"} if r == bad else {})},
                        timeout=60)
    assert_all_pass(results, "wrong data secret")
    verdicts = {out.split(": ", 3)[-1] for _, out in results for out in out.splitlines()
                if "init failed" in out and "PASS" not in out}
    assert len(verdicts) == 1 and "secret" in verdicts.pop(), results
    assert time.monotonic() - t0 < 20


@pytest.mark.timeout(120)
@pytest.mark.parametrize("source", ["env", "cfg"])
def test_rank_never_calls(exe, tmp_path, source):
    """A 2 s exec timeout (HCCL_EXEC_TIMEOUT or the config's hcclExecTimeOut) and the
    last rank stays away: the others fail within seconds."""
    t0 = time.monotonic()
    if source == "env":
        results = run_ranks(exe, tmp_path, 4, "timeout", env={"HCCL_EXEC_TIMEOUT": "2"},
                            timeout=60)
    else:
        results = run_ranks(exe, tmp_path, 4, "timeout", "cfg", timeout=60)
    assert_all_pass(results, "timeout")
    for rc, out in results[:-1]:
        assert "timed out after 2 s waiting for rank 3" in out, out
    assert time.monotonic() - t0 < 40


@pytest.mark.timeout(120)
def test_relayed_failure_names_the_rank_at_fault(exe, tmp_path):
    """Rank 0 times out first (2 s) on the absent rank 2 and tells rank 1, whose own
    timeout is far off: rank 1's error (PyhcclStreamTakeOpError's rank) names rank 2, the
    rank at fault, not rank 0, which relayed it (it once did)."""
    results = run_ranks(exe, tmp_path, 3, "timeout", timeout=90,
                        rank_env=lambda r: {"HCCL_EXEC_TIMEOUT": "2" if r == 0 else "30"})
    assert_all_pass(results, "relayed timeout")
    assert "rank 0 failed (" in results[1][1], results[1][1]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("count", [8, 1 << 20])
def test_rank_killed(exe, tmp_path, count):
    """The last rank is SIGKILLed mid-collective (small and large): the others get an error
    naming it, not a hang."""
    results = run_ranks(exe, tmp_path, 4, "kill", count, "host", timeout=60)
    assert results[-1][0] == -9, f"victim exit {results[-1][0]}\n{results[-1][1]}"
    assert_all_pass(results[:-1], "kill")
    for rc, out in results[:-1]:
        assert "rank 3 (pid" in out, out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("what", ["count", "count0", "bigcount", "bcastbig", "bcastroot",
                                  "reduceroot", "scatterroot", "dtype", "op", "send", "p2pdtype"])
@pytest.mark.parametrize("nranks", [2, 4])
def test_mismatched_collectives(exe, tmp_path, nranks, what):
    """Rank 0 calls something else than the others: every rank fails with HCCL_E_PARA and a
    message saying what differs, within seconds (no garbage, no wait for a timeout)."""
    results = run_ranks(exe, tmp_path, nranks, "mismatch", what, timeout=60)
    assert_all_pass(results, f"mismatch {what}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["other", "zero"])
@pytest.mark.parametrize("kind", ["allgatherv", "reducescatterv"])
def test_mismatched_v_counts(exe, tmp_path, kind, how):
    """Rank 0 passes another recvCounts (AllGatherV) / sendCounts (ReduceScatterV) array, or
    one of zeros: HCCL_E_PARA on every rank within seconds, not stale data or a hang."""
    results = run_ranks(exe, tmp_path, 3, "mismatch_v", kind, how, timeout=60)
    assert_all_pass(results, f"mismatch_v {kind} {how}")
    for _, out in results:
        assert "differs between ranks" in out and "Counts arrays" in out, out


@pytest.mark.timeout(300)
def test_board_wait_sees_a_post_behind_fifo_messages(exe, tmp_path):
    """A rank that waits on a board may look at a peer's FIFO after the peer posted and went
    on to the next step of its algorithm (host-memory AllGather: a board exchange of
    descriptors, then FIFO messages): that is no mismatch. The fault delays the second look
    of every wait, so the suite fails without the check of the board behind the FIFO."""
    results = run_ranks(exe, tmp_path, 2, "suite", "host",
                        env={"PYHCCL_FAULT": "slow_board_look"}, timeout=280)
    assert_all_pass(results, "suite with late board looks")


@pytest.mark.timeout(120)
def test_root_exit_lets_every_answer_out(exe, tmp_path):
    """The rendezvous is a thread of rank 0's process. Rank 0 may get the last set-up answer,
    fail its first collective and exit before that thread answered the others (it waits for
    a core): they must still get their answer, not "lost the connection to the root". The
    fault makes the thread pause after each answer, so this fails without the exit wait."""
    results = run_ranks(exe, tmp_path, 3, "mismatch_v", "reducescatterv", "zero",
                        env={"PYHCCL_FAULT": "slow_bootstrap_server"}, timeout=60)
    assert_all_pass(results, "mismatch_v with a slow rendezvous")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("value,expect", [(None, 0), ("0", 0), ("1", 1), ("2", 2), ("true", 1),
                                          ("false", 0), ("maybe", 0)])
def test_deterministic_config(exe, tmp_path, monkeypatch, value, expect):
    """HcclGetConfig(HCCL_DETERMINISTIC) reads the variable until HcclSetConfig; the global
    value is the default of communicators created later; a bad value warns once."""
    monkeypatch.delenv("HCCL_DETERMINISTIC", raising=False)
    env = {} if value is None else {"HCCL_DETERMINISTIC": value}
    results = run_ranks(exe, tmp_path, 1, "config", expect, env=env, timeout=60)
    assert_all_pass(results, f"config HCCL_DETERMINISTIC={value}")
    out = results[0][1]
    assert out.count("ignoring HCCL_DETERMINISTIC") == (1 if value == "maybe" else 0), out


@pytest.mark.timeout(300)
def test_unknown_algo_entries(exe, tmp_path):
    """PYHCCL_ALGO entries that cannot be honoured, for any collective, warn once per process
    (naming the variable and its value) and results stay exact."""
    spec = "broadcast:bogus,allgather:latency,reducescatter:nope,allreduce:odd,frob:chunked"
    results = run_ranks(exe, tmp_path, 3, "suite", "device", env={"PYHCCL_ALGO": spec})
    assert_all_pass(results, "suite with unknown PYHCCL_ALGO entries")
    for _, out in results:
        assert out.count(f"PYHCCL_ALGO={spec}") == 1, out
        for entry in spec.split(","):
            assert entry in out, out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("nranks", [2, 4])
def test_timing_mode(exe, tmp_path, nranks):
    """The timing mode runs and checks its result (numbers are not asserted: shared machine)."""
    results = run_ranks(exe, tmp_path, nranks, "perf", 4 << 20, 5, "device")
    assert_all_pass(results, "perf")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("what,env", [
    ("crossed", {}),
    ("crossed", {"PYHCCL_INLINE_US": "20000"}),  # long waits on the calling thread
    ("late", {}),
    ("done", {"PYHCCL_INLINE_US": "1000000"}),
])
def test_small_ops_on_the_calling_thread(exe, tmp_path, what, env):
    """Small ops may run inline when all peers are present: crossed communicators do not
    deadlock, a late peer does not hold the caller, and an inline op is done on return."""
    assert_all_pass(run_ranks(exe, tmp_path, 3, "inline", what, env=env, timeout=150), f"inline {what}")


@pytest.mark.timeout(120)
def test_bad_variable_warns_once_per_process(exe, tmp_path):
    """PYHCCL_INLINE_US is read for every communicator; a bad value warns once per process,
    not once per communicator (the "crossed" mode builds two)."""
    results = run_ranks(exe, tmp_path, 2, "inline", "crossed", env={"PYHCCL_INLINE_US": "soon"}, timeout=100)
    assert_all_pass(results, "inline crossed with a bad PYHCCL_INLINE_US")
    for _, out in results:
        assert out.count("ignoring PYHCCL_INLINE_US=soon") == 1, out
        assert "[WARNING] PYHCCL(" in out, out  # through the logger, not a bare fprintf
    # ASCEND_GLOBAL_LOG_LEVEL=4 (CANN's "null") silences it with every other diagnostic.
    quiet = run_ranks(exe, tmp_path, 2, "inline", "crossed",
                      env={"PYHCCL_INLINE_US": "soon", "ASCEND_GLOBAL_LOG_LEVEL": "4"}, timeout=100)
    assert_all_pass(quiet, "inline crossed with a bad PYHCCL_INLINE_US, logging off")
    for _, out in quiet:
        assert "ignoring PYHCCL_INLINE_US" not in out, out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("what,count", [("ring", 1 << 18), ("ring", 1 << 20), ("group", 1 << 20),
                                        ("late", 1 << 20)])
def test_ring_of_blocking_sends(exe, tmp_path, what, count):
    """Each rank sends to the next, then receives (1 MiB and 4 MiB, more than the channel):
    without a group it is a deadlock, which every rank reports within seconds (not after
    HCCL_EXEC_TIMEOUT=60) saying to use a group; inside a group it delivers; a receiver 1 s
    late, with the others blocked in their sends, is no deadlock."""
    t0 = time.monotonic()
    results = run_ranks(exe, tmp_path, 3, "p2pring", what, count, "host", timeout=60)
    assert_all_pass(results, f"p2pring {what} {count}")
    if what == "ring":
        assert time.monotonic() - t0 < 20
        assert any("deadlock: ranks " in out for _, out in results), results


@pytest.mark.timeout(120)
@pytest.mark.parametrize("what,count", [("opposite", 8), ("opposite", 1 << 18), ("same", 1 << 18),
                                        ("off", 1 << 18)])
def test_communicators_in_opposite_orders(exe, tmp_path, what, count):
    """Rank 0 enqueues an AllReduce on communicator a then one on b, rank 1 b then a, on one
    stream, and synchronizes: a deadlock, which both report within seconds (not after
    HCCL_EXEC_TIMEOUT=60) naming both communicators; with PYHCCL_ORDER_CHECK=0 it times out
    (HCCL_EXEC_TIMEOUT=2), naming the likely cause; the same order works."""
    env = {"PYHCCL_ORDER_CHECK": "0", "HCCL_EXEC_TIMEOUT": "2"} if what == "off" else None
    results = run_ranks(exe, tmp_path, 2, "order", what, count, "host", env=env, timeout=60)
    assert_all_pass(results, f"order {what} {count}")


@pytest.mark.timeout(120)
def test_ring_of_blocking_sends_across_hosts(exe, tmp_path):
    """The same ring between hosts (where peers' states cannot be seen; one socket, 64 MiB
    messages): it times out (HCCL_EXEC_TIMEOUT=2) with a message that says to use a group."""
    results = run_ranks(exe, tmp_path, 2, "p2pring", "timeout", 16 << 20, "host",
                        env={"HCCL_EXEC_TIMEOUT": "2", "PYHCCL_SOCKETS_PER_PEER": "1"},
                        rank_env=lambda r: {"PYHCCL_HOST_TAG": f"h{r}"}, timeout=60)
    assert_all_pass(results, "p2pring across hosts")
