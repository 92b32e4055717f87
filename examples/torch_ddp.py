"""Data-parallel training of a small GPT with torch's DistributedDataParallel over "pyhccl".

The model (examples/torchgpt: causal self-attention, 4 layers, 3.2 M
parameters) learns the Python standard library's source character by
character, the same text as examples/train.py. Every rank holds the whole
model and trains on its shard of each global batch; DDP all-reduces the
gradients in buckets while the backward pass still runs. On CPUs with native
bf16 (AVX-512 BF16 or AMX) the forward and backward passes run under bf16
autocast (--bf16 auto); parameters, gradients and the AllReduce stay float32.

Communication is measured two ways, each a share of the step time:
  - in flight: the union of the intervals from each bucket's AllReduce start
    (DDP's communication hook, torch's allreduce_hook plus two clock reads) to
    the completion of its future; much of it overlaps the backward pass;
  - exposed: the forward+backward time of a step minus that of the same
    batch run just before it without communication (under ddp.no_sync(),
    every --probe-every steps; the median of those differences, slowest
    rank), i.e. what communication and waiting for peers added. Pairing each
    step with its own probe keeps a machine's changing load out of it.

It checks that
  - every rank holds bit-identical parameters at the end;
  - after the first --check-steps steps they match a single-process run of
    the same global batches within a relative 1e-4 in float32 and 5e-2 under
    bf16 autocast (difference over the distance training moved them; the
    ranks' partial sums add in another order, bf16 rounds differently per
    batch shape, and Adam's first steps move each weight by about the
    learning rate whatever its gradient's size, so weights whose tiny
    gradients change sign differ by twice that; a rank left out of the
    AllReduce gives about 0.6);
  - the validation loss fell by at least 5%.
It exits non-zero otherwise, and saves the model to examples/out/torchgpt.pt
for torch_tp.py.

Run:  torchrun --nproc-per-node 4 examples/torch_ddp.py [--steps N] [--backend gloo]
      mpirun -np 4 python examples/torch_ddp.py
"""
import argparse
import copy
import os
import sys
import time
from statistics import mean, median
from typing import List

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from tinygpt.data import Corpus
from torchgpt.launch import finish, init, log0
from torchgpt.model import GPT, GPTConfig, parameter_count
from torchgpt.training import (DEFAULT_CHECKPOINT, OptimizerFactory, CommTimer, autocast,
                               bf16_helps, evaluate, flat_params, global_batch, loss_of,
                               ranks_agree, reference_steps, relative_difference, shard,
                               timed_allreduce_hook)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="pyhccl",
                   help="torch.distributed backend (default pyhccl; gloo to compare)")
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--rows", type=int, default=16, help="sequences per global batch")
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--bucket-mb", type=float, default=4.0,
                   help="DDP bucket size (MB; the model's gradients are 12.8 MB, so DDP's "
                        "default of 25 would leave nothing to overlap)")
    p.add_argument("--bf16", choices=["auto", "on", "off"], default="auto")
    p.add_argument("--check-steps", type=int, default=2, help="steps compared with one process")
    p.add_argument("--probe-every", type=int, default=5,
                   help="time a step without communication every N steps")
    p.add_argument("--log-every", type=int, default=0, help="default: about 8 lines")
    p.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="'' to save nothing")
    a = p.parse_args()
    if a.steps < max(2, a.check_steps) or a.check_steps < 0 or a.probe_every < 1:
        p.error("need --steps >= --check-steps >= 0, --steps >= 2 (the first step is not "
                "timed: DDP builds its buckets) and --probe-every >= 1")
    return a


def main() -> int:
    a = parse_args()
    init(a.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if a.rows % world:
        log0(f"torch_ddp: --rows {a.rows} does not split over {world} ranks")
        return finish(2)
    bf16 = a.bf16 == "on" or (a.bf16 == "auto" and bf16_helps())
    cfg = GPTConfig(context=a.context, width=a.width, layers=a.layers, heads=a.heads)
    corpus = Corpus()
    torch.manual_seed(0)
    model = GPT(cfg)
    start = flat_params(model)
    reference = copy.deepcopy(model) if rank == 0 and a.check_steps else None
    ddp = DDP(model, bucket_cap_mb=a.bucket_mb)
    timer = CommTimer()
    ddp.register_comm_hook(timer, timed_allreduce_hook)
    make_opt = OptimizerFactory(a.lr)
    opt = make_opt(ddp)
    ranks = f"{world} rank{'s' if world > 1 else ''}"
    log0(f"torch_ddp: GPT of {parameter_count(model) / 1e6:.2f} M parameters, {ranks} over "
         f"{a.backend!r} (torch {torch.__version__}, {torch.get_num_threads()} threads per rank), "
         f"global batch {a.rows}x{a.context} tokens, {'bf16 autocast' if bf16 else 'float32'}, "
         f"buckets of {a.bucket_mb:g} MB")
    val0 = evaluate(ddp, corpus, a.rows, a.context, bf16)
    log0(f"step {0:4d}  validation loss {val0:.3f}")
    log_every = a.log_every or max(1, a.steps // 8)
    fb: List[float] = []        # forward+backward seconds of each step (with communication)
    stepped: List[float] = []   # whole step seconds
    flight: List[float] = []
    nosync: List[float] = []    # forward+backward of the same batch without communication
    paired: List[float] = []    # a probed step's forward+backward minus its probe's
    window = (0.0, 0)           # (seconds, tokens) since the last line
    check = None
    for step in range(1, a.steps + 1):
        x, y = global_batch(corpus, a.rows, a.context, step)
        x, y = shard(x, rank, world), shard(y, rank, world)
        if step % a.probe_every == 0:       # the same work, no AllReduce
            t0 = time.perf_counter()
            with ddp.no_sync():
                with autocast(bf16):
                    loss = loss_of(ddp, x, y)
                loss.backward()
            nosync.append(time.perf_counter() - t0)
            opt.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        with autocast(bf16):
            loss = loss_of(ddp, x, y)
        loss.backward()                     # DDP's AllReduces run during and finish in here
        t1 = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t2 = time.perf_counter()
        if step > 1:                        # the first step builds DDP's buckets
            fb.append(t1 - t0)
            stepped.append(t2 - t0)
            flight.append(timer.in_flight(t0, t1))
            if step % a.probe_every == 0:
                paired.append(fb[-1] - nosync[-1])
        else:
            timer.intervals.clear()
        window = (window[0] + t2 - t0, window[1] + a.rows * a.context)
        if step == a.check_steps:
            check = compare_with_one_process(a, ddp, reference, corpus, start, bf16, make_opt)
        if step % log_every == 0 or step == a.steps:
            val = evaluate(ddp, corpus, a.rows, a.context, bf16)
            log0(f"step {step:4d}  loss {loss.item():.3f}  validation loss {val:.3f}  "
                 f"{window[1] / window[0]:8,.0f} tokens/s")
            window = (0.0, 0)
    val = evaluate(ddp, corpus, a.rows, a.context, bf16)
    agree = ranks_agree(flat_params(ddp.module))
    ok = report(a, fb, stepped, flight, nosync, paired, val0, val, agree, check, bf16)
    if ok and rank == 0 and a.checkpoint:
        os.makedirs(os.path.dirname(os.path.abspath(a.checkpoint)), exist_ok=True)
        torch.save({"config": cfg.as_dict(), "model": ddp.module.state_dict()}, a.checkpoint)
        log0(f"saved {a.checkpoint}")
    return finish(0 if ok else 1)


def compare_with_one_process(a: argparse.Namespace, ddp: DDP, reference: "GPT | None", corpus: Corpus,
                             start: torch.Tensor, bf16: bool, make_opt: OptimizerFactory) -> float:
    """Rank 0 trains a copy of the initial model on the whole global batches of the first
    steps; returns its relative difference from the distributed parameters (on rank 0)."""
    diff = torch.zeros(1, dtype=torch.float64)
    if reference is not None:
        ref = reference_steps(reference, corpus, range(1, a.check_steps + 1), a.rows, a.context,
                              bf16, make_opt)
        diff[0] = relative_difference(flat_params(ddp.module), ref, start)
    dist.broadcast(diff, src=0)
    return float(diff[0])


def report(a: argparse.Namespace, fb: List[float], stepped: List[float], flight: List[float],
           nosync: List[float], paired: List[float], val0: float, val: float, agree: bool,
           check: "float | None", bf16: bool) -> bool:
    world = dist.get_world_size()
    # the slowest rank's numbers: it sets the pace
    stats = torch.tensor([mean(fb), mean(stepped), mean(flight), mean(nosync) if nosync else 0.0,
                          median(paired) if paired else 0.0], dtype=torch.float64)
    dist.all_reduce(stats, op=dist.ReduceOp.MAX)
    t_fb, t_step, t_flight, t_compute, t_paired = (float(v) for v in stats)
    exposed = min(max(t_paired, 0.0), t_fb) if paired else float("nan")
    tol = 5e-2 if bf16 else 1e-4
    ranks = f"{world} rank{'s' if world > 1 else ''}"
    alone = (f", the same without communication {t_compute * 1e3:.1f} ms" if paired else
             f" (no step probed without communication: fewer than {a.probe_every} steps)")
    log0(f"step time {t_step * 1e3:.1f} ms ({a.rows * a.context / t_step:,.0f} tokens/s over {ranks}), "
         f"forward+backward {t_fb * 1e3:.1f} ms{alone}")
    shown = f"{exposed * 1e3:.1f} ms = {exposed / t_step:.0%} of the step" if paired else "not measured"
    log0(f"communication ({a.backend}): in flight {t_flight * 1e3:.1f} ms = "
         f"{t_flight / t_step:.0%} of the step, exposed {shown}")
    checks = [("every rank holds the same parameters", agree),
              (f"validation loss fell by 5% or more ({val0:.3f} -> {val:.3f})", val < 0.95 * val0)]
    if check is not None:
        checks.append((f"after {a.check_steps} steps the parameters match one process: relative "
                       f"difference {check:.1e} (tolerance {tol:g})", check <= tol))
    for what, passed in checks:
        log0(f"{'PASS' if passed else 'FAIL'}  {what}")
    return all(passed for _, passed in checks)


if __name__ == "__main__":
    sys.exit(main())
