"""Collective benchmark: pyhccl beside mpi4py, alternating, in one run (see PERF.md).

Run:  mpirun -np 4 python benchmarks/bench.py -c allreduce -b 8 -e 64M -f 4
Flags follow nccl-tests: -b/-e min/max bytes, -f step factor, -n iters,
-w warm-up iters, -c collective, -d dtype, -o op, -r root, -k check (0/1).
Per size and implementation: warm-up, then `iters` ops (pyhccl: enqueued on
one stream, then one synchronize; MPI: blocking calls); time per op is the
slowest rank's elapsed / iters. busbw uses the nccl-tests factors.
"""
import argparse
import sys
import time

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi

MPI_OPS = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}


def parse_size(text):
    """Parse 64, 64K, 64M or 1G into bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text[-1:] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


class Case:
    """Buffers, the two implementations and the expected result of one collective and size."""

    def __init__(self, args, comm, mpi, nbytes):
        n, r = comm.size, comm.rank
        dt = np.dtype(args.dtype)
        coll = args.collective
        self.coll, self.n = coll, n
        per = max(nbytes // dt.itemsize, 1)          # elements of the collective's "S"
        if coll in ("allgather", "reduce_scatter"):
            per = max(per // n, 1)                   # S counts all ranks' blocks
        self.count = per
        # Small integers: every reduction is exact in any float type.
        base = ((np.arange(per * (n if coll == "reduce_scatter" else 1)) + r) % 5 + 1).astype(dt)
        self.host_send = base
        if coll == "allreduce":
            self.send, self.recv = pyhccl.asarray(base), pyhccl.empty(per, dt)
            self.msend, self.mrecv = base.copy(), np.empty(per, dt)
            self.expected = self._reduce_all(args.op, lambda q: (np.arange(per) + q) % 5 + 1, dt)
            self.S, self.factor = per * dt.itemsize, 2 * (n - 1) / n
        elif coll == "reduce_scatter":
            self.send, self.recv = pyhccl.asarray(base), pyhccl.empty(per, dt)
            self.msend, self.mrecv = base.copy(), np.empty(per, dt)
            full = self._reduce_all(args.op, lambda q: (np.arange(per * n) + q) % 5 + 1, dt)
            self.expected = full[r * per:(r + 1) * per]
            self.S, self.factor = per * n * dt.itemsize, (n - 1) / n
        elif coll == "allgather":
            self.send, self.recv = pyhccl.asarray(base), pyhccl.empty(per * n, dt)
            self.msend, self.mrecv = base.copy(), np.empty(per * n, dt)
            self.expected = np.concatenate([((np.arange(per) + q) % 5 + 1).astype(dt)
                                            for q in range(n)])
            self.S, self.factor = per * n * dt.itemsize, (n - 1) / n
        elif coll == "broadcast":
            self.send = self.recv = pyhccl.asarray(base)
            self.msend = self.mrecv = base.copy()
            self.expected = ((np.arange(per) + args.root) % 5 + 1).astype(dt)
            self.S, self.factor = per * dt.itemsize, 1.0
        else:
            raise SystemExit(f"bench: unknown collective {coll!r}")
        self.args, self.comm, self.mpi = args, comm, mpi

    @staticmethod
    def _reduce_all(op, make, dt):
        vals = [make(q).astype(dt) for q in range(MPI.COMM_WORLD.Get_size())]
        fn = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
        out = vals[0]
        for v in vals[1:]:
            out = fn(out, v)
        return out

    def run_pyhccl(self, iters, stream):
        a, c = self.args, self.comm
        for _ in range(iters):
            if self.coll == "allreduce":
                c.all_reduce(self.send, self.recv, a.op, stream=stream)
            elif self.coll == "reduce_scatter":
                c.reduce_scatter(self.send, self.recv, a.op, stream=stream)
            elif self.coll == "allgather":
                c.all_gather(self.send, self.recv, stream=stream)
            else:
                c.broadcast(self.send, a.root, stream=stream)
        stream.synchronize()

    def run_mpi(self, iters, _stream):
        m, op = self.mpi, MPI_OPS[self.args.op]
        for _ in range(iters):
            if self.coll == "allreduce":
                m.Allreduce(self.msend, self.mrecv, op)
            elif self.coll == "reduce_scatter":
                m.Reduce_scatter_block(self.msend, self.mrecv, op)
            elif self.coll == "allgather":
                m.Allgather(self.msend, self.mrecv)
            else:
                m.Bcast(self.mrecv, self.args.root)

    def wrong(self, impl):
        """Count wrong elements of the last result (not timed)."""
        got = self.recv.to_numpy() if impl == "pyhccl" else self.mrecv
        return int(np.count_nonzero(got != self.expected))

    def reset(self):
        """Restore broadcast inputs that the timed loop overwrote."""
        if self.coll == "broadcast":
            self.send.set(self.host_send)
            self.msend[...] = self.host_send


def timed(fn, iters, warmup, mpi, stream):
    fn(warmup, stream)
    mpi.Barrier()
    t0 = time.perf_counter()
    fn(iters, stream)
    dt = time.perf_counter() - t0
    return mpi.allreduce(dt, op=MPI.MAX) / iters


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-b", "--minbytes", default="8")
    p.add_argument("-e", "--maxbytes", default="64M")
    p.add_argument("-f", "--stepfactor", type=int, default=4)
    p.add_argument("-n", "--iters", type=int, default=20)
    p.add_argument("-w", "--warmup", type=int, default=5)
    p.add_argument("-c", "--collective", default="allreduce",
                   choices=["allreduce", "allgather", "reduce_scatter", "broadcast"])
    p.add_argument("-d", "--dtype", default="float32")
    p.add_argument("-o", "--op", default="sum", choices=list(MPI_OPS))
    p.add_argument("-r", "--root", type=int, default=0)
    p.add_argument("-k", "--check", type=int, default=1)
    p.add_argument("--impl", default="pyhccl,mpi", help="comma list of pyhccl, mpi")
    args = p.parse_args(argv)

    mpi = MPI.COMM_WORLD
    comm = comm_from_mpi(mpi)
    stream = pyhccl.Stream()
    impls = args.impl.split(",")
    if comm.rank == 0:
        print(f"# {args.collective} {args.dtype} {args.op} on {comm.size} ranks; "
              f"{MPI.Get_library_version().splitlines()[0].strip()}")
        print(f"# {'impl':>7} {'size(B)':>11} {'count':>10} {'time(us)':>10} "
              f"{'algbw':>8} {'busbw':>8} {'#wrong':>7}")
    total = {i: [] for i in impls}
    nbytes, wrong_any = parse_size(args.minbytes), 0
    while nbytes <= parse_size(args.maxbytes):
        case = Case(args, comm, mpi, nbytes)
        iters = max(2, min(args.iters, int(2e9 // max(case.S, 1) // 8)))
        for impl in impls:  # alternate implementations at every size
            run = case.run_pyhccl if impl == "pyhccl" else case.run_mpi
            t = timed(run, iters, args.warmup, mpi, stream)
            case.reset()
            run(1, stream)
            wrong = mpi.allreduce(case.wrong(impl), op=MPI.SUM) if args.check else 0
            wrong_any += wrong
            algbw = case.S / t / 1e9
            total[impl].append(algbw * case.factor)
            if comm.rank == 0:
                print(f"  {impl:>7} {case.S:>11} {case.count:>10} {t * 1e6:>10.1f} "
                      f"{algbw:>8.3f} {algbw * case.factor:>8.3f} {wrong:>7}", flush=True)
        nbytes *= args.stepfactor
    if comm.rank == 0:
        for impl in impls:
            print(f"# {impl}: avg busbw {np.mean(total[impl]):.3f} GB/s")
    stream.destroy()
    comm.destroy()
    return 1 if wrong_any else 0


if __name__ == "__main__":
    sys.exit(main())
