"""Collectives: every dtype, op and size class, in and out of place, world and one-rank
communicators, DeviceArray and numpy buffers; exact expected values."""

import hashlib
import threading
import weakref

import numpy as np
import pytest

import pyhccl
from conftest import DTYPES, OPS, SIZE, WORLD, assert_all, comm_with_algo, sizes_for

pytestmark = pytest.mark.mpi

NP_OP = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


def values(dtype, op, rank, n):
    """Exact small values for rank `rank`, as float64 (reductions stay exact in every dtype)."""
    i = np.arange(n, dtype=np.int64)
    if op == "prod":
        v = np.where((i + rank) % 3 == 0, 2, 1)
    elif op in ("max", "min"):
        v = (i * 7 + rank * 3) % 11
        if not dtype.startswith("u"):
            v = v - 5
    else:
        v = i % 5 + 1 + rank
    return v.astype(np.float64)


def encode(v, dtype):
    """float64 values -> host array of `dtype` (bfloat16: uint16 bit patterns)."""
    if dtype == "bfloat16":
        return pyhccl.float_to_bfloat16(v)
    return v.astype(dtype)


def decode(a, dtype):
    """Host array (or DeviceArray) of `dtype` -> float64 values."""
    if isinstance(a, pyhccl.DeviceArray):
        a = a.get()
    a = np.asarray(a)
    if dtype == "bfloat16":
        return pyhccl.bfloat16_to_float(a.view(np.uint16)).astype(np.float64)
    return a.astype(np.float64)


def make(kind, host, dtype):
    """A buffer holding `host`: a DeviceArray or a numpy array (bfloat16 raw as uint16)."""
    if kind == "device":
        return pyhccl.asarray(host, dtype=dtype)
    return host.copy()


def empty(kind, n, dtype):
    if kind == "device":
        return pyhccl.empty(n, dtype)
    return np.empty(n, np.uint16 if dtype == "bfloat16" else dtype)


def dtype_kw(kind, dtype):
    """numpy has no bfloat16: raw uint16 host buffers say dtype= explicitly."""
    return {"dtype": pyhccl.BFLOAT16} if dtype == "bfloat16" and kind == "host" else {}


def digest(buf):
    data = buf.get() if isinstance(buf, pyhccl.DeviceArray) else np.asarray(buf)
    return hashlib.sha1(np.ascontiguousarray(data).tobytes()).hexdigest()


# Host buffers are device buffers only on the host runtime (a CANN build refuses them).
KINDS = ("device", "host") if pyhccl.HOST_RUNTIME else ("device",)


def sync():
    pyhccl.current_stream().synchronize()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_reduce(pair, dtype, op):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    errors = []
    for n in sizes_for(size):
        expect = NP_OP[op](np.stack([values(dtype, op, r, n) for r in range(size)]), axis=0)
        mine = encode(values(dtype, op, rank, n), dtype)
        for kind in KINDS:
            kw = dtype_kw(kind, dtype)
            send = make(kind, mine, dtype)
            recv = empty(kind, n, dtype)
            out = comm.all_reduce(send, recv, op, **kw)
            inplace = make(kind, mine, dtype)
            out2 = comm.all_reduce(inplace, op=op, **kw)
            sync()
            if out is not recv or out2 is not inplace:
                errors.append(f"n={n} {kind}: wrong return value")
            if not np.array_equal(decode(recv, dtype), expect):
                errors.append(f"n={n} {kind} out of place: wrong result")
            if not np.array_equal(decode(inplace, dtype), expect):
                errors.append(f"n={n} {kind} in place: wrong result")
            if not np.array_equal(decode(send, dtype), decode(mine, dtype)):
                errors.append(f"n={n} {kind}: sendbuf changed")
            if len(set(mpi.allgather(digest(recv)))) != 1:
                errors.append(f"n={n} {kind}: results differ between ranks")
    assert_all(not errors, errors[:4])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_all_reduce_bit_identical_inexact(pair, dtype):
    """Inexact float sums (random inputs) are bit-identical on every rank and run to run."""
    comm, mpi = pair
    rng = np.random.default_rng(1234 + comm.rank)
    n = 100003
    mine = encode(rng.standard_normal(n) * 100, dtype)
    results = []
    for _ in range(2):
        buf = make("device", mine, dtype)
        comm.all_reduce(buf, op="sum")
        sync()
        results.append(buf.get())
    data = [r.tobytes() for r in results]
    ok = data[0] == data[1] and len(set(mpi.allgather(hashlib.sha1(data[0]).digest()))) == 1
    assert_all(ok, "inexact all_reduce results differ between ranks or runs")


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_from_every_root(pair, dtype):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    errors = []
    for root in range(size):
        for n in sizes_for(size):
            expect = values(dtype, "sum", root, n)
            for kind in KINDS:
                buf = make(kind, encode(values(dtype, "sum", rank, n), dtype), dtype)
                out = comm.broadcast(buf, root, **dtype_kw(kind, dtype))
                sync()
                if out is not buf:
                    errors.append("wrong return value")
                if not np.array_equal(decode(buf, dtype), expect):
                    errors.append(f"root={root} n={n} {kind}: wrong result")
    assert_all(not errors, errors[:4])


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather(pair, dtype):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    errors = []
    for n in sizes_for(size):
        expect = np.concatenate([values(dtype, "sum", r, n) for r in range(size)])
        mine = encode(values(dtype, "sum", rank, n), dtype)
        for kind in KINDS:
            kw = dtype_kw(kind, dtype)
            recv = empty(kind, n * size, dtype)
            out = comm.all_gather(make(kind, mine, dtype), recv, **kw)
            # in place: sendbuf is this rank's block of recvbuf
            whole = make(kind, encode(np.zeros(n * size), dtype), dtype)
            whole[rank * n:(rank + 1) * n] = mine
            comm.all_gather(whole[rank * n:(rank + 1) * n], whole, **kw)
            sync()
            if out is not recv:
                errors.append("wrong return value")
            if not np.array_equal(decode(recv, dtype), expect):
                errors.append(f"n={n} {kind}: wrong result")
            if not np.array_equal(decode(whole, dtype), expect):
                errors.append(f"n={n} {kind} in place: wrong result")
    assert_all(not errors, errors[:4])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_scatter(pair, dtype, op):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    errors = []
    for n in sizes_for(size):
        total = n * size
        full = NP_OP[op](np.stack([values(dtype, op, r, total) for r in range(size)]), axis=0)
        expect = full[rank * n:(rank + 1) * n]
        mine = encode(values(dtype, op, rank, total), dtype)
        for kind in KINDS:
            kw = dtype_kw(kind, dtype)
            recv = empty(kind, n, dtype)
            out = comm.reduce_scatter(make(kind, mine, dtype), recv, op, **kw)
            whole = make(kind, mine, dtype)
            comm.reduce_scatter(whole, whole[rank * n:(rank + 1) * n], op, **kw)
            sync()
            if out is not recv:
                errors.append("wrong return value")
            if not np.array_equal(decode(recv, dtype), expect):
                errors.append(f"n={n} {kind}: wrong result")
            if not np.array_equal(decode(whole[rank * n:(rank + 1) * n], dtype), expect):
                errors.append(f"n={n} {kind} in place: wrong result")
    assert_all(not errors, errors[:4])


def test_reduce_to_every_root(pair):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    errors = []
    for root in range(size):
        for n in (0, 1, 7, 1000):
            expect = np.sum([values("float32", "sum", r, n) for r in range(size)], axis=0)
            send = pyhccl.asarray(values("float32", "sum", rank, n), dtype="float32")
            recv = pyhccl.full(n, -1.0, "float32")
            comm.reduce(send, recv, "sum", root)
            inplace = values("float32", "sum", rank, n).astype(np.float32)
            comm.reduce(inplace, op="sum", root=root)
            sync()
            if rank == root:
                if not np.array_equal(recv.get(), expect):
                    errors.append(f"root={root} n={n}: wrong result")
                if not np.array_equal(inplace, expect):
                    errors.append(f"root={root} n={n} in place: wrong result")
            elif not np.all(recv.get() == -1.0):
                errors.append(f"root={root} n={n}: recvbuf written on a non-root")
    assert_all(not errors, errors[:4])


def test_scatter_from_every_root(pair):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    errors = []
    for root in range(size):
        for n in (0, 1, 5, 1000):
            src = np.arange(n * size, dtype=np.int32) + 1000 * root
            recv = np.zeros(n, np.int32)
            comm.scatter(src if rank == root else None, recv, root)
            sync()
            if not np.array_equal(recv, src[rank * n:(rank + 1) * n]):
                errors.append(f"root={root} n={n}: wrong result")
    assert_all(not errors, errors[:4])


def test_all_to_all(pair):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    errors = []
    for n in (0, 1, 3, 1000):
        send = pyhccl.asarray(np.arange(n * size, dtype=np.int64) + 10000 * rank)
        recv = pyhccl.zeros(n * size, "int64")
        comm.all_to_all(send, recv)
        sync()
        expect = np.concatenate([np.arange(rank * n, (rank + 1) * n) + 10000 * r
                                 for r in range(size)]) if n else np.zeros(0)
        if not np.array_equal(recv.get(), expect):
            errors.append(f"n={n}: wrong result")
    assert_all(not errors, errors[:4])


def test_send_recv_ring(pair):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    if size == 1:
        pytest.skip("needs two ranks")
    right, left = (rank + 1) % size, (rank - 1) % size
    out = pyhccl.full(100, rank, "float64")
    got = pyhccl.zeros(100, "float64")
    # even ranks send first, odd ranks receive first: no cycle of blocked sends
    if rank % 2 == 0:
        comm.send(out, right)
        comm.recv(got, left)
    else:
        comm.recv(got, left)
        comm.send(out, right)
    sync()
    assert_all(np.all(got.get() == left), "send/recv ring delivered wrong data")


def test_barrier(pair):
    """A barrier holds every rank until the last one arrives: the last rank enters late,
    and no rank may leave before it entered (one host, so one clock)."""
    import time
    comm, mpi = pair
    s = pyhccl.Stream()
    late = comm.size - 1
    for stream in (s, None):  # None: the current stream
        mpi.Barrier()
        if comm.rank == late:
            time.sleep(0.3)
        entered = time.time()
        comm.barrier(stream=stream)
        (stream or pyhccl.current_stream()).synchronize()
        left = time.time()
        times = mpi.allgather((entered, left))
        late_entered = times[late][0]
        assert all(t_left >= late_entered for _, t_left in times), (stream, times)
    s.destroy()


def test_comm_properties(pair):
    comm, mpi = pair
    assert (comm.rank, comm.size) == (mpi.Get_rank(), mpi.Get_size())
    assert comm.get_rank_id() == comm.rank and comm.get_rank_size() == comm.size
    assert comm.device == pyhccl.get_device()
    assert isinstance(comm.name, str) and comm.name
    assert len(set(mpi.allgather(comm.name))) == 1
    assert comm.async_error() is None
    assert repr(comm) == f"Comm(rank={comm.rank}, size={comm.size}, device={comm.device})"
    assert comm.handle != 0 and not comm.is_destroyed


class DLPackOnly:
    """A host object readable only through DLPack."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_other_host_buffer_kinds(pair):
    import array
    comm, mpi = pair
    size = comm.size
    backing = np.full(6, comm.rank + 1, np.int32)
    wrapped = DLPackOnly(backing)
    out = comm.all_reduce(wrapped)
    raw = bytearray(np.full(4, 2, np.int16).tobytes())
    comm.all_reduce(raw, dtype="int16")
    arr = array.array("d", [1.0, 2.0, 3.0])
    comm.all_reduce(arr, op="max")
    sync()
    ok = (out is wrapped and np.all(backing == size * (size + 1) // 2)
          and np.all(np.frombuffer(bytes(raw), np.int16) == 2 * size)
          and list(arr) == [1.0, 2.0, 3.0])
    assert_all(ok, "buffer-protocol or DLPack host buffers gave wrong results")


def test_group_send_recv_both_ways(pair):
    comm, mpi = pair
    rank, size = comm.rank, comm.size
    if size == 1:
        pytest.skip("needs two ranks")
    s = pyhccl.Stream()
    gate = threading.Event()
    s.launch_host_func(gate.wait, 60)
    try:
        recv_left = np.zeros(64, np.int64)
        recv_right = np.zeros(64, np.int64)
        ref = weakref.ref(recv_left)
        with pyhccl.group():        # every rank sends first: fine inside a group
            comm.send(np.full(64, rank, np.int64), (rank + 1) % size, stream=s)
            comm.send(np.full(64, rank, np.int64), (rank - 1) % size, stream=s)
            comm.recv(recv_left, (rank - 1) % size, stream=s)
            comm.recv(recv_right, (rank + 1) % size, stream=s)
        held = s._pending_count() >= 2     # the gate, then the whole group
    finally:
        gate.set()
    s.synchronize()
    ok = (held and np.all(recv_left == (rank - 1) % size)
          and np.all(recv_right == (rank + 1) % size))
    del recv_left
    s.destroy()
    assert_all(ok and ref() is None, "grouped send/recv delivered wrong data")


@pytest.mark.skipif(SIZE == 1, reason="needs local peers")
def test_hier_inputs_read_in_place_stay_until_read(stream):
    """Hier AllReduce and ReduceScatter on device memory let local peers read a rank's input
    in place (Batch::send_stable): the operation must not end on a rank, freeing its input
    for the next write on the stream, before every peer has read it. Each rank overwrites
    its input right after each operation, on the same stream."""
    comm = comm_with_algo("allreduce:hier,reducescatter:hier")
    n = (1 << 20) + 7 * SIZE  # blocks of several slots, not all of one size
    src = pyhccl.empty(n * SIZE, "float32")
    dst, part = pyhccl.empty(n * SIZE, "float32"), pyhccl.empty(n, "float32")
    bad = []
    try:
        for it in range(6):
            src.set(np.full(n * SIZE, WORLD.rank + it, np.float32), stream=stream)
            if it % 2 == 0:
                comm.all_reduce(src, dst, op=pyhccl.SUM, stream=stream)
            else:
                comm.reduce_scatter(src, part, op=pyhccl.SUM, stream=stream)
            src.fill(-1000.0, stream=stream)   # the next write to the input, queued at once
            stream.synchronize()
            want = SIZE * it + SIZE * (SIZE - 1) // 2
            got = dst.get() if it % 2 == 0 else part.get()
            if not (got == want).all():
                bad.append((it, float(got.min()), float(got.max()), want))
    finally:
        comm.destroy()
    assert_all(not bad, f"inputs overwritten before local peers read them: {bad}")
