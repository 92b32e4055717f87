"""Fully sharded data-parallel training of the small GPT with FSDP2 (fully_shard) over "pyhccl".

The model of torch_ddp.py (examples/torchgpt) is sharded with fully_shard,
block by block and then as a whole, on a one-dimensional DeviceMesh of all
ranks (init_device_mesh("cpu", (world,))): each rank keeps 1/world of every
parameter, its gradient and its Adam state. In the forward and backward pass
each block's parameters are all-gathered just before use and freed after;
its gradients are reduce-scattered (averaged over the ranks), so each rank
updates only its shard. Training runs in float32.

It checks that
  - the gathered parameters are the same on every rank;
  - they match a single-process run of the same steps on the whole global
    batches (rank 0 replays them) within a relative 1e-4 (difference over
    the distance training moved them: the ranks' sums add in another order);
  - the validation loss fell by at least 5%;
and exits non-zero otherwise.

Run:  torchrun --nproc-per-node 4 examples/torch_fsdp.py [--steps N] [--backend gloo]
      mpirun -np 4 python examples/torch_fsdp.py
"""
import argparse
import copy
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

try:                                  # torch >= 2.6
    from torch.distributed.fsdp import fully_shard
except ImportError:                   # torch 2.4 and 2.5
    from torch.distributed._composable.fsdp import fully_shard

from tinygpt.data import Corpus
from torchgpt.launch import finish, init, log0
from torchgpt.model import GPT, GPTConfig, parameter_count
from torchgpt.training import (OptimizerFactory, evaluate, flat_params, global_batch, loss_of,
                               ranks_agree, reference_steps, relative_difference, shard)

TOLERANCE = 1e-4


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="pyhccl", help="torch.distributed backend (default pyhccl)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rows", type=int, default=16, help="sequences per global batch")
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--log-every", type=int, default=0, help="default: about 6 lines")
    a = p.parse_args()
    if a.steps < 1:
        p.error("--steps must be at least 1")
    return a


def gathered(model: torch.nn.Module) -> torch.Tensor:
    """Every parameter in full (an AllGather of each DTensor's shards), flat, in float32."""
    model.reshard()        # the root keeps its parameters gathered after a forward pass
    return torch.cat([p.detach().full_tensor().reshape(-1).float() for p in model.parameters()])


def main() -> int:
    a = parse_args()
    init(a.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if a.rows % world:
        log0(f"torch_fsdp: --rows {a.rows} does not split over {world} ranks")
        return finish(2)
    cfg = GPTConfig(context=a.context, width=a.width, layers=a.layers, heads=a.heads)
    corpus = Corpus()
    torch.manual_seed(0)
    model = GPT(cfg)
    start = flat_params(model)
    reference = copy.deepcopy(model) if rank == 0 else None
    mesh = init_device_mesh("cpu", (world,))
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    local = sum(p.to_local().numel() for p in model.parameters())
    make_opt = OptimizerFactory(a.lr)
    opt = make_opt(model)
    ranks = f"{world} rank{'s' if world > 1 else ''}"
    log0(f"torch_fsdp: GPT of {parameter_count(model) / 1e6:.2f} M parameters sharded over {ranks} "
         f"on {a.backend!r} (torch {torch.__version__}); rank 0 holds {local / 1e6:.2f} M of them, "
         f"global batch {a.rows}x{a.context} tokens, float32")
    val0 = evaluate(model, corpus, a.rows, a.context, bf16=False)
    log0(f"step {0:4d}  validation loss {val0:.3f}")
    log_every = a.log_every or max(1, a.steps // 6)
    seconds = 0.0
    for step in range(1, a.steps + 1):
        x, y = global_batch(corpus, a.rows, a.context, step)
        t0 = time.perf_counter()
        loss = loss_of(model, shard(x, rank, world), shard(y, rank, world))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        seconds += time.perf_counter() - t0
        if step % log_every == 0 or step == a.steps:
            val = evaluate(model, corpus, a.rows, a.context, bf16=False)
            log0(f"step {step:4d}  loss {loss.item():.3f}  validation loss {val:.3f}")
    log0(f"{a.steps * a.rows * a.context / seconds:,.0f} tokens/s over {ranks} "
         f"({seconds / a.steps * 1e3:.1f} ms per step)")
    val = evaluate(model, corpus, a.rows, a.context, bf16=False)
    full = gathered(model)
    agree = ranks_agree(full)
    diff = torch.zeros(1, dtype=torch.float64)
    if reference is not None:
        t0 = time.perf_counter()
        ref = reference_steps(reference, corpus, range(1, a.steps + 1), a.rows, a.context, False, make_opt)
        diff[0] = relative_difference(full, ref, start)
        log0(f"one process ran the same {a.steps} steps in {time.perf_counter() - t0:.1f} s")
    dist.broadcast(diff, src=0)
    checks = [("every rank gathers the same parameters", agree),
              (f"validation loss fell by 5% or more ({val0:.3f} -> {val:.3f})", val < 0.95 * val0),
              (f"the parameters match one process: relative difference {float(diff[0]):.1e} "
               f"(tolerance {TOLERANCE:g})", float(diff[0]) <= TOLERANCE)]
    for what, passed in checks:
        log0(f"{'PASS' if passed else 'FAIL'}  {what}")
    return finish(0 if all(passed for _, passed in checks) else 1)


if __name__ == "__main__":
    sys.exit(main())
