"""Data-parallel text generation with the small GPT: weights broadcast, prompts scattered.

Rank 0 loads the checkpoint (or trains briefly if there is none) and
broadcasts the weights: one Broadcast of the config, one of all parameters
as a single vector. Rank 0 also holds the prompts; Scatter hands every rank
an equal share. Each rank generates for its prompts until a newline (or
--new-tokens), so outputs have different lengths. AllGather collects them on
every rank: first the lengths, then the tokens themselves with AllGatherV
where pyhccl has it (Comm.all_gather_v), else padded to --new-tokens.

Each prompt's sampling uses random numbers drawn from the prompt's own
index, so its text does not depend on which rank generated it. The program
checks every output against single-process generation (exactly) and
measures throughput: the whole job (weights, prompts, generation, gathering)
is timed on 1, 2, 4, ... ranks of the job in turn (sub-communicators, the
other ranks waiting), so one run shows how throughput scales.

Run:  mpirun -np 4 python examples/dp_inference.py [--prompts N] [--new-tokens N]
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # ranks share the cores: one BLAS thread each
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

import pyhccl  # noqa: E402
from pyhccl.mpi import comm_from_mpi  # noqa: E402
from tinygpt.data import Corpus, decode, encode  # noqa: E402
from tinygpt.dist import (DEFAULT_CHECKPOINT, all_agree, broadcast_params, from_root,  # noqa: E402
                          load_on_root, log0, on_device, start)
from tinygpt.infer import check_length, draws, generate_single  # noqa: E402

NEWLINE = int(encode("\n")[0])


def serve(comm, stream, params, cfg, prompts, n_new):
    """Run one data-parallel job on `comm` (rank 0 holds params and prompts).

    Returns:
        (list of every prompt's generated tokens, on every rank; seconds the job took).
    """
    rank, size = comm.rank, comm.size
    t0 = time.perf_counter()
    params, cfg = broadcast_params(comm, stream, params, cfg)
    shape = on_device(stream, np.array(prompts.shape if rank == 0 else (0, 0), np.int64),
                      lambda d: comm.broadcast(d, 0, stream=stream))
    count, plen = int(shape[0]), int(shape[1])
    per_rank = count // size
    mine = on_device(stream, np.zeros((per_rank, plen), np.int64), lambda d: comm.scatter(
        pyhccl.asarray(prompts, stream=stream) if rank == 0 else None, d, 0, stream=stream))

    ids = rank * per_rank + np.arange(per_rank)        # global prompt numbers: the random streams
    tokens, lengths = generate_single(params, cfg, mine, draws(ids, n_new), stop=NEWLINE)
    outputs = gather_ragged(comm, stream, tokens, lengths)
    return outputs, time.perf_counter() - t0


def gather_ragged(comm, stream, tokens, lengths):
    """Return every rank's rows tokens[i, :lengths[i]], in rank order, on every rank.

    AllGather of the lengths first; then AllGatherV of just the tokens when
    pyhccl has it, else AllGather of the rows padded to full width.
    """
    size, (rows, width) = comm.size, tokens.shape
    all_lengths = on_device(stream, np.zeros(size * rows, np.int64), lambda d: comm.all_gather(
        pyhccl.asarray(lengths, stream=stream), d, stream=stream))
    if hasattr(comm, "all_gather_v"):
        counts = all_lengths.reshape(size, rows).sum(1)
        mine = np.concatenate([row[:n] for row, n in zip(tokens, lengths)])
        flat = on_device(stream, np.zeros(int(counts.sum()), np.int64), lambda d: comm.all_gather_v(
            pyhccl.asarray(mine, stream=stream), d, counts, stream=stream))
        return np.split(flat, np.cumsum(all_lengths)[:-1])
    padded = on_device(stream, np.zeros((size * rows, width), np.int64), lambda d: comm.all_gather(
        pyhccl.asarray(tokens, stream=stream), d, stream=stream))
    return [row[:n] for row, n in zip(padded, all_lengths)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=64, help="prompts in all (a multiple of the ranks)")
    ap.add_argument("--prompt-len", type=int, default=24, help="tokens per prompt")
    ap.add_argument("--new-tokens", type=int, default=40, help="most tokens generated per prompt")
    ap.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="weights from train.py")
    ap.add_argument("--train-steps", type=int, default=100,
                    help="steps rank 0 trains first if there is no checkpoint")
    args = ap.parse_args()

    world, stream = start()
    rank, size = world.rank, world.size
    if args.prompts % size:
        log0(world, f"dp_inference: --prompts ({args.prompts}) must be a multiple of the {size} ranks")
        return 2
    params, cfg = load_on_root(world, args.checkpoint, args.train_steps)
    fits = True
    if rank == 0:
        try:
            check_length(cfg, args.prompt_len, args.new_tokens)
        except ValueError as exc:
            print(f"dp_inference: {exc}", flush=True)
            fits = False
    if not all_agree(world, stream, fits):             # the others sleep here while rank 0 loads
        return 2
    prompts = Corpus().prompts(args.prompts, args.prompt_len) if rank == 0 else None

    reference = None
    if rank == 0:
        tokens, lengths = generate_single(params, cfg, prompts, draws(range(args.prompts), args.new_tokens),
                                          stop=NEWLINE)
        reference = [row[:n] for row, n in zip(tokens, lengths)]
    ok, rates = True, []
    sizes = sorted({n for n in (1, 2, 4, 8, 16, 32, 64) if n < size and args.prompts % n == 0} | {size})
    for n in sizes:
        sub = MPI.COMM_WORLD.Split(0 if rank < n else MPI.UNDEFINED, rank)
        good, rate = True, 0.0
        if rank < n:
            comm = comm_from_mpi(sub)
            outputs, seconds = serve(comm, stream, params, cfg, prompts, args.new_tokens)
            seconds = on_device(stream, np.array([seconds]),
                                lambda d: comm.all_reduce(d, op=pyhccl.MAX, stream=stream))[0]
            generated = sum(len(o) for o in outputs)
            rate = generated / seconds
            if rank == 0:
                good = len(outputs) == len(reference) and all(
                    np.array_equal(a, b) for a, b in zip(outputs, reference))
                print(f"{n} rank(s): {generated} tokens for {len(outputs)} prompts in {seconds:.2f} s: "
                      f"{rate:,.0f} tokens/s; identical to single-process generation: {good}",
                      flush=True)
                if n == size:
                    for p, o in list(zip(prompts, outputs))[:3]:
                        print(f"  {decode(p)!r} -> {decode(o)!r}")
            comm.destroy()
            sub.Free()
        ok = all_agree(world, stream, good) and ok      # waiting ranks sleep in pyhccl, not MPI
        rates.append(from_root(world, stream, rate))
    if len(sizes) > 1:
        log0(world, "throughput vs 1 rank: " + ", ".join(
            f"{n} rank(s) x{r / rates[0]:.2f}" for n, r in zip(sizes, rates)))
    log0(world, "outputs gathered with " + ("AllGatherV" if hasattr(world, "all_gather_v")
                                            else "AllGather of padded rows (no AllGatherV here)"))
    log0(world, "inference verified" if ok else "INFERENCE CHECK FAILED")
    stream.destroy()
    world.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
