"""What the drivers of the multi-process C checks share (test_c_hccl.py, test_c_hccl_ext.py,
test_profiling.py): building libhccl and a check against it, starting ranks as plain
processes (no MPI: rank 0 hands the root info over in a file), and reading their verdicts
("rank R: PASS")."""
import os
import subprocess
import time

import pytest
from conftest import ROOT, SLOWDOWN
from csources import sources

LIB = ROOT / "build" / "lib"
CDIR = ROOT / "tests" / "c"


def build_libs():
    """libhccl and the runtime's libraries, freshly built (make -C csrc)."""
    build = subprocess.run(["make", "-C", str(ROOT / "csrc"), "-j2"], capture_output=True,
                           text=True, timeout=900)
    assert build.returncode == 0, f"make -C csrc failed:\n{build.stdout}\n{build.stderr}"
    return LIB


def compile_check(source, out, libs=("-lhccl", "-lascendcl")):
    """tests/c/`source` (and the files it is split into) as C99 with -Werror, linked against
    build/lib; returns `out`."""
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}",
           *map(str, sources(source)), f"-L{LIB}", *libs, f"-Wl,-rpath,{LIB}", "-lpthread", "-lm",
           "-o", str(out)]
    cc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, f"compile {source} failed:\n{cc.stderr}"
    return out


def rank_env(extra=None):
    """The ranks' environment: this one less PYHCCL_ settings, bounded waits, the slowdown
    that scales the checks' time bounds, then `extra` (a value None removes the variable)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYHCCL_")}
    env.setdefault("HCCL_CONNECT_TIMEOUT", "60")
    env.setdefault("HCCL_EXEC_TIMEOUT", "60")
    env["PYHCCL_TEST_SLOWDOWN"] = str(SLOWDOWN)
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def rootfile(tmp_path, tag):
    """A fresh path for rank 0's root info."""
    return tmp_path / f"root-{tag}-{time.monotonic_ns()}"


def run_ranks(argv_of, n, env=None, rank_env_of=None, timeout=120):
    """Start n processes (argv_of(r): rank r's command; rank_env_of(r): variables for rank r
    only) and return [(returncode, output)] in rank order; fail the test if they outlast
    `timeout` seconds, with every rank's output."""
    procs = [subprocess.Popen([str(a) for a in argv_of(r)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=rank_env({**(env or {}), **(rank_env_of(r) if rank_env_of else {})}))
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
        pytest.fail(f"{n} ranks of {argv_of(0)[:2]} timed out after {timeout} s:\n" +
                    "\n".join(f"--- rank {r}\n{o}" for r, o in enumerate(outs)))
    return results


def run_mode(exe, tmp_path, n, mode, *args, env=None, rank_env_of=None, timeout=120):
    """n ranks of a check started as `exe MODE RANK NRANKS ROOTFILE ARGS...` (rank_check.h);
    [(returncode, output)] in rank order."""
    root = rootfile(tmp_path, f"{mode}-{n}")
    return run_ranks(lambda r: [exe, mode, r, n, root, *args], n, env=env,
                     rank_env_of=rank_env_of, timeout=timeout)


def assert_all_pass(results, what):
    """Every rank exited 0 and printed "rank R: PASS"; else every rank's output."""
    report = "\n".join(f"--- rank {r} (exit {rc})\n{out}" for r, (rc, out) in enumerate(results))
    for r, (rc, out) in enumerate(results):
        assert rc == 0 and f"rank {r}: PASS" in out, f"{what}: rank {r} failed\n{report}"


def _shm_names():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("pyhccl-")}
    except FileNotFoundError:
        return set()


@pytest.fixture(autouse=True)
def no_shm_leftovers():
    """Every test of a module that imports this leaves /dev/shm as it found it."""
    before = _shm_names()
    yield
    left = _shm_names() - before
    if left:  # another job's segments come and go within moments; ours would stay
        time.sleep(2)
        left &= _shm_names()
    assert not left, f"left in /dev/shm: {sorted(left)}"
