"""torch interop (only where torch is installed): torch.Tensor in every collective, bfloat16
over DLPack both ways, and pyhccl.torch (bucketed all-reduce, DDP-style gradient hook)."""

import numpy as np
import pytest

import pyhccl
from conftest import assert_all

torch = pytest.importorskip("torch")
import pyhccl.torch as ptorch  # noqa: E402

pytestmark = pytest.mark.mpi

TORCH_DTYPES = [torch.float32, torch.bfloat16, torch.int32, torch.float64]


def sync():
    pyhccl.current_stream().synchronize()


def ramp(n, rank, dtype):
    return (torch.arange(n, dtype=torch.float64) % 7 + rank + 1).to(dtype)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_every_collective_takes_tensors(pair, dtype):
    comm, _ = pair
    rank, size = comm.rank, comm.size
    n = 37
    errors = []
    total = sum(ramp(n, r, torch.float64) for r in range(size)).to(dtype)

    t = ramp(n, rank, dtype)
    out = torch.empty(n, dtype=dtype)
    comm.all_reduce(t, out)
    comm.all_reduce(t)
    red = torch.zeros(n, dtype=dtype)
    comm.reduce(ramp(n, rank, dtype), red, root=size - 1)
    b = ramp(n, rank, dtype)
    comm.broadcast(b, root=0)
    g = torch.empty(n * size, dtype=dtype)
    comm.all_gather(ramp(n, rank, dtype), g)
    rs = torch.empty(n, dtype=dtype)
    comm.reduce_scatter(ramp(n * size, rank, dtype), rs)
    sc = torch.empty(n, dtype=dtype)
    comm.scatter(ramp(n * size, 0, dtype) if rank == 0 else None, sc, root=0)
    a2a = torch.empty(n * size, dtype=dtype)
    comm.all_to_all(ramp(n * size, rank, dtype), a2a)
    counts = [r + 1 for r in range(size)]
    gv = torch.empty(sum(counts), dtype=dtype)
    comm.all_gather_v(torch.full((rank + 1,), rank, dtype=dtype), gv, counts)
    rsv = torch.empty(rank + 1, dtype=dtype)
    comm.reduce_scatter_v(ramp(sum(counts), rank, dtype), rsv, counts)
    a2v = torch.empty(size, dtype=dtype)
    comm.all_to_all_v(torch.full((size,), rank, dtype=dtype), a2v, [1] * size, [1] * size)
    p2p = torch.empty(n, dtype=dtype)
    comm.batch_send_recv([("send", ramp(n, rank, dtype), (rank + 1) % size),
                          ("recv", p2p, (rank - 1) % size)])
    sync()

    def same(x, y):
        return torch.equal(x.to(torch.float64), y.to(torch.float64))
    checks = {
        "all_reduce": same(out, total) and same(t, total),
        "reduce": rank != size - 1 or same(red, total),
        "broadcast": same(b, ramp(n, 0, dtype)),
        "all_gather": same(g, torch.cat([ramp(n, r, dtype) for r in range(size)])),
        "reduce_scatter": same(rs, sum(ramp(n * size, r, torch.float64)
                                       for r in range(size))[rank * n:(rank + 1) * n]),
        "scatter": same(sc, ramp(n * size, 0, dtype)[rank * n:(rank + 1) * n]),
        "all_to_all": same(a2a, torch.cat([ramp(n * size, r, dtype)[rank * n:(rank + 1) * n]
                                           for r in range(size)])),
        "all_gather_v": same(gv, torch.cat([torch.full((r + 1,), r) for r in range(size)])),
        "reduce_scatter_v": same(rsv, sum(ramp(sum(counts), r, torch.float64)
                                          for r in range(size))[sum(counts[:rank]):][:rank + 1]),
        "all_to_all_v": same(a2v, torch.arange(size)),
        "batch_send_recv": same(p2p, ramp(n, (rank - 1) % size, dtype)),
    }
    errors = [name for name, good in checks.items() if not good]
    assert_all(not errors, f"wrong results with {dtype} tensors: {errors}")


def test_bfloat16_over_dlpack_both_ways():
    values = torch.tensor([1.5, -2.25, 3.0e8, 0.0], dtype=torch.bfloat16)
    arr = pyhccl.asarray(values)
    assert arr.hccl_dtype == pyhccl.BFLOAT16 and arr.shape == (4,)
    back = torch.from_dlpack(arr)
    assert back.dtype == torch.bfloat16 and torch.equal(back, values)
    assert back.data_ptr() == arr.ptr                        # shared, not copied
    host = arr.get()
    bits = host.view(np.uint16) if host.dtype.itemsize == 2 else host
    assert np.array_equal(pyhccl.bfloat16_to_float(bits), values.float().numpy())


def test_layouts_and_errors_name_the_call(self_comm):
    t = torch.arange(12.0).reshape(3, 4).t()                  # not C-ordered, contiguous block
    self_comm.all_reduce(t)
    sync()
    assert torch.equal(t, torch.arange(12.0).reshape(3, 4).t())
    with pytest.raises(BufferError, match="all_reduce: sendbuf cannot be read through DLPack"):
        self_comm.all_reduce(torch.ones(3, requires_grad=True))
    with pytest.raises(TypeError, match="all_reduce: sendbuf has dtype complex64"):
        self_comm.all_reduce(torch.ones(3, dtype=torch.complex64))
    with pytest.raises(BufferError, match="all_gather: sendbuf is not contiguous"):
        self_comm.all_gather(torch.ones(4, 4)[:, :2], torch.ones(8))


def test_all_reduce_tensors_in_buckets(pair, stream):
    comm, _ = pair
    rank, size = comm.rank, comm.size
    shapes = [(3, 5), (7,), (2, 2, 2), (1,), (40,)]
    dtypes = [torch.float32, torch.bfloat16, torch.float32, torch.float64, torch.float32]
    grads = [ramp(int(np.prod(s)), rank, d).reshape(s) for s, d in zip(shapes, dtypes)]
    keep = [g.clone() for g in grads]
    work = ptorch.all_reduce_tensors(comm, grads, average=True, stream=stream, bucket_bytes=64)
    unchanged = all(torch.equal(g, k) for g, k in zip(grads, keep))   # results wait for wait()
    work.wait()
    work.wait()                                   # a second wait writes nothing again
    expect = [sum(ramp(int(np.prod(s)), r, torch.float64) for r in range(size)).reshape(s) / size
              for s in shapes]
    good = all(torch.allclose(g.double(), e, rtol=1e-2) for g, e in zip(grads, expect))
    assert_all(unchanged and good and work.is_completed(), "all_reduce_tensors: wrong results")
    with pytest.raises(TypeError, match=r"all_reduce_tensors: tensors\[1\] has dtype "
                                        "torch.complex64"):
        ptorch.all_reduce_tensors(comm, [torch.ones(2), torch.ones(2, dtype=torch.complex64)])
    with pytest.raises(ValueError, match="all_reduce_tensors: average=True needs floating"):
        ptorch.all_reduce_tensors(comm, [torch.ones(2, dtype=torch.int32)], average=True)


def test_grad_reducer_matches_averaged_gradients(world):
    rank, size = world.rank, world.size
    torch.manual_seed(0)                                        # same model on every rank
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 4))
    unused = torch.nn.Parameter(torch.ones(3))                  # never gets a gradient
    model.register_parameter("unused", unused)
    per_rank = []
    for r in range(size):                                       # every rank's own gradients
        model.zero_grad(set_to_none=True)
        x = torch.full((5, 8), 0.1 * (r + 1))
        model(x).pow(2).sum().backward()
        per_rank.append({n: p.grad.clone() for n, p in model.named_parameters()
                         if p.grad is not None})
    reducer = ptorch.GradReducer(model, world, bucket_bytes=256)
    errors = []
    for iteration in range(2):                                  # buckets are reused
        model.zero_grad(set_to_none=True)
        x = torch.full((5, 8), 0.1 * (rank + 1))
        model(x).pow(2).sum().backward()
        reducer.wait()
        for name, p in model.named_parameters():
            if name == "unused":
                if not torch.equal(p.grad, torch.zeros(3)):
                    errors.append(f"{iteration}: unused parameter: gradient should be zeros")
                continue
            expect = sum(g[name] for g in per_rank) / size
            if not torch.allclose(p.grad, expect, rtol=1e-5, atol=1e-6):
                errors.append(f"{iteration}: {name}")
    reducer.remove()
    assert_all(not errors, f"GradReducer: wrong gradients for {errors}")
