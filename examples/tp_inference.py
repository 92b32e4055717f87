"""Tensor-parallel (Megatron-style) text generation with the small GPT.

Each rank holds 1/N of every layer (examples/tinygpt/infer.py: tp_shard):
  - attention: the query/key/value columns of its heads (column-parallel, no
    communication), then the matching rows of the output projection
    (row-parallel): each rank has a partial sum, combined by one AllReduce;
  - MLP: a column slice of the first layer, the matching rows of the second,
    again one AllReduce;
  - embedding: a slice of the embedding width; AllGather joins the slices;
  - output layer: a slice of the vocabulary; AllGather joins the logits.
So a token costs 2 AllReduces per layer and 2 AllGathers. AllReduce gives
every rank the same bits and AllGather copies, so every rank samples the
same tokens with no further communication.

The weights come from examples/train.py's checkpoint (or rank 0 trains
briefly if there is none) and are broadcast from rank 0. The program checks
that every rank generated the same tokens and that they are exactly those
of single-process generation, and reports the latency per token and the part
of it spent in communication, beside the same generation in one process
(rank 0's reference run, timed alike). With this small model and batch
(216k parameters, 8 prompts) a token's arithmetic takes about a millisecond,
less than its 10 collectives' round trips, so the example shows the pattern,
not a speed-up. A larger batch (--prompts 256) lowers the collectives'
share; a speed-up also needs a core per rank.

Run:  mpirun -np 4 python examples/tp_inference.py [--new-tokens N]
"""
import argparse
import os
import sys
import time
from typing import List, Tuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # ranks share the cores: one BLAS thread each
import numpy as np  # noqa: E402

import pyhccl  # noqa: E402
from tinygpt.data import Corpus, decode  # noqa: E402
from tinygpt.dist import DEFAULT_CHECKPOINT, all_agree, from_root, load_or_train, log0, on_device, start  # noqa: E402
from tinygpt.infer import check_length, draws, forward_cached, generate, new_cache, tp_shard  # noqa: E402
from tinygpt.model import Array, Ids  # noqa: E402


class TensorParallel:
    """The two collectives of tensor parallelism, timed on the host."""

    def __init__(self, comm: pyhccl.Comm, stream: pyhccl.Stream) -> None:
        self.comm, self.stream, self.seconds = comm, stream, 0.0

    def all_reduce(self, partial: Array) -> Array:
        """Return the sum over ranks of each rank's `partial`."""
        t0 = time.perf_counter()
        out = on_device(self.stream, partial,
                        lambda d: self.comm.all_reduce(d, op=pyhccl.SUM, stream=self.stream))
        self.seconds += time.perf_counter() - t0
        return out

    def all_gather(self, piece: Array) -> Array:
        """Return the ranks' `piece`s joined along the last axis (rank order)."""
        t0 = time.perf_counter()
        size = self.comm.size
        whole = pyhccl.empty((size,) + piece.shape, piece.dtype)
        mine = pyhccl.asarray(np.ascontiguousarray(piece), stream=self.stream)
        self.comm.all_gather(mine, whole, stream=self.stream)
        out = whole.get(stream=self.stream)
        self.stream.synchronize()
        self.seconds += time.perf_counter() - t0
        return np.moveaxis(out, 0, -2).reshape(piece.shape[:-1] + (size * piece.shape[-1],))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=8, help="prompts generated together (batch)")
    ap.add_argument("--prompt-len", type=int, default=24, help="tokens per prompt")
    ap.add_argument("--new-tokens", type=int, default=40, help="tokens generated per prompt")
    ap.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="weights from train.py")
    ap.add_argument("--train-steps", type=int, default=100,
                    help="steps rank 0 trains first if there is no checkpoint")
    args = ap.parse_args()

    comm, stream = start()
    rank, size = comm.rank, comm.size
    params, cfg = load_or_train(comm, stream, args.checkpoint, args.train_steps)
    try:
        shard = tp_shard(params, cfg, rank, size)
        check_length(cfg, args.prompt_len, args.new_tokens)
    except ValueError as exc:
        log0(comm, f"tp_inference: {exc}")
        return 2
    log0(comm, f"{size} rank(s), {shard.n_head} of {cfg.n_head} heads and "
         f"{4 * cfg.n_embd // size} of {4 * cfg.n_embd} MLP columns per rank")
    prompts = Corpus().prompts(args.prompts, args.prompt_len)
    uniforms = draws(range(args.prompts), args.new_tokens)

    tp = TensorParallel(comm, stream)
    cache = new_cache(shard, cfg, args.prompts)
    steps: List[Tuple[float, float]] = []         # (seconds, seconds in collectives) per new token

    def run(tokens: Ids, pos: int) -> Array:
        if tokens.shape[1] > 1:                  # the prompts themselves: not a decoding step
            return forward_cached(shard, cfg, tokens, pos, cache, tp.all_reduce, tp.all_gather)
        comm_before, t0 = tp.seconds, time.perf_counter()
        logits = forward_cached(shard, cfg, tokens, pos, cache, tp.all_reduce, tp.all_gather)
        steps.append((time.perf_counter() - t0, tp.seconds - comm_before))
        return logits

    tokens, _ = generate(run, prompts, uniforms)
    timed = np.array(steps[1:] or steps or [(np.nan, np.nan)])     # the first step warms up
    per_token_ms, comm_ms = 1000 * timed.mean(0)

    # Every rank must have sampled the same tokens.
    everyone = on_device(stream, np.zeros((size,) + tokens.shape, np.int64),
                         lambda d: comm.all_gather(pyhccl.asarray(tokens, stream=stream), d,
                                                   stream=stream))
    same = all_agree(comm, stream, all(np.array_equal(t, tokens) for t in everyone))
    differ, single_ms = 0, 0.0
    if rank == 0:          # the reference: the whole model in one process, timed like the shards
        whole = tp_shard(params, cfg, 0, 1)
        whole_cache = new_cache(whole, cfg, args.prompts)
        single: List[float] = []

        def run_whole(tokens: Ids, pos: int) -> Array:
            t0 = time.perf_counter()
            logits = forward_cached(whole, cfg, tokens, pos, whole_cache)
            if tokens.shape[1] == 1:
                single.append(time.perf_counter() - t0)
            return logits

        ref, _ = generate(run_whole, prompts, uniforms)
        single_ms = 1000 * float(np.mean(single[1:] or single or [np.nan]))
        differ = int(np.count_nonzero(ref != tokens))
        for p, t in list(zip(prompts, tokens))[:3]:
            print(f"  {decode(p)!r} -> {decode(t)!r}")
    differ = int(from_root(comm, stream, differ))
    log0(comm, f"{size} rank(s): {per_token_ms:.2f} ms per token (a batch of {args.prompts} prompts), "
         f"{comm_ms:.2f} ms of it in its {2 * cfg.n_layer + 2} collectives "
         f"({100 * comm_ms / per_token_ms:.0f}%); 1 process, the whole model: {single_ms:.2f} ms per token")
    log0(comm, f"tokens identical on all ranks: {same}; tokens that differ from single-process "
         f"generation: {differ} of {tokens.size}")
    ok = same and differ == 0
    log0(comm, "generation verified" if ok else "GENERATION CHECK FAILED")
    stream.destroy()
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
