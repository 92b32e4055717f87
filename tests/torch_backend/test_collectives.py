"""Every c10d operation of the "pyhccl" backend, for every dtype, with exact expected values."""

import pytest
import torch
import torch.distributed as dist

from .expect import (ALL, FP8, ops_for, reduce_cases, reduced, refused_cases, same, torch_op,
                    vals, dtype_id)

N = 5                  # elements per rank (odd, so blocks never line up by chance)

reduce_params = pytest.mark.parametrize(
    "op,dtype", reduce_cases(), ids=[f"{o}-{dtype_id(d)}" for o, d in reduce_cases()])
all_dtypes = pytest.mark.parametrize("dtype", ALL, ids=[dtype_id(d) for d in ALL])


@reduce_params
def test_all_reduce(op, dtype, rank, size):
    t = vals(rank, N, dtype, op)
    dist.all_reduce(t, op=torch_op(op))
    assert same(t, reduced(op, dtype, N, size))


@reduce_params
def test_reduce(op, dtype, rank, size):
    root = size - 1
    t = vals(rank, N, dtype, op)
    dist.reduce(t, dst=root, op=torch_op(op))
    if rank == root:
        assert same(t, reduced(op, dtype, N, size))


@reduce_params
def test_reduce_scatter_tensor(op, dtype, rank, size):
    inp = vals(rank, N * size, dtype, op)
    out = torch.empty(N, dtype=dtype)
    dist.reduce_scatter_tensor(out, inp, op=torch_op(op))
    assert same(out, reduced(op, dtype, N * size, size)[rank * N:(rank + 1) * N])


@reduce_params
def test_reduce_scatter_list(op, dtype, rank, size):
    whole = vals(rank, N * size, dtype, op)
    out = torch.empty(N, dtype=dtype)
    dist.reduce_scatter(out, list(whole.split(N)), op=torch_op(op))
    assert same(out, reduced(op, dtype, N * size, size)[rank * N:(rank + 1) * N])
    assert same(whole, vals(rank, N * size, dtype, op))          # inputs untouched


@pytest.mark.parametrize("op,dtype", refused_cases(),
                         ids=[f"{o}-{dtype_id(d)}" for o, d in refused_cases()])
def test_undefined_reductions_are_refused(op, dtype, rank):
    t = vals(rank, N, dtype)
    keep = t.clone()
    with pytest.raises((TypeError, ValueError), match=r"all_reduce(: .*(ReduceOp|cannot reduce)| does not support)"):
        dist.all_reduce(t, op=torch_op(op))
    assert same(t, keep)
    dist.barrier()                 # the group still works


@all_dtypes
def test_broadcast(dtype, rank, size):
    for root in range(size):
        t = vals(rank, N, dtype).reshape(1, N)
        dist.broadcast(t, src=root)
        assert same(t, vals(root, N, dtype).reshape(1, N))


@all_dtypes
def test_all_gather_list(dtype, rank, size):
    outs = [torch.empty(N, dtype=dtype) for _ in range(size)]
    dist.all_gather(outs, vals(rank, N, dtype))
    for r in range(size):
        assert same(outs[r], vals(r, N, dtype))


@all_dtypes
def test_all_gather_into_tensor(dtype, rank, size):
    out = torch.empty(size, N, dtype=dtype)
    dist.all_gather_into_tensor(out, vals(rank, N, dtype))
    assert same(out, torch.stack([vals(r, N, dtype) for r in range(size)]))


@all_dtypes
def test_all_gather_object_and_coalesced(dtype, rank, size):
    objs = [None] * size
    dist.all_gather_object(objs, {"rank": rank, "dtype": str(dtype)})
    assert objs == [{"rank": r, "dtype": str(dtype)} for r in range(size)]
    outs = [torch.empty(size, N, dtype=dtype), torch.empty(size, 2, dtype=dtype)]
    ins = [vals(rank, N, dtype), vals(rank + 7, 2, dtype)]
    with dist._coalescing_manager(async_ops=True) as cm:
        for o, i in zip(outs, ins):
            dist.all_gather_into_tensor(o, i)
    cm.wait()
    assert same(outs[0], torch.stack([vals(r, N, dtype) for r in range(size)]))
    assert same(outs[1], torch.stack([vals(r + 7, 2, dtype) for r in range(size)]))


@all_dtypes
def test_all_to_all_list(dtype, rank, size):
    # rank r sends r + j + 1 elements to rank j: every block a different size
    ins = [vals(rank * 10 + j, rank + j + 1, dtype) for j in range(size)]
    outs = [torch.empty(j + rank + 1, dtype=dtype) for j in range(size)]
    dist.all_to_all(outs, ins)
    for j in range(size):
        assert same(outs[j], vals(j * 10 + rank, j + rank + 1, dtype))


@all_dtypes
def test_all_to_all_single_even(dtype, rank, size):
    inp = vals(rank, 2 * size, dtype).reshape(size, 2)
    out = torch.empty(size, 2, dtype=dtype)
    dist.all_to_all_single(out, inp)
    for j in range(size):
        assert same(out[j], vals(j, 2 * size, dtype).reshape(size, 2)[rank])


@all_dtypes
def test_all_to_all_single_splits(dtype, rank, size):
    # MoE-style routing: rank r sends (r + j) % 3 rows of width 3 to rank j
    def rows(src, dst):
        return (src + dst) % 3
    send = [rows(rank, j) for j in range(size)]
    recv = [rows(j, rank) for j in range(size)]
    inp = torch.cat([vals(rank * 10 + j, rows(rank, j) * 3, dtype).reshape(-1, 3)
                     for j in range(size)])
    out = torch.empty(sum(recv), 3, dtype=dtype)
    dist.all_to_all_single(out, inp, output_split_sizes=recv, input_split_sizes=send)
    expect = torch.cat([vals(j * 10 + rank, rows(j, rank) * 3, dtype).reshape(-1, 3)
                        for j in range(size)])
    assert same(out, expect)


@all_dtypes
def test_gather_and_scatter(dtype, rank, size):
    root = size // 2
    gl = [torch.empty(N, dtype=dtype) for _ in range(size)] if rank == root else None
    dist.gather(vals(rank, N, dtype), gl, dst=root)
    if rank == root:
        for r in range(size):
            assert same(gl[r], vals(r, N, dtype))
    out = torch.empty(N, dtype=dtype)
    sl = [vals(100 + r, N, dtype) for r in range(size)] if rank == root else None
    dist.scatter(out, sl, src=root)
    assert same(out, vals(100 + rank, N, dtype))


@all_dtypes
def test_send_recv_ring(dtype, rank, size):
    """A ring of sends before receives: batch_isend_irecv posts them as one batch."""
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    big = 1 << 16                       # larger than a channel holds: a blocking send
    out = torch.empty(big, dtype=dtype)
    ops = [dist.P2POp(dist.isend, vals(rank, big, dtype), nxt),
           dist.P2POp(dist.irecv, out, prv)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    assert same(out, vals(prv, big, dtype))


@all_dtypes
def test_send_recv_pairs(dtype, rank, size):
    if size == 1:
        pytest.skip("needs a peer")
    if rank % 2 == 0 and rank + 1 < size:
        dist.send(vals(rank, N, dtype), rank + 1)
        back = torch.empty(N, dtype=dtype)
        dist.recv(back, rank + 1)
        assert same(back, vals(rank + 1, N, dtype))
    elif rank % 2 == 1:
        got = torch.empty(N, dtype=dtype)
        dist.recv(got, rank - 1)
        assert same(got, vals(rank - 1, N, dtype))
        dist.send(vals(rank, N, dtype), rank - 1)


def test_recv_from_any_source_is_refused(rank):
    with pytest.raises(RuntimeError, match="any source.*not supported"):
        dist.recv(torch.empty(1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64],
                         ids=dtype_id)
def test_all_reduce_coalesced(dtype, rank, size):
    ts = [vals(rank, n, dtype) for n in (1, N, 0, 64)]
    with dist._coalescing_manager(async_ops=True) as cm:
        for t in ts:
            dist.all_reduce(t)
    cm.wait()
    for t, n in zip(ts, (1, N, 0, 64)):
        assert same(t, reduced("SUM", dtype, n, size))
    ts = [vals(rank, n, dtype) for n in (3, 2)]
    dist.all_reduce_coalesced(ts)
    assert all(same(t, reduced("SUM", dtype, t.numel(), size)) for t in ts)


def test_reduce_scatter_tensor_coalesced(rank, size):
    outs = [torch.empty(N), torch.empty(2, dtype=torch.bfloat16)]
    ins = [vals(rank, N * size, torch.float32), vals(rank, 2 * size, torch.bfloat16)]
    with dist._coalescing_manager(async_ops=True) as cm:
        for o, i in zip(outs, ins):
            dist.reduce_scatter_tensor(o, i)
    cm.wait()
    assert same(outs[0], reduced("SUM", torch.float32, N * size, size)[rank * N:(rank + 1) * N])
    assert same(outs[1], reduced("SUM", torch.bfloat16, 2 * size, size)[rank * 2:rank * 2 + 2])


def test_barrier_waits_for_every_rank(rank, size):
    import time
    if size == 1:
        dist.barrier()
        return
    late = 0.3
    if rank == size - 1:
        time.sleep(late)
    t0 = time.monotonic()
    dist.barrier()
    if rank != size - 1:
        assert time.monotonic() - t0 > late * 0.5


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.complex64,
                                   torch.int32], ids=dtype_id)
def test_non_contiguous_views_slices_and_empty(dtype, rank, size):
    # A transposed (non-contiguous) tensor is copied in and out.
    t = vals(rank, 12, dtype).reshape(3, 4).t()
    dist.all_reduce(t)
    assert same(t.contiguous(), reduced("SUM", dtype, 12, size).reshape(3, 4).t().contiguous())
    # A strided slice: only its elements change.
    base = vals(rank, 10, dtype)
    dist.all_reduce(base[::2])
    expect = vals(rank, 10, dtype)
    expect[::2] = reduced("SUM", dtype, 10, size)[::2]
    assert same(base, expect)
    # A view into a larger tensor (contiguous, offset)
    big = vals(rank, 9, dtype)
    dist.broadcast(big[3:6], src=0)
    expect = vals(rank, 9, dtype)
    expect[3:6] = vals(0, 9, dtype)[3:6]
    assert same(big, expect)
    # A non-contiguous output of a gather
    out = torch.zeros(N, size, dtype=dtype).t()
    dist.all_gather_into_tensor(out, vals(rank, N, dtype))
    assert same(out.contiguous(), torch.stack([vals(r, N, dtype) for r in range(size)]))
    # zero elements, and a 0-dim tensor
    e = torch.empty(0, dtype=dtype)
    dist.all_reduce(e)
    dist.broadcast(e, 0)
    eo = torch.empty(0, dtype=dtype)
    dist.all_gather_into_tensor(eo, e)
    s = vals(rank, 1, dtype).reshape(())
    dist.all_reduce(s)
    assert same(s, reduced("SUM", dtype, 1, size).reshape(()))


def test_large_tensors(rank, size):
    n = (1 << 20) // 4 + 3                       # past the shared-memory boards
    t = torch.full((n,), float(rank + 1))
    dist.all_reduce(t)
    assert torch.all(t == size * (size + 1) / 2)
    out = torch.empty(size * n, dtype=torch.bfloat16)
    dist.all_gather_into_tensor(out, torch.full((n,), float(rank), dtype=torch.bfloat16))
    assert all(torch.all(out[r * n:(r + 1) * n] == r) for r in range(size))


def test_requires_grad_tensor(rank, size):
    p = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        dist.all_reduce(p)
    assert torch.equal(p.detach(), torch.full((3,), float(size)))


def test_bad_arguments_name_the_call(rank, size):
    with pytest.raises(ValueError, match="all_gather_into_tensor: output has"):
        dist.all_gather_into_tensor(torch.empty(size * 2 + 1), torch.empty(2))
    with pytest.raises(ValueError, match="reduce_scatter_tensor: input has"):
        dist.reduce_scatter_tensor(torch.empty(2), torch.empty(2 * size + 1))
    with pytest.raises(TypeError, match="all_gather_into_tensor: output is torch.float64"):
        dist.all_gather_into_tensor(torch.empty(size, dtype=torch.float64), torch.empty(1))
    with pytest.raises(ValueError, match="all_to_all_single: input split sizes"):
        dist.all_to_all_single(torch.empty(size), torch.empty(size),
                               output_split_sizes=[1] * size, input_split_sizes=[2] * size)
    with pytest.raises(TypeError, match="all_reduce: tensor is on meta"):
        dist.all_reduce(torch.empty(2, device="meta"))
    dist.barrier()


def test_fp8_moves_as_bytes(rank, size):
    for dtype in FP8:
        assert ops_for(dtype) == []
        t = vals(rank, N, dtype)
        outs = [torch.empty(N, dtype=dtype) for _ in range(size)]
        dist.all_gather(outs, t)
        assert all(same(outs[r], vals(r, N, dtype)) for r in range(size))
