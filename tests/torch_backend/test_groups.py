"""Subgroups (new_group, DeviceMesh) cut from the default group's communicator."""

import pytest
import torch
import torch.distributed as dist

from .expect import reduced, same, vals


def test_new_group_subsets(rank, size):
    evens = list(range(0, size, 2))
    odds = list(range(1, size, 2))
    g_even = dist.new_group(evens)
    g_odd = dist.new_group(odds) if odds else None
    g_all = dist.new_group(list(range(size)))
    g_self = [dist.new_group([r]) for r in range(size)]
    mine, members = (g_even, evens) if rank % 2 == 0 else (g_odd, odds)
    assert dist.get_backend(mine) == "pyhccl"
    assert mine.size() == len(members) and dist.get_rank(mine) == members.index(rank)
    t = vals(rank, 6, torch.int32)
    dist.all_reduce(t, group=mine)
    assert same(t, reduced("SUM", torch.int32, 6, size, members))
    # broadcast from a group's last member, named by its global rank
    b = vals(rank, 3, torch.float32)
    dist.broadcast(b, src=members[-1], group=mine)
    assert same(b, vals(members[-1], 3, torch.float32))
    u = vals(rank, 4, torch.bfloat16)
    dist.all_reduce(u, group=g_all)
    assert same(u, reduced("SUM", torch.bfloat16, 4, size))
    s = vals(rank, 2, torch.int64)
    dist.all_reduce(s, group=g_self[rank])
    assert same(s, vals(rank, 2, torch.int64))
    # ranks outside a group: torch returns without calling the backend
    other = g_odd if rank % 2 == 0 else g_even
    if other is not None:
        assert dist.all_reduce(torch.ones(1), group=other, async_op=True) is None
    dist.barrier()
    for g in [g_even, g_odd, g_all] + g_self:
        if g is not None:
            dist.destroy_process_group(g)


def test_subgroup_comm_comes_from_the_parent(rank, size):
    """A subgroup's communicator is a new Comm over the members whose root info went over
    the default group's connections (not the Store)."""
    from pyhccl.torch import ProcessGroupPyhccl
    world = dist.group.WORLD
    assert isinstance(world, ProcessGroupPyhccl)
    before = world._enq
    g = dist.new_group(list(range(size)))
    assert isinstance(g, ProcessGroupPyhccl)
    assert g.comm.size == size and g.comm.rank == rank
    assert world._enq == before + (1 if size > 1 else 0)   # one batched send/recv
    dist.destroy_process_group(g)


@pytest.mark.ranks(4)
def test_device_mesh_2d(rank, size):
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cpu", (2, size // 2), mesh_dim_names=("dp", "tp"))
    tp, dp = mesh["tp"].get_group(), mesh["dp"].get_group()
    tp_ranks = dist.get_process_group_ranks(tp)
    dp_ranks = dist.get_process_group_ranks(dp)
    t = vals(rank, 5, torch.float32)
    dist.all_reduce(t, group=tp)
    assert same(t, reduced("SUM", torch.float32, 5, size, tp_ranks))
    out = torch.empty(len(dp_ranks), 5)
    dist.all_gather_into_tensor(out, vals(rank, 5, torch.float32), group=dp)
    assert same(out, torch.stack([vals(r, 5, torch.float32) for r in dp_ranks]))


def test_device_mesh_1d_functional(rank, size):
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cpu", (size,))
    t = vals(rank, 4, torch.float32)
    r = funcol.all_reduce(t, "sum", mesh)
    assert same(torch.as_tensor(r.wait() if hasattr(r, "wait") else r),
                reduced("SUM", torch.float32, 4, size))
    g = funcol.all_gather_tensor(vals(rank, 3, torch.float32), 0, mesh)
    assert same(torch.as_tensor(g.wait() if hasattr(g, "wait") else g),
                torch.cat([vals(k, 3, torch.float32) for k in range(size)]))


def test_mismatch_in_a_subgroup_raises_on_every_rank(rank, size):
    if size == 1:
        pytest.skip("needs two ranks")
    g = dist.new_group(list(range(size)))
    t = torch.ones(4 + rank)                  # every rank a different count
    with pytest.raises(RuntimeError, match=r"pyhccl backend: all_reduce failed on rank "
                                           rf"{rank}.*differs between ranks.*rank \d"):
        dist.all_reduce(t, group=g)
    # the failed group keeps failing at once; the default group is unharmed
    with pytest.raises(RuntimeError, match="differs between ranks"):
        dist.all_reduce(torch.ones(1), group=g)
    x = torch.ones(2)
    dist.all_reduce(x)
    assert same(x, torch.full((2,), float(size)))
    dist.destroy_process_group(g)
