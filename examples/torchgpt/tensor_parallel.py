"""Two ways to split the GPT's blocks Megatron-style over the ranks of a group.

Each rank keeps its heads' columns of the query, key and value projections
and the matching rows of the attention output projection, and a column slice
of the MLP's first layer with the matching rows of its second. The
column-parallel products need no communication; each row-parallel product
leaves a partial sum that one AllReduce completes: two per block.

- with_dtensor(): torch's own way, parallelize_module with ColwiseParallel and
  RowwiseParallel on a DeviceMesh (DTensor and functional collectives);
- by_hand(): the same split with plain tensors and explicit dist.all_reduce
  calls, for torch releases whose DTensor cannot run over a Python backend.
  communicate=False skips the AllReduces (wrong results): it times the
  ranks' own computation alone.
"""
from typing import Dict

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from .model import GPT


def check_split(model: GPT, world: int) -> None:
    cfg = model.cfg
    if cfg.heads % world:
        raise ValueError(f"tensor parallelism: {cfg.heads} heads do not split over {world} ranks")


def with_dtensor(model: GPT, world: int) -> GPT:
    """Split `model` in place with parallelize_module on a one-dimensional CPU mesh; returns it."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
    check_split(model, world)
    mesh = init_device_mesh("cpu", (world,))
    plan: Dict[str, object] = {}
    for i in range(len(model.blocks)):
        for name in ("attn.q", "attn.k", "attn.v", "mlp.up"):
            plan[f"blocks.{i}.{name}"] = ColwiseParallel()
        for name in ("attn.out", "mlp.down"):
            plan[f"blocks.{i}.{name}"] = RowwiseParallel()
    parallelize_module(model, mesh, plan)  # type: ignore[arg-type, unused-ignore]
    return model


class RowParallelLinear(nn.Module):  # type: ignore[misc, unused-ignore]
    """This rank's share of a Linear's input features: a partial product that one AllReduce sums."""

    def __init__(self, full: nn.Linear, rank: int, world: int) -> None:
        super().__init__()
        cols = full.in_features // world
        self.weight = nn.Parameter(full.weight.detach()[:, rank * cols:(rank + 1) * cols].clone())
        self.bias = nn.Parameter(full.bias.detach().clone())
        self.communicate = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.weight)
        if self.communicate:
            dist.all_reduce(y)
        return y + self.bias            # the bias once, after the sum


def _column_slice(full: nn.Linear, rank: int, world: int) -> nn.Linear:
    rows = full.out_features // world
    part = nn.Linear(full.in_features, rows)
    with torch.no_grad():
        part.weight.copy_(full.weight[rank * rows:(rank + 1) * rows])
        part.bias.copy_(full.bias[rank * rows:(rank + 1) * rows])
    return part


def by_hand(model: GPT, rank: int, world: int) -> GPT:
    """Split `model` in place into rank `rank`'s shard with explicit AllReduces; returns it."""
    check_split(model, world)
    for block in model.blocks:
        attn, mlp = block.attn, block.mlp
        attn.q, attn.k, attn.v = (_column_slice(m, rank, world) for m in (attn.q, attn.k, attn.v))
        attn.out = RowParallelLinear(attn.out, rank, world)
        mlp.up = _column_slice(mlp.up, rank, world)
        mlp.down = RowParallelLinear(mlp.down, rank, world)
    return model


def set_communicate(model: nn.Module, on: bool) -> None:
    """Switch the AllReduces of a by_hand() model on or off."""
    for m in model.modules():
        if isinstance(m, RowParallelLinear):
            m.communicate = on
