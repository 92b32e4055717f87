"""The acltdt communicator API (include/acl/acl_tdt.h) and ranks started by hand, no MPI.

Each rank is a plain process started from here, as the article's reader starts one per
terminal: examples/seed's program (the article's flow, built with the article's link
line) at 1, 2 and 4 ranks and twice in a row; tests/c/tdt_check.c for every acltdt
collective, the argument errors and the rendezvous (PyhcclRendezvousOpen) from plain
HCCL; ranks started seconds apart in any order; two groups side by side; one group
used by two jobs at once; a run after a crashed one; a missing rank; two processes
claiming one rank; world sizes that differ; MASTER_ADDR/MASTER_PORT on one host. The
same across simulated hosts is in tests/multihost/test_multihost_launch.py.

Under mpiexec only the first rank runs these (they start their own processes).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import OUTER, ROOT, first_rank_only, scaled

LIB = ROOT / "build" / "lib"
INCLUDE = ROOT / "include"
CHECK_SRC = ROOT / "tests" / "c" / "tdt_check.c"
SEED_SRC = ROOT / "examples" / "seed" / "aigc_hccl_allreduce_example.cpp"



pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                       reason="gcc/g++ not found"),
    first_rank_only,
]


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(OUTER)}
    env.update(HCCL_CONNECT_TIMEOUT="30", HCCL_EXEC_TIMEOUT="30")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def group_name(tag):
    """Unique per test run: other runs of this suite may share the machine."""
    return f"t{os.getpid()}-{tag}-{time.monotonic_ns() % 10**9}"


@pytest.fixture(scope="module")
def libs():
    build = subprocess.run(["make", "-C", str(ROOT / "csrc"), "-j2"], capture_output=True,
                           text=True, timeout=900)
    assert build.returncode == 0, f"make -C csrc failed:\n{build.stdout}\n{build.stderr}"
    for name in ("libacl_tdt.so", "libacl_mdl.so", "libacl_rt.so"):
        assert (LIB / name).exists(), name
    return LIB


@pytest.fixture(scope="module")
def check(libs, tmp_path_factory):
    """tests/c/tdt_check.c as C99, -Werror, linked with -lacl_tdt -lacl_rt -lhccl."""
    out = tmp_path_factory.mktemp("tdt") / "tdt_check"
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}", str(CHECK_SRC),
           f"-L{libs}", "-lacl_tdt", "-lacl_rt", "-lhccl", f"-Wl,-rpath,{libs}", "-o", str(out)]
    cc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, f"compile failed:\n{cc.stderr}"
    return out


@pytest.fixture(scope="module")
def seed(libs, tmp_path_factory):
    """examples/seed's program, built with the article's line (no -lhccl, no -lascendcl)."""
    if not SEED_SRC.exists():
        pytest.skip("examples/seed/aigc_hccl_allreduce_example.cpp is not in this checkout")
    out = tmp_path_factory.mktemp("seed") / "aigc_hccl_allreduce_example"
    cmd = ["g++", "-o", str(out), str(SEED_SRC), f"-I{INCLUDE}", f"-L{libs}", "-lacl_tdt",
           "-lacl_rt", "-lacl_mdl", "-std=c++11", f"-Wl,-rpath,{libs}"]
    cc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, f"the article's build line failed:\n{cc.stderr}"
    return out


def start(argv, env=None):
    return subprocess.Popen([str(a) for a in argv], env=env or clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def finish(procs, timeout=90):
    """[(returncode, output)] of every process; kills them all on timeout and fails."""
    deadline = time.monotonic() + timeout
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(0.1, deadline - time.monotonic()))[0])
    except subprocess.TimeoutExpired:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        outs = [p.communicate()[0] for p in procs]
        pytest.fail("ranks still running:\n" + "\n".join(f"--- {o}" for o in outs))
    return [(p.returncode, o) for p, o in zip(procs, outs)]


def run_group(check, ranks, world, group, mode="create", env=None, gap=0.0, hold_ms=0):
    procs = []
    for r in ranks:
        procs.append(start([check, r, world, group, mode, hold_ms], env))
        if gap:
            time.sleep(gap)
    return finish(procs)


def report(results):
    return "\n".join(f"--- exit {rc}\n{out}" for rc, out in results)


def expected(world):
    base = sum(r * 0.1 for r in range(world))
    return [base + i * world for i in range(5)]


# -- the article's flow ------------------------------------------------------------------------
@pytest.mark.timeout(180)
@pytest.mark.parametrize("world", [1, 2, 4])
def test_article_flow(seed, world):
    """Every hand-started rank prints the article's numbers (0.6 4.6 8.6 12.6 16.6 at 4), and
    a second run right after the first works (nothing stale)."""
    # Its own group name (the program's optional third argument): a `make seed-demo` or
    # another run of this suite may use the article's at the same time.
    group = group_name("seed")
    for attempt in range(2 if world == 4 else 1):
        results = finish([start([seed, r, world, group]) for r in range(world)])
        for rank, (rc, out) in enumerate(results):
            assert rc == 0, f"run {attempt + 1}:\n{report(results)}"
            m = re.search(rf"Rank {rank}: Global gradients \(first 5 elements\): ([-\d. e+]+)", out)
            assert m, out
            got = [float(x) for x in m.group(1).split()]
            assert got == pytest.approx(expected(world), abs=1e-4), out
            if world == 4:
                assert m.group(1).split() == ["0.6", "4.6", "8.6", "12.6", "16.6"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("world", [1, 3, 4])
def test_every_collective_and_argument_error(check, world):
    """AllReduce (the article's, and MAX on the communicator's stream), Broadcast,
    AllGather, ReduceScatter, the getters, and each argument error with its message."""
    results = run_group(check, range(world), world, group_name("flow"), "flow")
    for rank, (rc, out) in enumerate(results):
        assert rc == 0 and f"OK rank {rank}" in out, report(results)
        assert "not a multiple of the element size" in out
    assert all(f"RESULT rank {r}:" in out for r, (_, out) in enumerate(results))


@pytest.mark.timeout(120)
def test_rendezvous_for_plain_hccl(check):
    """PyhcclRendezvousOpen + HcclCommInitRootInfo: the same mechanism, from HCCL."""
    results = run_group(check, range(3), 3, group_name("rdv"), "rdv")
    for rank, (rc, out) in enumerate(results):
        assert rc == 0 and f"RESULT rank {rank}: 6" in out, report(results)


# -- the header ------------------------------------------------------------------------------
TUNNEL_NAMES = """
/* Names of CANN's own tensor data tunnel API (its acl/acl_tdt.h), declared as it does:
   a program may use both, so none of them may clash with the communicator API. */
typedef struct acltdtChannelHandle acltdtChannelHandle;
typedef struct acltdtDataItem acltdtDataItem;
typedef struct acltdtDataset acltdtDataset;
typedef enum acltdtTensorType {
    ACL_TENSOR_DATA_UNDEFINED = -1, ACL_TENSOR_DATA_TENSOR, ACL_TENSOR_DATA_END_OF_SEQUENCE,
    ACL_TENSOR_DATA_ABNORMAL, ACL_TENSOR_DATA_SLICE_TENSOR, ACL_TENSOR_DATA_END_TENSOR
} acltdtTensorType;
acltdtChannelHandle *acltdtCreateChannel(uint32_t deviceId, const char *name);
aclError acltdtDestroyChannel(acltdtChannelHandle *handle);
aclError acltdtStopChannel(acltdtChannelHandle *handle);
aclError acltdtSendTensor(const acltdtChannelHandle *handle, const acltdtDataset *dataset,
                          int32_t timeout);
aclError acltdtReceiveTensor(const acltdtChannelHandle *handle, acltdtDataset *dataset,
                             int32_t timeout);
acltdtDataset *acltdtCreateDataset(void);
aclError acltdtDestroyDataset(acltdtDataset *dataset);
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("lang", ["c99", "c++11"])
def test_header_compiles_beside_cann_tunnel_names(tmp_path, lang):
    """acl/acl_tdt.h compiles alone and beside CANN's tunnel declarations, pedantic, as C99
    and C++11, and says that it is an extension."""
    src = tmp_path / ("t.c" if lang == "c99" else "t.cc")
    src.write_text('#include "acl/acl_tdt.h"\n#include <stdint.h>\n' + TUNNEL_NAMES +
                   "int main(void) { acltdtComm c = 0; (void)c; return ACL_TDT_COMM_REDUCE_SUM; }\n")
    cc = "gcc" if lang == "c99" else "g++"
    proc = subprocess.run([cc, f"-std={lang}", "-Wall", "-Wextra", "-Werror", "-pedantic",
                           f"-I{INCLUDE}", "-fsyntax-only", str(src)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = (INCLUDE / "acl" / "acl_tdt.h").read_text()
    assert "CANN has no such functions" in text


# -- ranks started by hand ------------------------------------------------------------------
@pytest.mark.timeout(120)
def test_ranks_started_seconds_apart_in_any_order(check):
    results = run_group(check, [3, 1, 0, 2], 4, group_name("order"), "create", gap=1.0)
    assert all(rc == 0 for rc, _ in results), report(results)


@pytest.mark.timeout(120)
def test_two_groups_side_by_side(check):
    a, b = group_name("a"), group_name("b")
    procs = [start([check, r, 2, g, "flow"]) for r in range(2) for g in (a, b)]
    results = finish(procs)
    assert all(rc == 0 for rc, _ in results), report(results)


@pytest.mark.timeout(120)
def test_one_group_two_jobs_at_once(check):
    """A second job with a group in use gets a clear error on every rank and the first job
    is unharmed; once the first has ended, the name works again."""
    group = group_name("busy")
    first = [start([check, r, 2, group, "hold", 4000]) for r in range(2)]
    deadline = time.monotonic() + 60
    seen = ""
    while seen.count("CREATED") < 2 and time.monotonic() < deadline:
        # the ranks print CREATED before holding: read it line by line
        for p in first:
            line = p.stdout.readline()
            seen += line
    assert seen.count("CREATED") == 2, seen
    second = run_group(check, range(2), 2, group)
    for rank, (rc, out) in enumerate(second):
        assert rc == 3 and f"group '{group}'" in out and "is in use" in out, report(second)
        assert "another job uses the same group name" in out
    results = finish(first)
    assert all(rc == 0 for rc, _ in results), report(results)
    again = run_group(check, range(2), 2, group)
    assert all(rc == 0 for rc, _ in again), report(again)


@pytest.mark.timeout(120)
def test_run_after_a_crashed_run(check):
    """Rank 0 killed while it waits for rank 1: nothing it leaves blocks the next run."""
    group = group_name("crash")
    p = start([check, 0, 2, group, "create"])
    time.sleep(1.0)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate()
    results = run_group(check, range(2), 2, group)
    assert all(rc == 0 for rc, _ in results), report(results)


@pytest.mark.timeout(120)
def test_missing_rank_times_out_naming_it(check):
    env = clean_env(HCCL_CONNECT_TIMEOUT=3)
    t0 = time.monotonic()
    results = run_group(check, [0, 2], 3, group_name("missing"), env=env)
    assert time.monotonic() - t0 < scaled(60)
    for rc, out in results:
        assert rc == 3 and "missing: rank 1" in out, report(results)


@pytest.mark.timeout(120)
def test_missing_rank_0_times_out_naming_it(check):
    results = run_group(check, [1], 2, group_name("norank0"), env=clean_env(HCCL_CONNECT_TIMEOUT=2))
    rc, out = results[0]
    assert rc == 3 and "waiting for rank 0 of the group" in out and "HCCL_CONNECT_TIMEOUT" in out, out


@pytest.mark.timeout(120)
def test_garbage_and_silent_connections_do_not_stop_the_group(check):
    """Rank 0 drops a connection that sends garbage and outlives one that says nothing."""
    group = group_name("junk")
    name = f"\0pyhccl-group/{os.getuid()}/{group}"
    p0 = start([check, 0, 2, group, "create"])
    silent = socket.socket(socket.AF_UNIX)
    deadline = time.monotonic() + 30
    while True:
        try:
            silent.connect(name)
            break
        except (ConnectionRefusedError, FileNotFoundError):
            assert time.monotonic() < deadline and p0.poll() is None, "rank 0 never opened the group"
            time.sleep(0.05)
    with socket.socket(socket.AF_UNIX) as junk:
        junk.connect(name)
        junk.sendall(b"GET / HTTP/1.0\r\n\r\n" * 4)
        junk.settimeout(10)
        try:  # closed without an answer (reset: it left our bytes unread)
            assert junk.recv(100) == b""
        except ConnectionResetError:
            pass
        results = finish([p0, start([check, 1, 2, group, "create"])])
    silent.close()
    assert all(rc == 0 for rc, _ in results), report(results)


# -- misuse --------------------------------------------------------------------------------
@pytest.mark.timeout(60)
@pytest.mark.parametrize("rank,world,group,word", [
    (4, 4, "ok", "rankId (4) must be in [0, worldSize)"),
    (-1, 4, "ok", "rankId (-1)"),
    (0, 0, "ok", "worldSize (0) must be between 1 and 65536"),
    (0, 2, "", "group must be a name of 1 to 127 bytes"),
    (0, 2, "x" * 128, "group must be a name of 1 to 127 bytes"),
])
def test_bad_arguments(check, rank, world, group, word):
    (rc, out), = run_group(check, [rank], world, group)
    assert rc == 3 and "CREATE_FAIL 100000 acltdtCreateComm" in out and word in out, out


@pytest.mark.timeout(120)
def test_two_processes_claim_one_rank(check):
    """Every rank of the job fails (never a communicator with the wrong process in it); the
    second claimant's message names both processes."""
    results = run_group(check, [0, 1, 1], 3, group_name("dup"), gap=0.3,
                        env=clean_env(HCCL_CONNECT_TIMEOUT=10))
    for rc, out in results:
        assert rc == 3 and "rank 1 joined twice" in out, report(results)
    assert "claimed by two processes" in results[2][1], report(results)


@pytest.mark.timeout(120)
def test_world_sizes_differ(check):
    group = group_name("world")
    procs = [start([check, 0, 3, group, "create"])]
    time.sleep(0.3)
    procs += [start([check, 1, 2, group, "create"]), start([check, 2, 3, group, "create"])]
    results = finish(procs)
    for rc, out in results:
        assert rc == 3 and "nRanks mismatch" in out, report(results)


# -- MASTER_ADDR / MASTER_PORT ----------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(120)
def test_master_addr_on_one_host(check):
    env = clean_env(MASTER_ADDR="127.0.0.1", MASTER_PORT=free_port())
    results = run_group(check, range(3), 3, group_name("master"), "flow", env=env)
    assert all(rc == 0 for rc, _ in results), report(results)


@pytest.mark.timeout(60)
def test_master_addr_without_port(check):
    env = clean_env(MASTER_ADDR="127.0.0.1")
    (rc, out), = run_group(check, [0], 2, group_name("noport"), env=env)
    assert rc == 3 and "MASTER_ADDR is set but MASTER_PORT is not" in out, out


@pytest.mark.timeout(60)
def test_master_port_taken_by_another_program(check):
    """Rank 0 says that the port is taken by something that is not a pyhccl group."""
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        env = clean_env(MASTER_ADDR="127.0.0.1", MASTER_PORT=s.getsockname()[1])
        (rc, out), = run_group(check, [0], 2, group_name("taken"), env=env)
    assert rc == 3 and "did not answer as a pyhccl group" in out, out


# -- other users ---------------------------------------------------------------------------
SETPRIV = shutil.which("setpriv")
as_other_user = pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None or not os.path.exists("/usr/bin/python3"),
                                   reason="needs root, setpriv and /usr/bin/python3 to act as another user")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@as_other_user
@pytest.mark.timeout(60)
def test_group_name_squatted_by_another_user(check):
    """Another user's process bound this user's name for the group first: neither rank 0
    nor the others trust it; both say so at once."""
    group = group_name("squat")
    squatter = start(NOBODY + ["/usr/bin/python3", "-c",
                               "import socket, sys, time; s = socket.socket(socket.AF_UNIX); "
                               "s.bind(b'\\0' + sys.argv[1].encode()); s.listen(); "
                               "print('ready', flush=True); time.sleep(60)",
                               f"pyhccl-group/{os.getuid()}/{group}"])
    try:
        assert squatter.stdout.readline().strip() == "ready"
        results = run_group(check, [0, 1], 2, group, env=clean_env(HCCL_CONNECT_TIMEOUT=5))
    finally:
        os.killpg(squatter.pid, signal.SIGKILL)
        squatter.communicate()
    for rc, out in results:
        assert rc == 3 and "held by another user's process" in out and "uid 65534" in out, report(results)


@as_other_user
@pytest.mark.timeout(60)
def test_ranks_of_another_user_do_not_meet(check, tmp_path_factory):
    """The group is per user: rank 1 run as another user waits for a rank 0 of its own."""
    shared = Path(tempfile.mkdtemp(prefix="tdt-other-user-"))
    try:
        shared.chmod(0o755)
        exe = shared / "tdt_check"
        shutil.copy2(check, exe)
        group = group_name("user")
        env = clean_env(HCCL_CONNECT_TIMEOUT=2)
        procs = [start([check, 0, 2, group, "create"], env),
                 start(NOBODY + [str(exe), "1", "2", group, "create", "0"], env)]
        results = finish(procs)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert results[0][0] == 3 and "missing: rank 1" in results[0][1], report(results)
    assert results[1][0] == 3 and "user 65534" in results[1][1], report(results)
