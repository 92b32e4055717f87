"""Variable-size collectives (all_gather_v, reduce_scatter_v, all_to_all_v, all_to_all_vc),
batch_send_recv and groups of send/recv: exact results, in place, and their argument checks."""

import numpy as np
import pytest

import pyhccl
from conftest import assert_all
from test_collectives import NP_OP, decode, dtype_kw, empty, encode, make, values

pytestmark = pytest.mark.mpi

KINDS = ("device", "host")
V_DTYPES = ["int8", "int32", "float16", "float32", "float64", "bfloat16"]


def sync():
    pyhccl.current_stream().synchronize()


def counts_for(size, salt=0):
    """Uneven block sizes with a zero among them: rank i gets (3 i + salt) % 5 elements."""
    return [(3 * i + salt) % 5 + (1 if i == 0 else 0) for i in range(size)]


def reversed_displs(counts, gap=2):
    """Blocks laid out in reverse rank order with gaps between them (not packed)."""
    displs = [0] * len(counts)
    pos = gap
    for i in reversed(range(len(counts))):
        displs[i] = pos
        pos += counts[i] + gap
    return displs, pos


@pytest.mark.parametrize("dtype", V_DTYPES)
def test_all_gather_v(pair, dtype):
    comm, _ = pair
    rank, size = comm.rank, comm.size
    counts = counts_for(size)
    blocks = [values(dtype, "sum", r, counts[r]) for r in range(size)]
    errors = []
    for kind in KINDS:
        kw = dtype_kw(kind, dtype)
        mine = make(kind, encode(blocks[rank], dtype), dtype)
        # packed in rank order, counts as a numpy array
        recv = empty(kind, sum(counts), dtype)
        out = comm.all_gather_v(mine, recv, np.array(counts), **kw)
        # reverse order with gaps, displacements as a list; the gaps stay untouched
        displs, total = reversed_displs(counts)
        gapped = make(kind, encode(np.full(total, 99.0), dtype), dtype)
        comm.all_gather_v(mine, gapped, counts, displs, **kw)
        # in place: sendbuf is this rank's block of recvbuf
        whole = make(kind, encode(np.zeros(total), dtype), dtype)
        whole[displs[rank]:displs[rank] + counts[rank]] = encode(blocks[rank], dtype)
        comm.all_gather_v(whole[displs[rank]:displs[rank] + counts[rank]], whole, counts,
                          displs, **kw)
        sync()
        if out is not recv:
            errors.append("wrong return value")
        if not np.array_equal(decode(recv, dtype), np.concatenate(blocks)):
            errors.append(f"{kind} packed: wrong result")
        expect = np.full(total, 99.0)
        for r in range(size):
            expect[displs[r]:displs[r] + counts[r]] = blocks[r]
        if not np.array_equal(decode(gapped, dtype), expect):
            errors.append(f"{kind} with displacements: wrong result")
        expect[expect == 99.0] = 0
        if not np.array_equal(decode(whole, dtype), expect):
            errors.append(f"{kind} in place: wrong result")
    assert_all(not errors, errors[:4])


@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("dtype", V_DTYPES)
def test_reduce_scatter_v(pair, dtype, op):
    comm, _ = pair
    rank, size = comm.rank, comm.size
    counts = counts_for(size, 1)
    displs, total = reversed_displs(counts, gap=1)
    full = NP_OP[op](np.stack([values(dtype, op, r, total) for r in range(size)]), axis=0)
    expect = full[displs[rank]:displs[rank] + counts[rank]]
    packed_full = NP_OP[op](np.stack([values(dtype, op, r, sum(counts))
                                      for r in range(size)]), axis=0)
    start = sum(counts[:rank])
    packed_expect = packed_full[start:start + counts[rank]]
    errors = []
    for kind in KINDS:
        kw = dtype_kw(kind, dtype)
        send = make(kind, encode(values(dtype, op, rank, total), dtype), dtype)
        recv = empty(kind, counts[rank], dtype)
        out = comm.reduce_scatter_v(send, recv, counts, displs, op, **kw)
        packed = make(kind, encode(values(dtype, op, rank, sum(counts)), dtype), dtype)
        precv = empty(kind, counts[rank], dtype)
        comm.reduce_scatter_v(packed, precv, tuple(counts), op=op, **kw)
        whole = make(kind, encode(values(dtype, op, rank, total), dtype), dtype)
        mine = whole[displs[rank]:displs[rank] + counts[rank]]
        comm.reduce_scatter_v(whole, mine, counts, displs, op, **kw)
        sync()
        if out is not recv:
            errors.append("wrong return value")
        if not np.array_equal(decode(recv, dtype), expect):
            errors.append(f"{kind}: wrong result")
        if not np.array_equal(decode(precv, dtype), packed_expect):
            errors.append(f"{kind} packed: wrong result")
        if not np.array_equal(decode(mine, dtype), expect):
            errors.append(f"{kind} in place: wrong result")
    assert_all(not errors, errors[:4])


def a2a_matrix(size):
    """Elements rank i sends to rank j (row = sender), zeros included."""
    return np.array([[(i + 2 * j) % 4 for j in range(size)] for i in range(size)])


def a2a_block(src, dst, n):
    """The values rank `src` sends to rank `dst`."""
    return np.arange(n, dtype=np.float64) + 10 * src + dst


@pytest.mark.parametrize("dtype", ["int16", "float32", "bfloat16"])
def test_all_to_all_v_and_vc(pair, dtype):
    comm, _ = pair
    rank, size = comm.rank, comm.size
    m = a2a_matrix(size)
    row, col = m[rank], m[:, rank]
    send_host = np.concatenate([a2a_block(rank, j, row[j]) for j in range(size)])
    expect = np.concatenate([a2a_block(i, rank, col[i]) for i in range(size)])
    errors = []
    for kind in KINDS:
        kw = dtype_kw(kind, dtype)
        send = make(kind, encode(send_host, dtype), dtype)
        recv = empty(kind, int(col.sum()), dtype)
        out = comm.all_to_all_v(send, recv, row, col, **kw)
        recv_vc = empty(kind, int(col.sum()) + 3, dtype)      # larger than needed
        comm.all_to_all_vc(send, recv_vc, m.tolist(), **kw)
        # explicit displacements: receive blocks in reverse order with gaps
        displs, total = reversed_displs(list(col))
        gapped = make(kind, encode(np.full(total, 7.0), dtype), dtype)
        sdispls = np.concatenate([[0], np.cumsum(row)[:-1]])
        comm.all_to_all_v(send, gapped, row, col, sdispls, displs, **kw)
        sync()
        if out is not recv:
            errors.append("wrong return value")
        if not np.array_equal(decode(recv, dtype), expect):
            errors.append(f"{kind} all_to_all_v: wrong result")
        if not np.array_equal(decode(recv_vc, dtype)[:len(expect)], expect):
            errors.append(f"{kind} all_to_all_vc: wrong result")
        want = np.full(total, 7.0)
        for i in range(size):
            want[displs[i]:displs[i] + col[i]] = a2a_block(i, rank, col[i])
        if not np.array_equal(decode(gapped, dtype), want):
            errors.append(f"{kind} all_to_all_v with displacements: wrong result")
    assert_all(not errors, errors[:4])


def test_batch_send_recv_ring_of_large_messages(world):
    """A ring of 1 MiB messages in one batch: everything progresses together."""
    rank, size = world.rank, world.size
    n = (1 << 20) // 4
    right, left = (rank + 1) % size, (rank - 1) % size
    send = pyhccl.full(n, rank, "float32")
    recv = pyhccl.zeros(n, "float32")
    small_in = np.zeros(3, np.int64)
    out = world.batch_send_recv([("send", send, right), ("recv", recv, left),
                                 ("recv", small_in, right), ("send", np.arange(3) + rank, left)])
    sync()
    ok = (out is None and np.all(recv.get() == left)
          and np.array_equal(small_in, np.arange(3) + right))
    assert_all(ok, "batch_send_recv ring gave a wrong result")


def test_send_recv_ring_in_a_group(world):
    """The documented pairing rule: a ring of large send/recv pairs needs group()."""
    rank, size = world.rank, world.size
    n = (1 << 20) // 8
    send = np.full(n, rank, np.float64)
    recv = np.zeros(n, np.float64)
    with pyhccl.group():
        world.send(send, (rank + 1) % size)
        world.recv(recv, (rank - 1) % size)
    sync()
    assert_all(np.all(recv == (rank - 1) % size), "grouped send/recv ring: wrong result")


def test_batch_send_recv_to_self(self_comm):
    src = np.arange(10, dtype=np.int32)
    dst = np.zeros(10, np.int32)
    self_comm.batch_send_recv([("recv", dst, 0), ("SEND", src, 0)])
    self_comm.batch_send_recv([])
    sync()
    assert np.array_equal(src, dst)


@pytest.mark.parametrize("coll", ["all_reduce", "reduce", "broadcast"])
def test_any_contiguous_layout(pair, coll):
    """Fortran order and transposed views work where element order does not matter."""
    comm, _ = pair
    rank, size = comm.rank, comm.size
    base = np.arange(24, dtype=np.float32).reshape(4, 6) + rank
    total = sum(np.arange(24, dtype=np.float32).reshape(4, 6) + r for r in range(size))
    errors = []
    for kind in KINDS:
        if kind == "host":
            buf = np.asfortranarray(base)
            other = np.asfortranarray(np.zeros_like(base))
        else:
            buf = pyhccl.asarray(np.ascontiguousarray(base.T)).T     # a transposed view
            other = pyhccl.zeros((6, 4), "float32").T
        get = (lambda a: a) if kind == "host" else (lambda a: a.get())
        if coll == "all_reduce":
            comm.all_reduce(buf, other)
            comm.all_reduce(buf)
            sync()
            good = np.array_equal(get(other), total) and np.array_equal(get(buf), total)
        elif coll == "reduce":
            comm.reduce(buf, other, root=0)
            sync()
            good = rank != 0 or np.array_equal(get(other), total)
        else:
            comm.broadcast(buf, root=size - 1)
            sync()
            good = np.array_equal(get(buf), base - rank + size - 1)
        if not good:
            errors.append(f"{coll} {kind}: wrong result")
    assert_all(not errors, errors)


def test_layout_rules(self_comm):
    f = np.asfortranarray(np.ones((3, 4), np.float32))
    c = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="all_reduce: sendbuf and recvbuf have different "
                                         "memory layouts"):
        self_comm.all_reduce(f, c)
    with pytest.raises(BufferError, match="all_reduce: sendbuf is not contiguous"):
        self_comm.all_reduce(np.ones((4, 4), np.float32)[:, :2])
    with pytest.raises(BufferError, match="all_gather: sendbuf is not contiguous"):
        self_comm.all_gather(f, np.ones(12, np.float32))
    with pytest.raises(BufferError, match="broadcast: buf is not contiguous"):
        self_comm.broadcast(pyhccl.zeros((4, 4))[:, ::2])


def test_v_argument_checks(pair):
    """Counts and displacements are checked strictly, naming the call and the argument."""
    comm, _ = pair
    n, r = comm.size, comm.rank
    f32 = lambda k: np.ones(k, np.float32)  # noqa: E731
    ones = [1] * n
    with pytest.raises(ValueError, match=f"all_gather_v: recv_counts has {n + 1} entries; "
                                         f"it must have one per rank \\({n}\\)"):
        comm.all_gather_v(f32(1), f32(n + 1), [1] * (n + 1))
    with pytest.raises(TypeError, match="all_gather_v: recv_counts must hold ints, not float64"):
        comm.all_gather_v(f32(1), f32(n), [1.0] * n)
    with pytest.raises(TypeError, match="all_gather_v: recv_counts must be a sequence"):
        comm.all_gather_v(f32(1), f32(n), None)
    with pytest.raises(ValueError, match=r"all_gather_v: recv_displs\[0\] is -1"):
        comm.all_gather_v(f32(1), f32(n), ones, [-1] + list(range(1, n)))
    with pytest.raises(ValueError, match=f"all_gather_v: sendbuf has 2 elements but "
                                         f"recv_counts\\[{r}\\]"):
        comm.all_gather_v(f32(2), f32(2 * n), ones)
    with pytest.raises(ValueError, match="all_gather_v: block .* ends at element"):
        comm.all_gather_v(f32(1), f32(n - 1) if n > 1 else f32(0), ones)
    if n > 1:
        with pytest.raises(ValueError, match="all_gather_v: blocks 0 and 1 of recvbuf overlap"):
            comm.all_gather_v(f32(1), f32(n), ones, [0] * n)
        with pytest.raises(ValueError, match="all_to_all_v: blocks 0 and 1 of recvbuf overlap"):
            comm.all_to_all_v(f32(n), f32(n), ones, ones, None, [0] * n)
    recv = f32(2 * n)
    with pytest.raises(ValueError, match="all_gather_v: sendbuf and recvbuf overlap"):
        comm.all_gather_v(recv[1:2], recv, ones, list(range(0, 2 * n, 2)))
    with pytest.raises(ValueError, match=f"reduce_scatter_v: recvbuf has 3 elements but "
                                         f"send_counts\\[{r}\\]"):
        comm.reduce_scatter_v(f32(n), f32(3), ones)
    with pytest.raises(ValueError, match="reduce_scatter_v: block .* of sendbuf"):
        comm.reduce_scatter_v(f32(n), f32(1), ones, [n] * n)
    with pytest.raises(ValueError, match="reduce_scatter_v: MPI op MPI.LAND has no HCCL"):
        from mpi4py import MPI
        comm.reduce_scatter_v(f32(n), f32(1), ones, op=MPI.LAND)
    buf = f32(n)
    with pytest.raises(ValueError, match="all_to_all_v: in place is not supported"):
        comm.all_to_all_v(buf, buf, ones, ones)
    with pytest.raises(TypeError, match="all_to_all_v: sendbuf dtype float32 does not match "
                                        "recvbuf dtype int32"):
        comm.all_to_all_v(f32(n), np.zeros(n, np.int32), ones, ones)
    with pytest.raises(ValueError, match=f"all_to_all_vc: send_count_matrix has shape "
                                         f"\\({n}, {n + 1}\\)"):
        comm.all_to_all_vc(f32(n), f32(n), np.ones((n, n + 1), int))
    with pytest.raises(ValueError, match=f"all_to_all_vc: row {r} of send_count_matrix sends "
                                         f"{2 * n} elements"):
        comm.all_to_all_vc(f32(n), f32(2 * n), np.full((n, n), 2))
    with pytest.raises(ValueError, match=f"all_to_all_vc: column {r} of send_count_matrix "
                                         f"brings {2 * n} elements"):
        comm.all_to_all_vc(f32(2 * n), f32(n), [2] * (n * n))


def test_batch_send_recv_argument_checks(pair):
    comm, _ = pair
    n = comm.size
    a, b = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"batch_send_recv: items\[0\] must be a "
                                        r"\(kind, buf, peer\) tuple"):
        comm.batch_send_recv([a])
    with pytest.raises(ValueError, match=r"batch_send_recv: items\[1\] kind must be 'send' "
                                         r"or 'recv', not 'put'"):
        comm.batch_send_recv([("send", a, 0), ("put", b, 0)])
    with pytest.raises(ValueError, match=rf"batch_send_recv: items\[0\] peer {n} out of range"):
        comm.batch_send_recv([("send", a, n)])
    with pytest.raises(BufferError, match=r"batch_send_recv: items\[0\] buf is read-only"):
        ro = np.zeros(4, np.float32)
        ro.flags.writeable = False
        comm.batch_send_recv([("recv", ro, 0)])
    with pytest.raises(ValueError, match=r"the buffers of items\[0\] and items\[1\] overlap"):
        comm.batch_send_recv([("recv", a[:5], 0), ("send", a[4:], 0)])
    with pytest.raises(ValueError, match=r"the buffers of items\[[01]\] and items\[2\] overlap"):
        comm.batch_send_recv([("send", a, 0), ("send", a, 0), ("recv", a[7:], 0)])
    with pytest.raises(TypeError, match="batch_send_recv: items must be an iterable"):
        comm.batch_send_recv(5)


def test_send_recv_docstrings_state_the_pairing_rules():
    for name in ("send", "recv"):
        doc = getattr(pyhccl.Comm, name).__doc__
        assert "group()" in doc and "in order" in doc and "batch_send_recv" in doc, name
    assert "same count and dtype" in pyhccl.Comm.send.__doc__
