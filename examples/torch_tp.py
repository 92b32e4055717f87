"""Tensor-parallel generation with the small GPT over "pyhccl": DTensor's parallelize_module.

Each block is split over all ranks with ColwiseParallel (query, key, value,
MLP up) and RowwiseParallel (attention output, MLP down) on a DeviceMesh
(examples/torchgpt/tensor_parallel.py): two AllReduces per block and
generated token. Where the installed torch cannot run DTensor over this
backend, the same split runs with explicit dist.all_reduce calls; the program
says which it used and why (--mode forces one).

The weights are torch_ddp.py's checkpoint (examples/out/torchgpt.pt) when
it exists, else the untrained model of the same seed (it says which). It
greedily continues 8 prompts from the validation text by 32 tokens, the
whole context re-read at each token (no key/value cache), and prints
milliseconds per generated token, with the share that tensor parallelism
adds: the step time minus that of the same ranks' computation with the
AllReduces skipped (by_hand(communicate=False), slowest rank). That is the
communication, and with DTensor also its dispatch. The timed pass follows an
untimed one over the same prompts: the sequence grows by a token per step,
and DTensor's sharding propagation caches per shape, so the first pass over
new shapes is several times slower.

It checks that
  - every rank generated the same tokens;
  - one process running the whole model on the generated sequences gives
    the same logits within 1e-4 (absolute; they are of order 10) at every
    position, and picks the same tokens (up to that tolerance);
and exits non-zero otherwise.

Run:  torchrun --nproc-per-node 4 examples/torch_tp.py [--mode dtensor|manual]
      mpirun -np 4 python examples/torch_tp.py
"""
import argparse
import copy
import os
import sys
import time
from typing import List, Optional, Tuple

import torch
import torch.distributed as dist

from tinygpt.data import Corpus, decode
from torchgpt.launch import finish, init, log0
from torchgpt.model import GPT, GPTConfig
from torchgpt.tensor_parallel import by_hand, set_communicate, with_dtensor
from torchgpt.training import DEFAULT_CHECKPOINT

TOLERANCE = 1e-4


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="pyhccl", help="torch.distributed backend (default pyhccl)")
    p.add_argument("--mode", choices=["auto", "dtensor", "manual"], default="auto",
                   help="auto: DTensor where it works on this torch and backend, else explicit AllReduces")
    p.add_argument("--prompts", type=int, default=8)
    p.add_argument("--prompt-tokens", type=int, default=16)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT)
    return p.parse_args()


def load(path: str) -> Tuple[GPT, str]:
    """The checkpoint's model, or the untrained one of seed 0; and a line saying which."""
    if path and os.path.exists(path):
        saved = torch.load(path, map_location="cpu")
        model = GPT(GPTConfig(**saved["config"]))
        model.load_state_dict(saved["model"])
        return model, f"weights from {path}"
    torch.manual_seed(0)
    return GPT(GPTConfig()), f"untrained weights (no {path}; run torch_ddp.py first to train them)"


def generate(model: torch.nn.Module, prompts: torch.Tensor, new: int) -> Tuple[torch.Tensor, List[float]]:
    """Greedy continuation of `prompts` by `new` tokens; and each token's seconds."""
    ids, times = prompts, []
    with torch.no_grad():
        for _ in range(new):
            t0 = time.perf_counter()
            logits = model(ids)[:, -1]
            ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
            times.append(time.perf_counter() - t0)
    return ids, times


def compute_alone(model: GPT, prompts: torch.Tensor, new: int, rank: int, world: int) -> float:
    """Seconds per token of this rank's share of the work with the AllReduces skipped."""
    shard = by_hand(copy.deepcopy(model), rank, world)
    set_communicate(shard, False)
    _, times = generate(shard, prompts, new)
    return float(sum(times[1:])) / max(len(times) - 1, 1)


def split(model: GPT, mode: str, rank: int, world: int) -> Tuple[torch.nn.Module, str]:
    """The tensor-parallel model and a line saying how it was split."""
    reason: Optional[str] = None
    if mode in ("auto", "dtensor"):
        try:
            tp = with_dtensor(copy.deepcopy(model), world)
            with torch.no_grad():
                tp(torch.zeros(1, 4, dtype=torch.long))     # DTensor's collectives run here
            return tp, (f"DTensor: parallelize_module (ColwiseParallel, RowwiseParallel) on "
                        f"torch {torch.__version__} runs over {dist.get_backend()!r}")
        except Exception as e:  # noqa: BLE001  (any failure of DTensor here means: use the fallback)
            if mode == "dtensor":
                raise
            reason = f"{type(e).__name__}: {e}".splitlines()[0][:200]
    how = "explicit dist.all_reduce calls (--mode manual)"
    if reason:
        how = (f"explicit dist.all_reduce calls: DTensor's parallelize_module failed on torch "
               f"{torch.__version__} over {dist.get_backend()!r} ({reason})")
    return by_hand(copy.deepcopy(model), rank, world), how


def main() -> int:
    a = parse_args()
    init(a.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    model, source = load(a.checkpoint)
    model.eval()
    if a.prompt_tokens + a.new_tokens > model.cfg.context:
        log0(f"torch_tp: {a.prompt_tokens} + {a.new_tokens} tokens exceed the context of "
             f"{model.cfg.context}")
        return finish(2)
    if model.cfg.heads % world:
        log0(f"torch_tp: the model's {model.cfg.heads} heads do not split over {world} ranks")
        return finish(2)
    prompts = torch.from_numpy(Corpus().prompts(a.prompts, a.prompt_tokens))
    tp, how = split(model, a.mode, rank, world)
    log0(f"torch_tp: {world} rank{'s' if world > 1 else ''} over {a.backend!r}, {source}")
    log0(f"split: {how}")
    generate(tp, prompts, a.new_tokens)      # warm-up: every shape once (DTensor caches per shape)
    ids, times = generate(tp, prompts, a.new_tokens)
    alone = compute_alone(model, prompts, a.new_tokens, rank, world)
    step = torch.tensor([sum(times[1:]) / max(len(times) - 1, 1), alone], dtype=torch.float64)
    dist.all_reduce(step, op=dist.ReduceOp.MAX)
    t_step, t_alone = float(step[0]), float(step[1])
    added = min(max(t_step - t_alone, 0.0), t_step)
    log0(f"{t_step * 1e3:.2f} ms per generated token (batch of {a.prompts}); the ranks' computation "
         f"alone takes {t_alone * 1e3:.2f} ms, the {2 * model.cfg.layers} AllReduces per token"
         f"{' and DTensor' if how.startswith('DTensor') else ''} add {added * 1e3:.2f} ms = "
         f"{added / t_step:.0%}")
    for row in range(min(2, a.prompts)):
        log0(f"  {decode(ids[row, :a.prompt_tokens].numpy())!r} -> "
             f"{decode(ids[row, a.prompt_tokens:].numpy())!r}")

    same = ids.clone()
    dist.broadcast(same, src=0)
    differ = torch.tensor([int(not torch.equal(same, ids))])
    dist.all_reduce(differ)
    verdict = torch.zeros(2, dtype=torch.float64)
    if rank == 0:
        with torch.no_grad():
            ref = model(ids[:, :-1])[:, a.prompt_tokens - 1:]          # logits that chose each new token
            mine = tp(ids[:, :-1])[:, a.prompt_tokens - 1:]
        chosen = ids[:, a.prompt_tokens:]
        verdict[0] = float((ref - mine).abs().max())
        gap = ref.max(-1).values - ref.gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
        verdict[1] = float(gap.max())                                  # 0 where greedy agrees
    else:
        with torch.no_grad():
            tp(ids[:, :-1])                                           # rank 0's forward needs every rank
    dist.broadcast(verdict, src=0)
    checks = [("every rank generated the same tokens", int(differ.item()) == 0),
              (f"one process gives the same logits: largest difference {float(verdict[0]):.1e} "
               f"(tolerance {TOLERANCE:g})", float(verdict[0]) <= TOLERANCE),
              (f"one process picks the same tokens (largest logit gap {float(verdict[1]):.1e})",
               float(verdict[1]) <= 2 * TOLERANCE)]
    for what, passed in checks:
        log0(f"{'PASS' if passed else 'FAIL'}  {what}")
    return finish(0 if all(passed for _, passed in checks) else 1)


if __name__ == "__main__":
    sys.exit(main())
