"""Pipeline-parallel text generation with the small GPT.

The model's layers are split into consecutive stages, one per rank: rank 0
also embeds the tokens, the last rank also applies the output layer and
samples. The prompts are split into micro-batches (at least one per stage).
The pipeline runs in ticks: in each tick every stage works on a different
micro-batch, then all stages exchange, in one group of Send/Recv calls,
stage s's activations to stage s+1, and the last stage's new tokens back to
stage 0, which feeds them in for the next position. With as many
micro-batches as stages every stage is busy in every tick except while the
pipeline fills and drains.

The program checks the tokens against single-process generation (exactly)
and reports the pipeline's idle fraction: the share of each stage's time not
spent computing (filling and draining, waiting for the slowest stage, and
the transfers), averaged over the stages, and its throughput beside that of
the same generation in one process (rank 0's reference run). A pipeline
splits a model too big for one device; it does not make a model that fits
faster: at best, with a core per stage and no idle time, it matches one
process's throughput, and here it shows the pattern, not a speed-up.

Run:  mpirun -np 4 python examples/pp_inference.py [--new-tokens N] [--micro-batches M]
"""
import argparse
import os
import sys
import time
from typing import Any, Dict, Optional, Tuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # ranks share the cores: one BLAS thread each
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

import pyhccl  # noqa: E402
from tinygpt.data import Corpus, decode  # noqa: E402
from tinygpt.dist import DEFAULT_CHECKPOINT, from_root, load_or_train, log0, on_device, start  # noqa: E402
from tinygpt.infer import block, check_length, draws, embed, generate_single, head, new_cache, sample, tp_shard  # noqa: E402
from tinygpt.model import Array, Config, Ids, Params  # noqa: E402

# What a stage takes and passes on: token ids (int64) into and out of the pipeline,
# activations (float64) between stages, so its element type depends on the stage.
Message = npt.NDArray[Any]


class Stage:
    """One rank's layers of the pipeline and its key/value caches, one per micro-batch."""

    def __init__(self, params: Params, cfg: Config, stage: int, stages: int, micro_batches: int,
                 rows: int) -> None:
        self.cfg, self.stage, self.stages = cfg, stage, stages
        self.first, self.last = stage == 0, stage == stages - 1
        self.layers = range(stage * cfg.n_layer // stages, (stage + 1) * cfg.n_layer // stages)
        self.model = tp_shard(params, cfg, 0, 1)          # whole layers (no tensor split)
        self.caches = [new_cache(self.model, cfg, rows, self.layers) for _ in range(micro_batches)]

    def run(self, x: Message, m: int, pos: int) -> Array:
        """Run this stage's layers on micro-batch m; x is token ids on the first stage."""
        if self.first:
            x = embed(self.model, x, pos)
        for layer in self.layers:
            x = block(self.model, layer, x, self.caches[m][layer], pos)
        return head(self.model, x) if self.last else x


def pipeline_generate(comm: pyhccl.Comm, stream: pyhccl.Stream, stage: Stage, prompts: Ids,
                      uniforms: Array, micro_batches: int) -> Tuple[Optional[Ids], float, float]:
    """Generate on the pipeline; return (tokens on the last stage, else None), compute s, wall s."""
    s, stages, cfg = comm.rank, comm.size, stage.cfg
    n_new, plen = uniforms.shape[1], prompts.shape[1]
    rows = len(prompts) // micro_batches
    mb = [slice(m * rows, (m + 1) * rows) for m in range(micro_batches)]
    total = n_new * micro_batches                  # work items (t, m) = divmod(j, micro_batches)
    out = np.zeros((len(prompts), n_new), np.int64)
    pending: Dict[int, Message] = {}               # stage 0: next input token of each micro-batch
    inbox: Optional[Message] = None                # stages > 0: activations for this tick
    prev, nxt = (s - 1) % stages, (s + 1) % stages

    def item(stage_index: int, tick: int) -> Optional[Tuple[int, int]]:
        j = tick - stage_index
        return divmod(j, micro_batches) if 0 <= j < total else None

    def carries(stage_index: int, work: Optional[Tuple[int, int]]) -> bool:
        """Whether a stage's result for `work` travels on (the last token of a row does not)."""
        return work is not None and (stage_index < stages - 1 or work[0] < n_new - 1)

    compute = 0.0
    t_start = time.perf_counter()
    for tick in range(total + stages - 1):
        work = item(s, tick)
        result: Optional[Message] = None
        if work is not None:
            t, m = work
            t0 = time.perf_counter()
            x = (prompts[mb[m]] if t == 0 else pending[m][:, None]) if stage.first else inbox
            assert x is not None                   # stages > 0: the previous stage sent it last tick
            result = stage.run(x, m, 0 if t == 0 else plen + t - 1)
            if stage.last:
                result = sample(result, uniforms[mb[m], t])
                out[mb[m], t] = result
            compute += time.perf_counter() - t0
        # Exchange: my result to the next stage, the previous stage's result to me.
        incoming = item(prev, tick) if carries(prev, item(prev, tick)) else None
        if stages == 1:
            received = result if incoming is not None else None
        else:
            if incoming is not None:
                t_in = incoming[0]
                shape = (rows,) if prev == stages - 1 else (rows, plen if t_in == 0 else 1, cfg.n_embd)
                recv_buf = pyhccl.empty(shape, np.int64 if prev == stages - 1 else np.float64)
            with pyhccl.group():
                if carries(s, work):
                    comm.send(pyhccl.asarray(np.ascontiguousarray(result), stream=stream), nxt,
                              stream=stream)
                if incoming is not None:
                    comm.recv(recv_buf, prev, stream=stream)
            received = recv_buf.get(stream=stream) if incoming is not None else None
            stream.synchronize()
        if incoming is not None:
            assert received is not None            # this tick's recv (or, on one stage, its own result)
            if stage.first:
                pending[incoming[1]] = received
            else:
                inbox = received
    wall = time.perf_counter() - t_start
    return (out if stage.last else None), compute, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=32, help="prompts in all")
    ap.add_argument("--micro-batches", type=int, default=0,
                    help="micro-batches (default: one per stage; at least one per stage)")
    ap.add_argument("--prompt-len", type=int, default=24, help="tokens per prompt")
    ap.add_argument("--new-tokens", type=int, default=40, help="tokens generated per prompt")
    ap.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="weights from train.py")
    ap.add_argument("--train-steps", type=int, default=100,
                    help="steps rank 0 trains first if there is no checkpoint")
    args = ap.parse_args()

    comm, stream = start()
    rank, size = comm.rank, comm.size
    params, cfg = load_or_train(comm, stream, args.checkpoint, args.train_steps)
    mbs = args.micro_batches or size
    problem = None
    if size > cfg.n_layer:
        problem = f"{size} stages but only {cfg.n_layer} layers"
    elif mbs < size or args.prompts % mbs:
        problem = f"--micro-batches ({mbs}) must be >= the {size} stages and divide --prompts ({args.prompts})"
    else:
        try:
            check_length(cfg, args.prompt_len, args.new_tokens)
        except ValueError as exc:
            problem = str(exc)
    if problem:
        log0(comm, f"pp_inference: {problem}")
        return 2
    stage = Stage(params, cfg, rank, size, mbs, args.prompts // mbs)
    prompts = Corpus().prompts(args.prompts, args.prompt_len)
    uniforms = draws(range(args.prompts), args.new_tokens)
    log0(comm, f"{size} stage(s) of {cfg.n_layer // size}-{-(-cfg.n_layer // size)} layers; "
         f"{mbs} micro-batches of {args.prompts // mbs} prompts")

    tokens, compute, wall = pipeline_generate(comm, stream, stage, prompts, uniforms, mbs)
    idle = on_device(stream, np.array([1.0 - compute / wall]),
                     lambda d: comm.all_reduce(d, op=pyhccl.SUM, stream=stream))[0] / size
    wall = from_root(comm, stream, wall, root=size - 1)
    tokens = on_device(stream, np.zeros(uniforms.shape, np.int64) if tokens is None else tokens,
                       lambda d: comm.broadcast(d, size - 1, stream=stream))     # the last stage's
    differ, single_s = 0, 0.0
    if rank == 0:
        t0 = time.perf_counter()
        ref, _ = generate_single(params, cfg, prompts, uniforms)
        single_s = time.perf_counter() - t0
        differ = int(np.count_nonzero(ref != tokens))
        for p, t in list(zip(prompts, tokens))[:3]:
            print(f"  {decode(p)!r} -> {decode(t)!r}")
    differ = int(from_root(comm, stream, differ))
    ticks = args.new_tokens * mbs + size - 1
    log0(comm, f"{size} stage(s): {tokens.size / wall:.0f} tokens/s "
         f"(1 process: {tokens.size / (single_s or np.nan):.0f}); pipeline idle {100 * idle:.0f}% of stage time (filling and draining alone: "
         f"{100 * (size - 1) / ticks:.0f}%)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if size > cores:
        log0(comm, f"  ({size} ranks share {cores} cores: a stage also waits for a core, "
             f"so at least {100 * (1 - cores / size):.0f}% of stage time is idle here)")
    log0(comm, f"tokens that differ from single-process generation: {differ} of {tokens.size}")
    log0(comm, "generation verified" if differ == 0 else "GENERATION CHECK FAILED")
    stream.destroy()
    comm.destroy()
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
