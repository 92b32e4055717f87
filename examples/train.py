"""Data-parallel training of a small GPT on the Python standard library's source.

Every rank holds the whole model (examples/tinygpt) and trains on its shard of
each global batch. Gradients are packed, in the order the backward pass
produces them, into buckets of about --bucket-kb. As soon as a bucket's last
gradient is copied to the device on the compute stream, an event is recorded
there; the communication stream waits for that event and all-reduces the
bucket, so AllReduce overlaps the rest of the backward pass. After the
backward pass, each bucket's parameters are updated as soon as its
AllReduce is done, while the later buckets are still being reduced. The
communication time of a step is how long its AllReduces were in flight
(events on the communication stream, from when the stream starts each to
when it is done); the exposed part is the time the training loop waited for
results while an AllReduce was in flight (tinygpt/timing.py), so it never
exceeds the whole; the rest was hidden behind computation. Both are taken on
the rank with the least, the slowest (the others also wait for it, which is
load imbalance, not communication).

It prints the training and validation loss about 10 times (--log-every),
saves a checkpoint (and a loss-curve PNG when matplotlib is installed), and
verifies that
  - every rank holds bit-identical parameters (AllReduce gives every rank the
    same bits);
  - they are bit-identical to a single-process run of the same steps, which
    computes each rank's shard gradient in turn and sums them. This is exact
    because each gradient is rounded to a grid of 2**-40 before the AllReduce
    (tinygpt/trainer.py: to_grid): sums of such numbers are exact in float64,
    so the result does not depend on the order in which the AllReduce adds
    the ranks' contributions. Without the rounding, summation order changes
    the last bits and training amplifies them (to about 1e-4 relative after
    200 steps), so only a loose comparison would be possible;
  - the validation loss fell.

Run:  mpirun -np 4 python examples/train.py [--steps N] [--bucket-kb K] [--log-every N]
"""
import argparse
import os
import sys
import time
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # ranks share the cores: one BLAS thread each
import numpy as np  # noqa: E402

import pyhccl  # noqa: E402
from tinygpt.data import Corpus  # noqa: E402
from tinygpt.dist import DEFAULT_CHECKPOINT, all_agree, from_root, log0, on_device, start  # noqa: E402
from tinygpt.model import (Array, Config, Params, backward, cross_entropy, forward, init_params,  # noqa: E402
                           param_names)
from tinygpt.optim import Adam  # noqa: E402
from tinygpt.timing import EventClock, Interval, overlap, total  # noqa: E402
from tinygpt.trainer import (Settings, evaluate, flatten, reference_run, save_checkpoint,  # noqa: E402
                             shard_rows, to_grid)

History = List[Tuple[int, float, float]]     # (step, training loss, validation loss or nan) after each step


class GradBuckets:
    """Gradients packed into flat device buffers, each all-reduced as soon as it is complete."""

    def __init__(self, comm: pyhccl.Comm, params: Params, names: List[str], bucket_bytes: int) -> None:
        self.comm = comm
        self.compute, self.comm_stream = pyhccl.Stream(), pyhccl.Stream()
        self.where: Dict[str, Tuple[int, int]] = {}      # name -> (bucket, offset)
        groups: List[List[str]] = [[]]
        size = 0
        for n in names:
            nbytes = params[n].nbytes
            if groups[-1] and size + nbytes > bucket_bytes:
                groups.append([])
                size = 0
            groups[-1].append(n)
            size += nbytes
        self.names = groups
        self.shapes = {n: params[n].shape for n in names}
        self.buffers: List[pyhccl.DeviceArray] = []
        for b, group in enumerate(groups):
            off = 0
            for n in group:
                self.where[n] = (b, off)
                off += params[n].size
            self.buffers.append(pyhccl.empty(off, np.float64))
        self.ready = [pyhccl.Event() for _ in groups]
        self.begin = [pyhccl.Event() for _ in groups]
        self.done = [pyhccl.Event() for _ in groups]
        self.waits: List[Interval] = []           # host clock: the loop waiting for results

    def reduce(self, grads: Iterable[Tuple[str, Array]]) -> None:
        """Consume (name, gradient) pairs; launch each bucket's AllReduce once it is complete."""
        missing = [len(g) for g in self.names]
        for name, g in grads:
            b, off = self.where[name]
            g = to_grid(g, self.comm.size).ravel()
            self.buffers[b][off:off + g.size].set(g, stream=self.compute)   # async copy
            missing[b] -= 1
            if missing[b] == 0:
                self.ready[b].record(self.compute)
                self.comm_stream.wait_event(self.ready[b])     # waits for this bucket only
                self.begin[b].record(self.comm_stream)         # the AllReduce starts here
                self.comm.all_reduce(self.buffers[b], op=pyhccl.SUM, stream=self.comm_stream)
                self.done[b].record(self.comm_stream)

    def results(self) -> Iterator[Params]:
        """Yield each bucket's summed gradients (a dict by name) as soon as its AllReduce is done.

        Each wait is appended to self.waits (host clock).
        """
        for group, buf, done in zip(self.names, self.buffers, self.done):
            t0 = time.perf_counter()
            done.synchronize()
            self.waits.append((t0, time.perf_counter()))
            host, off = buf.get(), 0      # the AllReduce is done: a plain copy
            out: Params = {}
            for n in group:
                size = int(np.prod(self.shapes[n]))
                out[n] = host[off:off + size].reshape(self.shapes[n])
                off += size
            yield out

    def step_timing(self, clock: EventClock) -> Tuple[float, float]:
        """Return (ms AllReduces were in flight, ms of it the loop waited) for the last step.

        Call after results() has yielded every bucket; clears the waits.
        """
        flight = [(clock.time_of(b), clock.time_of(d)) for b, d in zip(self.begin, self.done)]
        whole, exposed = total(flight), overlap(self.waits, flight)
        self.waits = []
        return 1000 * whole, 1000 * exposed

    def time_alone(self, repeats: int = 5) -> float:
        """Return the ms the buckets' AllReduces take with nothing else running (median of `repeats`).

        Every rank starts together (a small AllReduce first), so this is
        communication, not waiting for slower ranks. It also warms up the
        connections before the first step.
        """
        times: List[float] = []
        begin, end, token = pyhccl.Event(), pyhccl.Event(), pyhccl.zeros(1, np.float64)
        for buf in self.buffers:
            buf.fill(0.0)
        for _ in range(repeats + 1):             # the first one warms up
            self.comm.all_reduce(token, op=pyhccl.SUM, stream=self.comm_stream)
            self.comm_stream.synchronize()
            begin.record(self.comm_stream)
            for buf in self.buffers:
                self.comm.all_reduce(buf, op=pyhccl.SUM, stream=self.comm_stream)
            end.record(self.comm_stream)
            self.comm_stream.synchronize()
            times.append(begin.elapsed_time(end))
        begin.destroy()
        end.destroy()
        return float(np.median(times[1:]))

    def destroy(self) -> None:
        """Release the streams and events."""
        for e in self.ready + self.begin + self.done:
            e.destroy()
        self.compute.destroy()
        self.comm_stream.destroy()


def train(comm: pyhccl.Comm, stream: pyhccl.Stream, cfg: Config, corpus: Corpus, s: Settings,
          bucket_bytes: int, log: Callable[[str], None],
          log_every: int = 1) -> Tuple[Params, History, Dict[str, float]]:
    """Train data-parallel; return (params, per-step history, timing summary).

    A step's communication is the time its AllReduces were in flight; its
    exposed part is the time the training loop waited for AllReduce results
    while one was in flight (never more than the whole). Both are taken on
    the rank with the least, the slowest one (the others also wait for it,
    which is load imbalance, not communication): the minimum over ranks of
    each, and the smaller exposed time cannot exceed the smaller whole. The
    fraction hidden is 1 - exposed / whole. Progress is logged every
    `log_every` steps and after the last.
    """
    params = init_params(cfg, seed=s.seed)
    opt = Adam(params, lr=s.lr)
    buckets = GradBuckets(comm, params, param_names(cfg), bucket_bytes)
    comm_alone = buckets.time_alone()
    clock = EventClock(buckets.comm_stream)
    mine, val_mine = shard_rows(comm.rank, comm.size, s.batch), shard_rows(comm.rank, comm.size, s.val_batch)
    vx, vy = s.val_batch_data(corpus)
    vx, vy = vx[val_mine], vy[val_mine]
    val_scale = 1.0 / (s.val_batch * s.seq)

    def combine(values: List[float], op: pyhccl.ReduceOp) -> Array:
        return on_device(stream, np.array(values, np.float64),
                         lambda d: comm.all_reduce(d, op=op, stream=stream))

    history: History = [(0, float("nan"),
                         combine([evaluate(params, cfg, vx, vy, val_scale)], pyhccl.SUM)[0])]
    log(f"{len(buckets.names)} gradient buckets of <= {bucket_bytes // 1024} KiB; their AllReduces "
        f"take {comm_alone:.1f} ms alone; step 0: validation loss {history[0][2]:.3f}")
    step_s: List[float] = []
    in_flight: List[float] = []
    exposed: List[float] = []
    for step in range(s.steps):
        clock.pin()                          # between steps: the communication stream is idle
        t0 = time.perf_counter()
        x, y = s.train_batch(corpus, step)
        logits, cache = forward(params, cfg, x[mine])
        loss, dlogits = cross_entropy(logits, y[mine], scale=1.0 / (s.batch * s.seq))
        buckets.reduce(backward(params, cfg, cache, dlogits))
        opt.begin_step()
        for grads in buckets.results():     # update each bucket's parameters while later ones reduce
            opt.update(params, grads)
        step_s.append(time.perf_counter() - t0)
        whole, waited = buckets.step_timing(clock)
        logged = (step + 1) % log_every == 0 or step + 1 == s.steps
        # The validation loss only where it is shown (a forward pass: it costs a third of a step).
        loss, val = combine([loss, evaluate(params, cfg, vx, vy, val_scale) if logged else 0.0],
                            pyhccl.SUM)
        least = combine([whole, waited], pyhccl.MIN)
        in_flight.append(least[0])
        exposed.append(least[1])
        history.append((step + 1, loss, val if logged else float("nan")))
        if logged:
            log(f"step {step + 1:4d}/{s.steps} | loss {loss:.3f} | val {val:.3f} | "
                f"{s.batch * s.seq / step_s[-1]:6.0f} tok/s | AllReduce {in_flight[-1]:5.1f} ms, "
                f"exposed {exposed[-1]:5.1f} ms ({100 * hidden(in_flight[-1], exposed[-1]):3.0f}% hidden)")
    clock.destroy()
    buckets.destroy()
    comm_ms, exposed_ms = float(np.mean(in_flight)), float(np.mean(exposed))
    summary = {"tokens_per_s": s.batch * s.seq * len(step_s) / sum(step_s),
               "hidden": hidden(comm_ms, exposed_ms), "comm_ms": comm_ms,
               "exposed_ms": exposed_ms, "alone_ms": comm_alone}
    return params, history, summary


def hidden(whole: float, exposed: float) -> float:
    """Return the fraction of `whole` ms of communication not in the `exposed` ms (0 if none)."""
    return 1.0 - exposed / whole if whole > 0 else 0.0


def plot(history: History, path: str) -> Optional[str]:
    """Save the loss curves as a PNG if matplotlib is installed; return the path or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    steps, loss, val = (np.array(column) for column in zip(*history))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(steps[1:] - 1, loss[1:], label="training (batch, before its step)")
    measured = ~np.isnan(val)                 # the validation loss of the logged steps
    ax.plot(steps[measured], val[measured], "o-", label="validation")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats/char)")
    ax.legend()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=100, help="optimiser steps (default 100)")
    ap.add_argument("--batch", type=int, default=16, help="sequences per step over all ranks")
    ap.add_argument("--bucket-kb", type=int, default=256, help="gradient bucket size in KiB")
    ap.add_argument("--log-every", type=int, default=0,
                    help="print progress every N steps (default: about 10 lines in all)")
    ap.add_argument("--checkpoint", default=DEFAULT_CHECKPOINT, help="where to save the weights")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the single-process reference run (and its check)")
    args = ap.parse_args()

    comm, stream = start()
    rank, size = comm.rank, comm.size
    if args.batch % size or args.steps < 1 or args.bucket_kb < 1 or args.log_every < 0:
        log0(comm, f"--batch ({args.batch}) must be a multiple of the {size} ranks; "
             "--steps and --bucket-kb at least 1, --log-every not negative")
        return 2
    log_every = args.log_every or max(1, round(args.steps / 10))
    cfg, s = Config(), Settings(steps=args.steps, batch=args.batch)
    corpus = Corpus()
    log0(comm, f"{size} rank(s); model {sum(v.size for v in init_params(cfg).values()):,} parameters; "
         f"{len(corpus.train):,} training / {len(corpus.val):,} validation characters of the stdlib")
    params, history, summary = train(comm, stream, cfg, corpus, s, args.bucket_kb * 1024,
                                     lambda line: log0(comm, line), log_every)

    # Bit-identical on every rank: gather everyone's parameters, compare the bytes.
    flat = flatten(params, cfg)
    everyone = on_device(stream, np.zeros(flat.size * size),
                         lambda d: comm.all_gather(pyhccl.asarray(flat, stream=stream), d, stream=stream))
    rows = everyone.reshape(size, -1).view(np.int64)
    identical = all_agree(comm, stream, all(np.array_equal(r, rows[0]) for r in rows))

    # The same steps in one process (rank 0; the others wait in a sleeping broadcast).
    differ, ref_s = 0, 0.0
    if rank == 0 and not args.no_reference:
        print(f"reference: the same {s.steps} steps in one process ...", flush=True)
        t0 = time.perf_counter()
        ref = flatten(reference_run(cfg, corpus, s, ranks=size), cfg)
        ref_s = time.perf_counter() - t0
        differ = int(np.count_nonzero(ref.view(np.int64) != flat.view(np.int64)))
    differ = int(from_root(comm, stream, differ))
    matches = differ == 0
    first_val, last_val = history[0][2], history[-1][2]
    learned = last_val < 0.95 * first_val

    if rank == 0:
        save_checkpoint(args.checkpoint, params, cfg, steps=s.steps, val_loss=last_val)
        png = plot(history, os.path.splitext(args.checkpoint)[0] + "-loss.png")
        print(f"saved {args.checkpoint}" + (f" and {png}" if png else " (no matplotlib: no loss plot)"))
        print(f"{size} rank(s): {summary['tokens_per_s']:,.0f} tokens/s; the gradient AllReduces "
              f"were in flight {summary['comm_ms']:.1f} ms a step ({summary['alone_ms']:.1f} ms alone), "
              f"{summary['exposed_ms']:.1f} ms of it exposed: {100 * summary['hidden']:.0f}% hidden "
              "behind the backward pass")
        if ref_s > 0:     # the reference run does the same arithmetic: the 1-process baseline
            alone = s.batch * s.seq * s.steps / ref_s
            print(f"1 process, the same steps (the reference run): {alone:,.0f} tokens/s; "
                  f"{size} rank(s) train {summary['tokens_per_s'] / alone:.2f}x as fast "
                  "(a speed-up needs a core per rank)")
        print(f"validation loss {first_val:.3f} -> {last_val:.3f}; parameters bit-identical on all "
              f"ranks: {identical}; parameters that differ from the single-process run: "
              + ("not checked" if args.no_reference else f"{differ} of {flat.size}"))
    ok = identical and matches and learned
    log0(comm, "training verified" if ok else "TRAINING CHECK FAILED")
    stream.destroy()
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
