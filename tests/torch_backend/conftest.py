"""Fixtures of the torch backend suite, run under torchrun or an MPI launcher.

    .venv-torch/bin/torchrun --nproc-per-node 2 -m pytest -c tests/torch_backend/pytest.ini tests/torch_backend
    .venv-torch/bin/mpiexec -n 2 .venv-torch/bin/python -m pytest -c tests/torch_backend/pytest.ini tests/torch_backend

(`make test-torch` runs both at 1, 2 and 4 ranks.) Every rank runs the same
tests in the same order on one default group "pyhccl" made by
pyhccl.torch.init_process_group_from_env(). After each test the ranks agree
on its verdict over a Gloo group of their own (never over the backend under
test), so a failure on one rank fails the test on all; a rank whose peers
never arrive exits, which makes torchrun and mpiexec end the job.

The suite needs torch: without it (the default .venv) nothing here is
collected. It also stays out of the MPI suite's session (tests/conftest.py
sets up MPI for its own tests); run it with -c tests/torch_backend/pytest.ini.
"""

import datetime
import faulthandler
import os
import signal
import sys

import pytest
from quiet_output import QuietFile

try:
    import torch
    import torch.distributed as dist
except ImportError:         # the default venv: the torch suite is not collected
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_CONFTEST = os.path.join(os.path.dirname(HERE), "conftest.py")

# Bound every wait of the host runtime below pytest's own timeout.
os.environ.setdefault("HCCL_CONNECT_TIMEOUT", "60")
os.environ.setdefault("HCCL_EXEC_TIMEOUT", "60")

# `kill -USR1 <pid>` prints every thread's stack (a hung rank explains itself).
faulthandler.register(signal.SIGUSR1, all_threads=True)

VERDICT_TIMEOUT = datetime.timedelta(seconds=150)
_state = {"rank": 0, "size": 1, "verdict": None}


def pytest_ignore_collect(collection_path, config):
    if collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        if torch is None:
            return True
        # Inside the MPI suite's session (its conftest is loaded): not ours to run.
        if config.pluginmanager.get_plugin(TOP_CONFTEST) is not None:
            return True
    return None


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: training checks, run at one rank count only "
                                       "(2 ranks, or where PYHCCL_TORCH_HEAVY=1)")
    config.addinivalue_line("markers", "solo: starts jobs of its own; runs in a 1-rank "
                                       "session only")
    config.addinivalue_line("markers", "ranks(n): needs a world of at least n ranks")
    # Only rank 0 reports (after the terminal reporter exists: trylast).
    rank = int(os.environ.get("RANK", os.environ.get("PMI_RANK",
               os.environ.get("OMPI_COMM_WORLD_RANK", "0"))))
    if rank != 0:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            from _pytest._io import TerminalWriter
            reporter._tw = TerminalWriter(QuietFile(rank))


def pytest_collection_modifyitems(config, items):
    size = int(os.environ.get("WORLD_SIZE", os.environ.get("PMI_SIZE",
               os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))))
    heavy = os.environ.get("PYHCCL_TORCH_HEAVY")
    for item in items:
        if item.get_closest_marker("heavy") and not (heavy == "1" or (heavy is None and
                                                                       size == 2)):
            item.add_marker(pytest.mark.skip(reason="heavy: runs at 2 ranks"))
        if item.get_closest_marker("solo") and size != 1:
            item.add_marker(pytest.mark.skip(reason="solo: runs in the 1-rank session"))
        m = item.get_closest_marker("ranks")
        if m is not None and size < m.args[0]:
            item.add_marker(pytest.mark.skip(reason=f"needs {m.args[0]} ranks"))


@pytest.fixture(scope="session", autouse=True)
def world():
    """The default group "pyhccl" over every rank, and the Gloo group verdicts travel on."""
    import pyhccl.torch as ptorch
    ptorch.init_process_group_from_env(timeout=datetime.timedelta(seconds=60))
    _state["rank"], _state["size"] = dist.get_rank(), dist.get_world_size()
    _state["verdict"] = dist.new_group(backend="gloo", timeout=VERDICT_TIMEOUT)
    yield dist.group.WORLD
    _state["verdict"] = None
    dist.destroy_process_group()


@pytest.fixture
def rank():
    return dist.get_rank()


@pytest.fixture
def size():
    return dist.get_world_size()


_FAILED = pytest.StashKey[list]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        item.stash.setdefault(_FAILED, []).append(f"({report.when}) {report.longreprtext}")
    group = _state["verdict"]
    if call.when != "teardown" or group is None or _state["size"] == 1:
        return
    mine = item.stash.get(_FAILED, [])
    texts = [None] * _state["size"]
    try:
        dist.all_gather_object(texts, mine, group=group)
    except Exception as e:     # a peer is gone or stuck: end this rank, the launcher ends the job
        sys.stderr.write(f"\n[rank {_state['rank']}] {item.nodeid}: the other ranks did not "
                         f"agree on the verdict ({e}); exiting.\n")
        sys.stderr.flush()
        os._exit(1)
    bad = [r for r, t in enumerate(texts) if t]
    if not bad or mine:
        if bad and _state["rank"] == 0:
            others = [f"---- rank {r} {x}" for r in bad if r != 0 for x in texts[r]]
            if others:
                report.longrepr = f"{report.longreprtext}\n" + "\n".join(others)
        return
    report.outcome = "failed"
    shown = [f"---- rank {r} {x}" for r in bad for x in texts[r]]
    report.longrepr = f"failed on ranks {bad}:\n" + "\n".join(shown)

