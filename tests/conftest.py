"""Shared fixtures for the pyhccl test suite, run under MPI.

    mpiexec -n 4 .venv/bin/python -m pytest

Every rank runs the same tests in the same order. After each test the ranks
combine their verdicts, so a test that fails on one rank fails on all of them
and no rank walks into the next collective alone; a failing run aborts the
MPI job at exit instead of leaving ranks hanging.

Only rank 0 reports (the other ranks' terminal output is discarded, except a
timeout's stack dump); a failure on any rank is shown in full in rank 0's
report. Tests marked `once` (static checks) run only in a one-process run.
"""

import collections
import os
import sys
import time
from pathlib import Path

# Bound every wait of the host runtime below pytest's own timeout.
os.environ.setdefault("HCCL_CONNECT_TIMEOUT", "60")
os.environ.setdefault("HCCL_EXEC_TIMEOUT", "60")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mpi4py import MPI  # noqa: E402

import pyhccl  # noqa: E402
from pyhccl.mpi import comm_from_mpi, local_rank  # noqa: E402
from quiet_output import QuietFile  # noqa: E402

# The repository's root: tests in every folder below tests/ find the sources from it.
ROOT = Path(__file__).resolve().parents[1]

WORLD = MPI.COMM_WORLD
RANK = WORLD.Get_rank()
SIZE = WORLD.Get_size()

# Variables of an enclosing job (MPI, Slurm, torchrun) and of the runtime's settings,
# which must not reach the processes a test starts by hand.
OUTER = ("PMI_", "PMIX_", "OMPI_", "MPI_LOCALRANKID", "HYDRA_", "SLURM_", "MASTER_ADDR",
         "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_", "HCCL_", "PYHCCL_")

# For tests that start processes of their own: only the first rank of a run does, and
# `make test`, which runs pytest at 1, 2 and 4 ranks (PYHCCL_TEST_SUMMARY set), only in its
# 1-rank pass: their jobs do not depend on the size of the run around them.
OWN_JOBS_HERE = RANK == 0 and (SIZE == 1 or "PYHCCL_TEST_SUMMARY" not in os.environ)
first_rank_only = pytest.mark.skipif(not OWN_JOBS_HERE, reason="starts processes of its own: "
                                     "the first rank, in make test's 1-rank pass")

# One device per rank on the node, before anything else touches the runtime.
DEVICE = local_rank(WORLD) % pyhccl.device_count()
pyhccl.set_device(DEVICE)

# All element types an array can have, with bfloat16 last.
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "bfloat16"]
OPS = ["sum", "prod", "max", "min"]

Pair = collections.namedtuple("Pair", "hccl mpi")


def _slowdown():
    """How much slower than an idle machine this one runs now: PYHCCL_TEST_SLOWDOWN if set,
    else the load per core (at least 1). Time bounds in tests are multiplied by it."""
    try:
        return max(1.0, float(os.environ["PYHCCL_TEST_SLOWDOWN"]))
    except (KeyError, ValueError):
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


SLOWDOWN = _slowdown()


def scaled(seconds):
    """A generous time bound: `seconds` on an idle machine, longer on a loaded one."""
    return seconds * SLOWDOWN


def all_true(cond):
    """Return True on every rank if `cond` holds on every rank (collective)."""
    return WORLD.allreduce(bool(cond), op=MPI.LAND)


def assert_all(cond, message=""):
    """Assert `cond` on every rank at once (collective), naming the failing ranks."""
    flags = WORLD.allgather(bool(cond))
    assert all(flags), f"{message} (failed on ranks {[i for i, f in enumerate(flags) if not f]})"


def same_on_all(mpi_comm, array):
    """Return True if `array`'s bytes are identical on every rank of `mpi_comm`."""
    data = np.ascontiguousarray(array).tobytes()
    return all(d == data for d in mpi_comm.allgather(data))


def sizes_for(nranks):
    """Element counts every collective is tested with: 0, 1, odd, not divisible, ~1 MiB."""
    return [0, 1, 7, nranks * 3 + 1, (1 << 20) // 4 + 3]


def comm_with_algo(algo):
    """A communicator over WORLD set up with PYHCCL_ALGO=algo; the caller's value is kept."""
    old = os.environ.get("PYHCCL_ALGO")
    os.environ["PYHCCL_ALGO"] = algo
    try:
        return comm_from_mpi(WORLD)
    finally:
        if old is None:
            del os.environ["PYHCCL_ALGO"]
        else:
            os.environ["PYHCCL_ALGO"] = old


@pytest.fixture(scope="session")
def world():
    """A pyhccl Comm over MPI.COMM_WORLD (one per session)."""
    comm = comm_from_mpi(WORLD)
    yield comm
    pyhccl.default_stream().synchronize()
    comm.destroy()


@pytest.fixture(scope="session")
def self_comm():
    """A 1-rank pyhccl Comm over MPI.COMM_SELF."""
    comm = comm_from_mpi(MPI.COMM_SELF)
    yield comm
    pyhccl.default_stream().synchronize()
    comm.destroy()


@pytest.fixture(params=["world", "self"])
def pair(request, world, self_comm):
    """(pyhccl Comm, matching mpi4py communicator), over the world and over one rank."""
    if request.param == "world":
        return Pair(world, WORLD)
    return Pair(self_comm, MPI.COMM_SELF)


@pytest.fixture
def stream():
    """A fresh stream on this rank's device, destroyed after the test."""
    s = pyhccl.Stream()
    yield s
    s.destroy()


def pytest_collection_modifyitems(config, items):
    # A hang inside a C call never returns to Python, so time out from a thread.
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(method="thread"))
        if SIZE > 1 and item.get_closest_marker("once") is not None:
            item.add_marker(pytest.mark.skip(reason="a static check: runs in a one-process "
                                                    "run only (make test runs it once)"))


# Verdicts travel on their own communicator, never mixed with a test's messages.
_VERDICT = WORLD.Dup()
# How long a rank waits for the others to agree on a verdict before it decides
# they are stuck in a collective it left (after an exception) and aborts the
# job. Longer than pytest's per-test timeout, which normally fires first.
VERDICT_TIMEOUT = 150.0
_FAILED = pytest.StashKey[bool]()
_TEXTS = pytest.StashKey[list]()       # this rank's failure reports of the test, in full


def _agree(failed, item, report):
    """Allgather this rank's verdict, aborting the job if the others never arrive."""
    send = np.array([failed], np.int8)
    flags = np.zeros(SIZE, np.int8)
    req = _VERDICT.Iallgather(send, flags)
    deadline = time.monotonic() + VERDICT_TIMEOUT
    while not req.Test():
        if time.monotonic() > deadline:
            sys.stderr.write(f"\n[rank {RANK}] {item.nodeid} ({report.when}): the other ranks "
                             "did not finish this test; aborting the MPI job.\n")
            sys.stderr.flush()
            WORLD.Abort(1)
        time.sleep(0.001)
    return flags


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        item.stash[_FAILED] = True
        item.stash.setdefault(_TEXTS, []).append(f"({report.when}) {report.longreprtext}")
    # Setup and teardown run on every rank for every test (the call does not
    # where a test is skipped on some ranks only): agree on the verdict there.
    # A setup failure anywhere fails the test everywhere before its call, and
    # a failure anywhere is reported by every rank at teardown.
    if SIZE == 1 or call.when == "call":
        return
    failed = item.stash.get(_FAILED, False)
    flags = _agree(failed, item, report)
    if not flags.any():
        return
    # Every rank knows someone failed, so every rank joins this exchange.
    texts = _VERDICT.gather(item.stash.get(_TEXTS, []) if failed else None, root=0)
    item.stash[_TEXTS] = []
    bad = [i for i, f in enumerate(flags) if f]
    if RANK == 0:
        # Rank 0's own failures are in its own reports already; add the others',
        # except those identical to one of rank 0's (a collective check fails alike).
        own = set(texts[0] or [])
        shown = [f"---- rank {r} {text}" for r in bad if r != 0 for text in texts[r]
                 if text not in own]
        if shown and not report.failed:
            report.outcome = "failed"
            report.longrepr = f"failed on {_ranks(len(bad))} {bad}:\n" + "\n".join(shown)
        elif shown:
            report.longrepr = f"{report.longreprtext}\n" + "\n".join(shown)
    elif not failed:
        report.outcome = "failed"
        report.longrepr = f"failed on {_ranks(len(bad))} {bad}"
    item.stash[_FAILED] = True


def _ranks(n):
    return "rank" if n == 1 else "ranks"

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.addinivalue_line("markers", "once: a static check, run in one-process runs only")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if SIZE > 1 and RANK != 0 and reporter is not None:
        from _pytest._io import TerminalWriter
        reporter._tw = TerminalWriter(QuietFile(RANK))


def pytest_report_header(config):
    version = " ".join(MPI.Get_library_version().splitlines()[0].split())
    return f"MPI: {version}, {SIZE} {_ranks(SIZE)}; pyhccl {pyhccl.__version__}"


def pytest_sessionstart(session):
    # pytest-mpi prints a long "MPI Information" section at the end of every
    # rank's run; pytest_report_header above says the same in one line.
    for plugin in session.config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "MPIPlugin" and hasattr(plugin, "_is_testing_mpi"):
            plugin._is_testing_mpi = False


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # `make test` collects one line per run for its closing verdict (tests/verdict.py).
    path = os.environ.get("PYHCCL_TEST_SUMMARY")
    if RANK != 0 or not path:
        return
    stats = terminalreporter.stats
    count = {k: len(stats.get(k, [])) for k in ("passed", "failed", "error", "skipped")}
    label = os.environ.get("PYHCCL_TEST_LABEL", f"{SIZE} {_ranks(SIZE)}")
    with open(path, "a") as f:
        f.write(f"{label}\t{count['passed']}\t{count['failed'] + count['error']}\t"
                f"{count['skipped']}\t{exitstatus}\n")


def pytest_sessionfinish(session, exitstatus):
    if exitstatus not in (0, 5) and SIZE > 1:
        import mpi4py.run
        mpi4py.run.set_abort_status(int(exitstatus))
