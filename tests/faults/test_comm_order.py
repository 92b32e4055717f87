"""Two communicators used in opposite orders (issue 19): rank 0 runs A's collective and then
B's, rank 1 B's and then A's. On one host every rank reports it within seconds, naming both
communicators, instead of waiting HCCL_EXEC_TIMEOUT; the same order, a late rank, and opposite
orders on separate streams (which run at once) still work."""
import re
import time

import numpy as np
import pytest
from mpi4py import MPI

import pyhccl
from conftest import RANK, SIZE, WORLD, assert_all, scaled
from pyhccl.mpi import comm_from_mpi

pytestmark = [pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="needs the host runtime"),
              pytest.mark.mpi(min_size=2)]

PAIRS = WORLD.Split(RANK // 2 if RANK // 2 * 2 + 1 < SIZE else MPI.UNDEFINED, RANK)


def two_comms(tag):
    """A ("<tag>-A") over this rank's pair, and B ("<tag>-B") a split of it (a dup); None for
    the odd rank out."""
    if PAIRS == MPI.COMM_NULL:
        return None, None
    a = comm_from_mpi(PAIRS, config={"name": f"{tag}-A"})
    b = a.split(0, config={"name": f"{tag}-B"})
    return a, b


def on_one_host(comm):
    t = comm.topology
    return WORLD.allreduce(comm is None or all(t.transports[p] == "shm"
                                               for p in range(comm.size) if p != comm.rank),
                           op=MPI.LAND)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("count", [8, 1 << 16])    # a board exchange, FIFO transfers
def test_opposite_orders_fail_fast_naming_both(count):
    a, b = two_comms(f"order{count}")
    try:
        if not on_one_host(a):
            pytest.skip("needs every rank on one host, over shared memory")
        error, took = None, 0.0
        if a is not None:
            x = pyhccl.full(count, 1, np.float32)
            t0 = time.monotonic()
            try:
                for c in ([a, b] if a.rank == 0 else [b, a]):
                    c.all_reduce(x, op=pyhccl.SUM)
                    pyhccl.default_stream().synchronize()
            except pyhccl.HcclError as e:
                error = str(e)
            took = time.monotonic() - t0
            mine, other = (a.name, b.name) if a.rank == 0 else (b.name, a.name)
            peer = 1 - a.rank
            # (A's numbers count the split's management call too)
            want = (rf"rank {peer} is blocked in communicator {other}'s collective #\d+ while "
                    rf"this rank waits in {mine}'s #\d+; use one order on every rank")
        assert_all(a is None or (error is not None and re.search(want, error)), f"error: {error!r}")
        assert_all(took < scaled(10), f"reported after {took:.1f} s")
    finally:
        for c in (b, a):
            if c is not None:
                c.destroy()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("late", [0.0, 1.5])
def test_same_order_works(late):
    """The same two communicators in one order on every rank, one rank late: no error."""
    a, b = two_comms("same")
    try:
        if a is not None:
            x = pyhccl.full(1 << 16, 1, np.float32)
            if a.rank == 1:
                time.sleep(late)
            for c in (a, b):
                c.all_reduce(x, op=pyhccl.SUM)
                pyhccl.default_stream().synchronize()
            assert (x.get() == 4).all()
    finally:
        for c in (b, a):
            if c is not None:
                c.destroy()


@pytest.mark.timeout(90)
def test_opposite_orders_on_two_streams_work():
    """Opposite orders on separate streams are no deadlock: both run at once."""
    a, b = two_comms("streams")
    streams = [pyhccl.Stream(), pyhccl.Stream()]
    try:
        if a is not None:
            xs = [pyhccl.full(1 << 16, 1, np.float32) for _ in range(2)]
            order = [0, 1] if a.rank == 0 else [1, 0]
            for i in order:
                [a, b][i].all_reduce(xs[i], op=pyhccl.SUM, stream=streams[i])
                time.sleep(0.5)     # the first waits, alone, before the second starts
            for s in streams:
                s.synchronize()
            assert all((x.get() == 2).all() for x in xs)
    finally:
        for s in streams:
            s.destroy()
        for c in (b, a):
            if c is not None:
                c.destroy()
