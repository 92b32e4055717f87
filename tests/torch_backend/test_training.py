"""DDP and FSDP2 over "pyhccl" train like one process on the whole batch (heavy: 2 ranks)."""

import pytest
import torch

pytestmark = pytest.mark.heavy

STEPS = 4
BATCH = 8               # per rank
TOL = 5e-6


def _model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                               torch.nn.Linear(32, 32), torch.nn.GELU(),
                               torch.nn.Linear(32, 4))


def _data(size):
    g = torch.Generator().manual_seed(99)
    x = torch.randn(STEPS, BATCH * size, 16, generator=g)
    y = torch.randn(STEPS, BATCH * size, 4, generator=g)
    return x, y


def _reference(size, steps=STEPS):
    """One process, the whole batch each step."""
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data(size)
    for s in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x[s]), y[s]).backward()
        opt.step()
    return model


def _shard(t, rank):
    return t[rank * BATCH:(rank + 1) * BATCH]


def _max_diff(a, b):
    return max((p - q).abs().max().item() for p, q in zip(a, b))


@pytest.mark.parametrize("bucket_mb", [25, 0.001])      # one bucket, or one per parameter
def test_ddp_trains_like_one_process(bucket_mb, rank, size):
    from torch.nn.parallel import DistributedDataParallel as DDP
    ref = _reference(size)
    local = _model()
    with torch.no_grad():                     # different start: DDP's broadcast must fix it
        for p in local.parameters():
            p.add_(rank)
    ddp = DDP(local, bucket_cap_mb=bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    x, y = _data(size)
    for s in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(_shard(x[s], rank)), _shard(y[s], rank)).backward()
        opt.step()
    diff = _max_diff(ddp.module.parameters(), ref.parameters())
    assert diff < TOL, f"DDP differs from one process by {diff}"


def test_ddp_no_sync_accumulates(rank, size):
    from torch.nn.parallel import DistributedDataParallel as DDP
    ref = _reference(size, steps=1)
    ddp = DDP(_model())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    x, y = _data(size)
    xs, ys = _shard(x[0], rank), _shard(y[0], rank)
    half = BATCH // 2
    opt.zero_grad()
    with ddp.no_sync():                      # first half: local gradients only
        (torch.nn.functional.mse_loss(ddp(xs[:half]), ys[:half]) / 2).backward()
    (torch.nn.functional.mse_loss(ddp(xs[half:]), ys[half:]) / 2).backward()
    opt.step()
    diff = _max_diff(ddp.module.parameters(), ref.parameters())
    assert diff < TOL, f"DDP with no_sync() differs from one process by {diff}"


def test_fsdp2_trains_like_one_process(rank, size):
    from torch.distributed.device_mesh import init_device_mesh
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard
    ref = _reference(size)
    mesh = init_device_mesh("cpu", (size,))
    model = _model()
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data(size)
    for s in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(_shard(x[s], rank)), _shard(y[s], rank)).backward()
        opt.step()
    full = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in model.parameters()]
    diff = _max_diff(full, ref.parameters())
    assert diff < TOL, f"FSDP2 differs from one process by {diff}"
