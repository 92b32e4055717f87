"""What the torch examples share: batches of the stdlib text, evaluation,
precision choice, the DDP communication timer and the cross-rank checks."""
import os
import time
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
from torch import nn

from tinygpt.data import Corpus  # the same text and vocabulary as examples/train.py

from .model import GPT, cross_entropy

DEFAULT_CHECKPOINT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                  "out", "torchgpt.pt")


def global_batch(corpus: Corpus, rows: int, length: int, step: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets) of step `step`'s global batch; the same on every rank."""
    x, y = corpus.batch("train", rows, length, seed=1000 + step)
    return torch.from_numpy(x), torch.from_numpy(y)


def shard(t: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """Rank `rank`'s rows of a global batch."""
    if t.shape[0] % world:
        raise ValueError(f"shard: a batch of {t.shape[0]} rows does not split over {world} ranks")
    per = t.shape[0] // world
    return t[rank * per:(rank + 1) * per]


def bf16_helps() -> bool:
    """True where the CPU multiplies bf16 natively (AVX-512 BF16 or AMX), so autocast is faster."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


def autocast(enabled: bool) -> torch.autocast:
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled)


def evaluate(model: nn.Module, corpus: Corpus, rows: int, length: int, bf16: bool,
             batches: int = 2) -> float:
    """Mean validation loss over fixed batches (the same on every rank and every call)."""
    was = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        for b in range(batches):
            x, y = corpus.batch("val", rows, length, seed=b)
            with autocast(bf16):
                total += float(loss_of(model, torch.from_numpy(x), torch.from_numpy(y)))
    model.train(was)
    return total / batches


def loss_of(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats per token) of the GPT, bare or wrapped by DDP or FSDP."""
    return cross_entropy(model(x), y)


class CommTimer:
    """The state of timed_allreduce_hook: when each bucket's AllReduce started and when
    its future completed. in_flight() is the union of those intervals in a window: time
    during which at least one bucket was being reduced, never more than the window."""

    def __init__(self, group: Optional[dist.ProcessGroup] = None) -> None:
        self.group = group
        self.intervals: List[Tuple[float, float]] = []
        self.buckets: Dict[int, Tuple[int, torch.dtype]] = {}    # index -> (elements, dtype)

    def in_flight(self, t0: float, t1: float) -> float:
        """Seconds within [t0, t1] during which some AllReduce was in flight; clears the record."""
        spans = sorted((max(a, t0), min(b, t1)) for a, b in self.intervals)
        self.intervals.clear()
        total, end = 0.0, t0
        for a, b in spans:
            if b > max(a, end):
                total += b - max(a, end)
            end = max(end, b)
        return total


def timed_allreduce_hook(timer: CommTimer, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """A DDP communication hook: torch's allreduce_hook (divide by the world size, then sum
    asynchronously) with two clock reads, at the start and when the future completes."""
    start = time.perf_counter()
    buf = bucket.buffer()
    timer.buckets[bucket.index()] = (buf.numel(), buf.dtype)
    buf.div_(dist.get_world_size(timer.group))
    fut = dist.all_reduce(buf, group=timer.group, async_op=True).get_future()

    def done(f: torch.futures.Future[List[torch.Tensor]]) -> torch.Tensor:
        timer.intervals.append((start, time.perf_counter()))
        return f.value()[0]
    return fut.then(done)


def flat_params(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1).float() for p in model.parameters()])


def ranks_agree(flat: torch.Tensor, group: Optional[dist.ProcessGroup] = None) -> bool:
    """True when every rank holds the same bits as rank 0 (broadcast, compare, sum the verdicts)."""
    ref = flat.clone()
    dist.broadcast(ref, src=0, group=group)
    differ = torch.tensor([int(not torch.equal(ref, flat))], dtype=torch.int64)
    dist.all_reduce(differ, group=group)
    return int(differ.item()) == 0


def relative_difference(a: torch.Tensor, b: torch.Tensor, start: torch.Tensor) -> float:
    """|a - b| relative to how far training moved b from `start` (norms over all parameters)."""
    moved = float((b - start).norm())
    return float((a - b).norm()) / max(moved, 1e-30)


def reference_steps(model: GPT, corpus: Corpus, steps: Sequence[int], rows: int, length: int,
                    bf16: bool, make_optimizer: "OptimizerFactory") -> torch.Tensor:
    """One process trains `model` on the whole global batch of each step; returns its flat parameters."""
    opt = make_optimizer(model)
    for step in steps:
        x, y = global_batch(corpus, rows, length, step)
        with autocast(bf16):
            loss = loss_of(model, x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return flat_params(model)


class OptimizerFactory:
    """AdamW with the examples' settings, built the same way for the distributed and the reference model."""

    def __init__(self, lr: float) -> None:
        self.lr = lr

    def __call__(self, model: nn.Module) -> torch.optim.Optimizer:
        return torch.optim.AdamW(model.parameters(), lr=self.lr, betas=(0.9, 0.95), weight_decay=0.0)
