"""Small collectives on shared-memory boards (issue: small messages). Every rank writes its
part once and its peers read it in place; at sizes on both sides of the board's limit and with
boards turned off (PYHCCL_BOARD_BYTES=0) every collective gives exact results, and the flight
record names the algorithm that ran."""
import numpy as np
import pytest

import pyhccl
from conftest import RANK, SIZE, WORLD, assert_all
from pyhccl.mpi import comm_from_mpi

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="pyhccl's extensions need the host runtime")

BOARD = 16 << 10  # PYHCCL_BOARD_BYTES' default


def values(count, rank):
    """Small integers, exact in float32 whatever the order of a sum."""
    return (np.arange(count, dtype=np.float32) % 13) + rank


def run_all(comm, stream, count):
    """AllReduce, Reduce, Broadcast, AllGather, ReduceScatter and AlltoAll of `count` float32
    per rank (ReduceScatter, AlltoAll: per block), in place where the API allows it; wrong
    results, and the algorithms in order."""
    wrong = []
    want_sum = sum(values(count, r) for r in range(SIZE))
    x = pyhccl.asarray(values(count, RANK))
    comm.all_reduce(x, op=pyhccl.SUM, stream=stream)
    r = pyhccl.zeros(count, np.float32)
    comm.reduce(pyhccl.asarray(values(count, RANK)), r, op=pyhccl.SUM, root=SIZE - 1, stream=stream)
    b = pyhccl.asarray(values(count, RANK))
    comm.broadcast(b, root=SIZE - 1, stream=stream)
    g = pyhccl.zeros(count * SIZE, np.float32)
    comm.all_gather(pyhccl.asarray(values(count, RANK)), g, stream=stream)
    s = pyhccl.zeros(count, np.float32)
    comm.reduce_scatter(pyhccl.asarray(values(count * SIZE, RANK)), s, op=pyhccl.SUM, stream=stream)
    a = pyhccl.zeros(count * SIZE, np.float32)
    comm.all_to_all(pyhccl.asarray(values(count * SIZE, RANK) * (RANK + 1)), a, stream=stream)
    stream.synchronize()
    if not np.array_equal(x.get(), want_sum):
        wrong.append("all_reduce")
    if RANK == SIZE - 1 and not np.array_equal(r.get(), want_sum):
        wrong.append("reduce")
    if not np.array_equal(b.get(), values(count, SIZE - 1)):
        wrong.append("broadcast")
    if not np.array_equal(g.get(), np.concatenate([values(count, q) for q in range(SIZE)])):
        wrong.append("all_gather")
    blocks = sum(values(count * SIZE, q) for q in range(SIZE))
    if not np.array_equal(s.get(), blocks[RANK * count:(RANK + 1) * count]):
        wrong.append("reduce_scatter")
    sent = [values(count * SIZE, q) * (q + 1) for q in range(SIZE)]
    if not np.array_equal(a.get(), np.concatenate([sent[q][RANK * count:(RANK + 1) * count]
                                                   for q in range(SIZE)])):
        wrong.append("all_to_all")
    algos = [rec["algorithm"] for rec in comm.flight_record()[-6:]]
    return wrong, algos


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("board_bytes", [None, "0"], ids=["boards", "off"])
def test_small_collectives_on_boards(stream, monkeypatch, board_bytes):
    """Up to the limit (ReduceScatter's whole input counts) on boards, past it and with boards
    off on the other algorithms; exact either way, on every rank."""
    if board_bytes is not None:
        monkeypatch.setenv("PYHCCL_BOARD_BYTES", board_bytes)
    comm = comm_from_mpi(WORLD)
    try:
        for count in (1, 7, BOARD // 4 // SIZE, BOARD // 4, BOARD // 4 + 1):
            wrong, algos = run_all(comm, stream, count)
            assert_all(not wrong, f"count {count}: wrong results from {wrong}")
            fits = [count * 4 <= BOARD] * 4 + [count * 4 * SIZE <= BOARD] * 2
            want = ["board" if f and board_bytes is None else "other" for f in fits]
            got = ["board" if a == "board" else "other" for a in algos]
            assert_all(got == want, f"count {count}: algorithms {algos}, want {want}")
    finally:
        comm.destroy()


@pytest.mark.mpi(min_size=2)
def test_board_count_zero_and_barrier(stream):
    """Count 0 and Barrier are exchanges of nothing on the boards: they still compare what every
    rank called, and later collectives stay exact."""
    comm = comm_from_mpi(WORLD)
    try:
        comm.all_reduce(pyhccl.zeros(0, np.float32), op=pyhccl.SUM, stream=stream)
        comm.barrier(stream=stream)
        x = pyhccl.full(3, RANK + 1, np.float32)
        comm.all_reduce(x, op=pyhccl.MAX, stream=stream)
        stream.synchronize()
        assert_all(np.array_equal(x.get(), np.full(3, SIZE, np.float32)), f"max {x.get()}")
        algos = [rec["algorithm"] for rec in comm.flight_record()[-3:]]
        assert_all(algos[1:] == ["flat", "board"], f"algorithms {algos}")
    finally:
        comm.destroy()
