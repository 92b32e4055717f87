"""Soak: many mixed collectives, and many communicators created and destroyed, in one
process per rank; memory (RSS) and open descriptors must stay flat.

    mpiexec -n 2 python tools/soak.py [--ops 100000] [--cycles 1000]

Phase 1 runs `--ops` collectives of every kind and several sizes on one stream (a
synchronize every 100, every 1000th result checked), sampling RSS and the number of
open fds ten times. Phase 2 creates a communicator, runs one AllReduce, and destroys
it, `--cycles` times, sampling the same way. Growth beyond the first sample (after
warm-up) of more than --rss-slack MiB, or any extra descriptor, fails the run.
Not part of the test run (it takes minutes); the numbers go into the closing note.
"""
import argparse
import os
import sys
import time

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi, local_rank

WORLD = MPI.COMM_WORLD


def usage():
    """(RSS in MiB, open file descriptors) of this process."""
    with open("/proc/self/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return rss / 1024, len(os.listdir("/proc/self/fd"))


def one_op(comm, stream, i, rng, size, check):
    """Runs collective number i (kind and size chosen by rng); returns whether it was right."""
    kind = rng.integers(6)
    count = int(rng.choice([1, 7, 64, 1000, 16384])) * size
    rank = comm.rank
    if kind == 0:
        x = pyhccl.full(count, rank + 1, np.float32)
        comm.all_reduce(x, op=pyhccl.SUM, stream=stream)
        want = lambda: np.full(count, size * (size + 1) / 2, np.float32)
    elif kind == 1:
        x = pyhccl.full(count, rank, np.int32)
        root = i % size
        comm.broadcast(x, root=root, stream=stream)
        want = lambda: np.full(count, root, np.int32)
    elif kind == 2:
        per = count // size
        src = pyhccl.full(per, rank, np.float64)
        x = pyhccl.empty(per * size, np.float64)
        comm.all_gather(src, x, stream=stream)
        want = lambda: np.repeat(np.arange(size, dtype=np.float64), per)
    elif kind == 3:
        per = count // size
        src = pyhccl.full(per * size, 1, np.int64)
        x = pyhccl.empty(per, np.int64)
        comm.reduce_scatter(src, x, op=pyhccl.SUM, stream=stream)
        want = lambda: np.full(per, size, np.int64)
    elif kind == 4:
        per = count // size
        src = pyhccl.full(per * size, rank, np.int16)
        x = pyhccl.empty(per * size, np.int16)
        comm.all_to_all(src, x, stream=stream)
        want = lambda: np.repeat(np.arange(size, dtype=np.int16), per)
    else:
        x = pyhccl.full(count, 1, np.float16)
        comm.barrier(stream=stream)
        want = lambda: np.full(count, 1, np.float16)
    if not check:
        return True
    stream.synchronize()
    return bool(np.array_equal(x.to_numpy(), want()))


def phase(name, steps, body, samples=10):
    """Runs body(i) for i < steps, sampling usage; returns the samples."""
    seen = []
    for i in range(steps):
        body(i)
        if i % max(1, steps // samples) == 0:
            seen.append((i + 1, *usage()))
    time.sleep(1)  # a finished rendezvous server thread may still be closing its sockets
    seen.append((steps, *usage()))
    if WORLD.rank == 0:
        print(f"{name}:")
        for done, rss, fds in seen:
            print(f"  after {done:>7}: RSS {rss:8.1f} MiB, {fds} open fds")
    return seen


def verdict(name, seen, slack):
    """Flat: the last sample (after the phase settled) against the second (after warm-up)."""
    base_rss, base_fds = seen[1][1:] if len(seen) > 1 else seen[0][1:]
    grew = seen[-1][1] - base_rss
    extra_fds = seen[-1][2] - base_fds
    ok = grew <= slack and extra_fds <= 0
    flags = WORLD.allgather(ok)
    if WORLD.rank == 0:
        print(f"{name}: RSS grew {grew:.1f} MiB after warm-up, {max(0, extra_fds)} extra fds: "
              f"{'flat' if all(flags) else 'GROWING on ranks ' + str([r for r, f in enumerate(flags) if not f])}")
    return all(flags)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--rss-slack", type=float, default=16.0, help="MiB of growth allowed")
    opts = ap.parse_args()
    pyhccl.set_device(local_rank(WORLD) % pyhccl.device_count())
    rng = np.random.default_rng(1234)  # the same sequence on every rank
    size = WORLD.size
    ok = True
    t0 = time.monotonic()

    comm = comm_from_mpi(WORLD)
    stream = pyhccl.Stream()
    wrong = []

    def op(i):
        right = one_op(comm, stream, i, rng, size, check=i % 1000 == 999)
        if not right:
            wrong.append(i)
        if i % 100 == 99:
            stream.synchronize()

    seen = phase(f"{opts.ops} mixed collectives", opts.ops, op)
    stream.synchronize()
    comm.destroy()
    ok &= verdict("collectives", seen, opts.rss_slack)
    ok &= WORLD.allreduce(len(wrong)) == 0

    def cycle(i):
        c = comm_from_mpi(WORLD)
        x = pyhccl.full(64, 1, np.float32)
        c.all_reduce(x, op=pyhccl.SUM, stream=stream)
        stream.synchronize()
        c.destroy()

    seen = phase(f"{opts.cycles} communicator create/destroy cycles", opts.cycles, cycle)
    ok &= verdict("create/destroy", seen, opts.rss_slack)
    stream.destroy()
    nwrong = WORLD.allreduce(len(wrong))    # collective: every rank, not just the printer
    if WORLD.rank == 0:
        print(f"soak {'passed' if ok else 'FAILED'} in {time.monotonic() - t0:.0f} s "
              f"({nwrong} wrong results)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
