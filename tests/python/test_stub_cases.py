"""What the stub (pyhccl/_core.pyi) promises, checked at runtime: the calls of
tests/mypy_cases/collectives.py, which mypy --strict accepts, run; and every collective
returns the very output buffer it was given, as the stub's type variable says."""

import importlib.util

import pytest

import pyhccl
from conftest import ROOT, assert_all

pytestmark = pytest.mark.mpi

CASES = str(ROOT / "tests" / "mypy_cases" / "collectives.py")


@pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="host buffers need the host runtime")
def test_good_cases_run(world):
    pytest.importorskip("typing_extensions")       # assert_type, a no-op at runtime
    spec = importlib.util.spec_from_file_location("mypy_good_cases", CASES)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    cases.check_all(world)


def test_collectives_return_their_output_buffer(world):
    n, r = world.size, world.rank
    x, y = pyhccl.ones(4 * n, "float32"), pyhccl.empty(4 * n, "float32")
    blk, inbox = pyhccl.ones(4, "float32"), pyhccl.empty(4, "float32")
    counts = [4] * n
    got = {
        "all_reduce in place": world.all_reduce(x) is x,
        "all_reduce": world.all_reduce(x, y) is y,
        "broadcast": world.broadcast(x) is x,
        "all_gather": world.all_gather(blk, y) is y,
        "reduce_scatter": world.reduce_scatter(x, inbox) is inbox,
        "reduce in place": world.reduce(x) is x,
        "reduce": world.reduce(x, y) is y,
        "scatter": world.scatter(x if r == 0 else None, inbox) is inbox,
        "all_to_all": world.all_to_all(x, y) is y,
        "all_gather_v": world.all_gather_v(blk, y, counts) is y,
        "reduce_scatter_v": world.reduce_scatter_v(x, inbox, counts) is inbox,
        "all_to_all_v": world.all_to_all_v(x, y, counts, counts) is y,
        "all_to_all_vc": world.all_to_all_vc(x, y, [counts] * n) is y,
    }
    if n > 1:
        with pyhccl.group():
            got["send"] = world.send(blk, (r + 1) % n) is blk
            got["recv"] = world.recv(inbox, (r - 1) % n) is inbox
    pyhccl.current_stream().synchronize()
    wrong = [name for name, same in got.items() if not same]
    assert_all(not wrong, f"returned another object than their output buffer: {wrong}")
