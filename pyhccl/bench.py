"""Collective benchmark in the style of nccl-tests and hccl_test, with mpi4py beside it.

    mpiexec -n 4 python -m pyhccl.bench --op allreduce -b 8 -e 64M -f 4
    mpiexec -n 4 python -m pyhccl.bench --op allgather -b 64K -e 64M --compare mpi --plot ag.png

Flags follow nccl-tests / hccl_test: -b/-e smallest/largest size in bytes
(K, M, G suffixes), -f factor between sizes, -n timed iterations, -w warm-up
iterations, -c check results (1) or not (0), -d data type, -o reduction op,
-r root; --op picks the collective; -z 1 synchronizes after every operation
(round trips). The job first runs the first size for --warmup-s seconds (each
library in turn): a job's first operations run slower. Per size: warm-up,
then `iters` operations enqueued on one stream and one synchronize (with
-z 1, one each); the time per op is the slowest rank's elapsed time / iters.
algbw = S / time (GB = 1e9 bytes), busbw = algbw x the collective's factor
(docs/performance.rst). The check uses small integers, whose reduction is
exact in every type, and counts the wrong elements over all ranks; it is not
timed. --compare mpi times mpi4py on the same sizes in the same run,
alternating which goes first, and adds its time, busbw and the ratio mpi
time / pyhccl time.
"""

import argparse
import json
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi

# collective -> (bus bandwidth factor as a function of n, S = how many bytes of the buffer)
FACTORS: Dict[str, Callable[[int], float]] = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}
REDUCING = ("allreduce", "reducescatter", "reduce")
# the types nccl-tests and hccl_test name differently from numpy
TYPE_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32",
                "bf16": "bfloat16", "fp32": "float32", "fp16": "float16", "fp64": "float64"}
NP_OPS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
MPI_OPS = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}


def parse_size(text: str) -> int:
    """Bytes from 64, 64K, 1.5M or 1G (powers of 1024)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().rstrip("B")
    try:
        if t[-1:] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None


def human_size(x: float) -> str:
    """1024 -> '1K', 1048576 -> '1M' (axis labels)."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if x >= scale:
            return f"{x / scale:g}{unit}"
    return f"{x:g}"


def rank_values(rank: int, n: int, op: str, dtype: np.dtype, start: int = 0) -> np.ndarray:
    """Elements start..start+n of rank `rank`'s input: small integers whose reduction is
    exact in every type."""
    i = np.arange(start, start + n)
    v = np.where((i + rank) % 4 == 0, 2, 1) if op == "prod" else (i + rank) % 5 + 1
    return v.astype(np.float64)


def encode(v: np.ndarray, dtype: str) -> np.ndarray:
    """float64 values as a host array of `dtype` (bfloat16: uint16 bit patterns)."""
    return pyhccl.float_to_bfloat16(v) if dtype == "bfloat16" else v.astype(dtype)


class Case:
    """Buffers, the pyhccl and MPI calls and the expected result of one collective and size."""

    def __init__(self, args: argparse.Namespace, comm: pyhccl.Comm, mpi: MPI.Intracomm,
                 nbytes: int) -> None:
        self.args, self.comm, self.mpi = args, comm, mpi
        n, r, coll, dt = comm.size, comm.rank, args.op, args.dtype
        item = pyhccl.as_datatype(dt).itemsize
        per_rank = coll in ("allgather", "reducescatter", "alltoall")
        self.block = max(nbytes // item // (n if per_rank else 1), 1)
        self.count = self.block * (n if per_rank else 1)          # elements of S
        self.nbytes = self.count * item                           # S
        big = self.count
        send_n = self.block if coll == "allgather" else big
        recv_n = self.block if coll == "reducescatter" else big
        self.expected = self._expected(n, r)
        mine = encode(rank_values(r, send_n, args.redop, dt), dt)
        self.send = pyhccl.asarray(mine, dtype=dt)
        self.recv = self.send if coll == "broadcast" else pyhccl.empty(recv_n, dt)
        # MPI: numpy buffers of the same bytes (bfloat16 as uint16; MPI cannot reduce it)
        self.msend = mine.copy()
        self.mrecv = self.msend if coll == "broadcast" else np.empty(recv_n, mine.dtype)
        self.mpi_ok = not (dt == "bfloat16" and coll in REDUCING)
        self.time_us = {"pyhccl": 0.0, "mpi": 0.0}

    def _expected(self, n: int, r: int) -> np.ndarray:
        a, coll = self.args, self.args.op
        if coll in ("allreduce", "reduce", "reducescatter"):
            lo, m = (r * self.block, self.block) if coll == "reducescatter" else (0, self.count)
            out = rank_values(0, m, a.redop, a.dtype, lo)
            for q in range(1, n):
                out = NP_OPS[a.redop](out, rank_values(q, m, a.redop, a.dtype, lo))
            return out
        if coll == "allgather":
            return np.concatenate([rank_values(q, self.block, a.redop, a.dtype) for q in range(n)])
        if coll == "alltoall":
            # only the blocks this rank gets: n whole inputs took gigabytes at 16 ranks
            return np.concatenate([rank_values(q, self.block, a.redop, a.dtype, r * self.block)
                                   for q in range(n)])
        if coll == "broadcast":
            return rank_values(a.root, self.count, a.redop, a.dtype)
        return rank_values((r - 1) % n, self.count, a.redop, a.dtype)     # sendrecv ring

    def runner(self, impl: str) -> Callable[[int, pyhccl.Stream], None]:
        """run_pyhccl or run_mpi."""
        return self.run_pyhccl if impl == "pyhccl" else self.run_mpi

    def run_pyhccl(self, iters: int, stream: pyhccl.Stream) -> None:
        c, a, coll = self.comm, self.args, self.args.op
        n, r = c.size, c.rank
        for _ in range(iters):
            if coll == "allreduce":
                c.all_reduce(self.send, self.recv, a.redop, stream=stream)
            elif coll == "reducescatter":
                c.reduce_scatter(self.send, self.recv, a.redop, stream=stream)
            elif coll == "allgather":
                c.all_gather(self.send, self.recv, stream=stream)
            elif coll == "alltoall":
                c.all_to_all(self.send, self.recv, stream=stream)
            elif coll == "broadcast":
                c.broadcast(self.send, a.root, stream=stream)
            elif coll == "reduce":
                c.reduce(self.send, self.recv, a.redop, a.root, stream=stream)
            else:
                c.batch_send_recv([("send", self.send, (r + 1) % n),
                                   ("recv", self.recv, (r - 1) % n)], stream=stream)
            if a.blocking:
                stream.synchronize()
        stream.synchronize()

    def run_mpi(self, iters: int, _stream: pyhccl.Stream) -> None:
        m, a, coll = self.mpi, self.args, self.args.op
        n, r = m.Get_size(), m.Get_rank()
        op = MPI_OPS[a.redop]
        for _ in range(iters):
            if coll == "allreduce":
                m.Allreduce(self.msend, self.mrecv, op)
            elif coll == "reducescatter":
                m.Reduce_scatter_block(self.msend, self.mrecv, op)
            elif coll == "allgather":
                m.Allgather(self.msend, self.mrecv)
            elif coll == "alltoall":
                m.Alltoall(self.msend, self.mrecv)
            elif coll == "broadcast":
                m.Bcast(self.msend, a.root)
            elif coll == "reduce":
                m.Reduce(self.msend, self.mrecv, op, a.root)
            else:
                m.Sendrecv(self.msend, (r + 1) % n, 0, self.mrecv, (r - 1) % n, 0)

    def wrong(self, impl: str) -> int:
        """Wrong elements of the last result on this rank (0 where it has none)."""
        a = self.args
        if a.op == "reduce" and self.comm.rank != a.root:
            return 0
        got = self.recv.get() if impl == "pyhccl" else self.mrecv
        if a.dtype == "bfloat16":
            got = pyhccl.bfloat16_to_float(np.asarray(got).view(np.uint16))
        return int(np.count_nonzero(np.asarray(got, np.float64) != self.expected))


def timed(case: Case, impl: str, iters: int, warmup: int, stream: pyhccl.Stream,
          repeats: int = 1) -> float:
    """Seconds per operation: the slowest rank's time for `iters` back-to-back ops, the
    median of `repeats` such runs (one unlucky run then shows as no dip)."""
    run = case.runner(impl)
    run(warmup, stream)
    samples = []
    for _ in range(repeats):
        case.mpi.Barrier()
        t0 = time.perf_counter()
        run(iters, stream)
        elapsed = time.perf_counter() - t0
        samples.append(slowest(case, impl, elapsed, stream) / iters)
    return float(np.median(samples))


def slowest(case: Case, impl: str, seconds: float, stream: pyhccl.Stream) -> float:
    """The largest of the ranks' `seconds`, taken by `impl` itself: the ranks that finish
    first wait for the others in that library, not in the other one, whose waiting may
    take the cores from the ranks still timing (Open MPI's ranks poll, yielding or not:
    at 16 ranks on 2 cores pyhccl's 1 MiB AllGathers read 1.4-2.4x slower waited for in it)."""
    if impl == "mpi":
        return float(case.mpi.allreduce(seconds, op=MPI.MAX))
    t = pyhccl.asarray(np.array([seconds]))
    case.comm.all_reduce(t, t, "max", stream=stream)
    stream.synchronize()
    return float(t.get()[0])


def warm_up_job(case: Case, impls: List[str], seconds: float, stream: pyhccl.Stream) -> None:
    """The first operations of a job run slower, for either library, until about 0.2 s
    in (benchmarks/README.md): whichever went first at the first size read slow. So the
    job runs the first size, each library in turn, for `seconds` (rank 0's clock) first."""
    chunk = max(1, min(10, int(2e8 // max(case.nbytes, 1))))   # a few at the largest sizes
    t0 = time.perf_counter()
    while case.mpi.bcast(time.perf_counter() - t0 < seconds, root=0):
        for impl in impls:
            if impl == "pyhccl" or case.mpi_ok:
                case.runner(impl)(chunk, stream)


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m pyhccl.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", "--coll", dest="op", default="allreduce", choices=list(FACTORS),
                   help="the collective (default allreduce)")
    p.add_argument("-b", "--minbytes", type=parse_size, default=parse_size("32M"))
    p.add_argument("-e", "--maxbytes", type=parse_size, default=parse_size("32M"))
    p.add_argument("-f", "--stepfactor", type=int, default=2)
    p.add_argument("-n", "--iters", type=int, default=20)
    p.add_argument("-w", "--warmup_iters", type=int, default=5)
    p.add_argument("--warmup-s", dest="warmup_s", type=float, default=0.5,
                   help="before the first size, run the first size's operations for this "
                        "many seconds, each library in turn (default 0.5; 0: none)")
    p.add_argument("-c", "--check", type=int, default=1, choices=[0, 1])
    p.add_argument("-z", "--blocking", type=int, default=0, choices=[0, 1],
                   help="1: synchronize after every operation (the round trip a caller "
                        "that needs each result feels); 0: queue them all (throughput)")
    p.add_argument("-d", "--datatype", dest="dtype", default="float32")
    p.add_argument("-o", "--redop", default="sum", choices=list(NP_OPS),
                   help="reduction op (nccl-tests' -o)")
    p.add_argument("-r", "--root", type=int, default=0)
    p.add_argument("--compare", choices=["mpi"], help="also time mpi4py, alternating")
    p.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw busbw and time against size (needs matplotlib: "
                        "pip install 'pyhccl-host[plot]')")
    p.add_argument("-R", "--repeats", type=int, default=None,
                   help="time each size this many times and report the median "
                        "(default 1, or 5 with --plot)")
    args = p.parse_args(argv)
    if args.repeats is None:
        args.repeats = 5 if args.plot else 1
    if args.repeats < 1:
        p.error("-R must be >= 1")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            p.error("--plot needs matplotlib, which is not installed: "
                    "pip install 'pyhccl-host[plot]' (or pip install matplotlib)")
    args.dtype = TYPE_ALIASES.get(args.dtype.lower(), args.dtype.lower())
    try:
        pyhccl.as_datatype(args.dtype)
        np.dtype(np.uint16 if args.dtype == "bfloat16" else args.dtype)
    except (TypeError, ValueError):
        p.error(f"-d: unknown data type {args.dtype!r}")
    if args.minbytes < 1 or args.maxbytes < args.minbytes:
        p.error("-b/-e: need 1 <= minbytes <= maxbytes")
    if args.stepfactor < 2:
        p.error("-f: the step factor must be at least 2")
    if args.iters < 1 or args.warmup_iters < 0 or args.warmup_s < 0:
        p.error("-n must be >= 1, -w >= 0 and --warmup-s >= 0")
    return args


def header(args: argparse.Namespace, size: int) -> List[str]:
    lib = " ".join(MPI.Get_library_version().splitlines()[0].split()).split(",")[0]
    lines = [f"# pyhccl.bench {args.op} on {size} {'rank' if size == 1 else 'ranks'}, "
             f"dtype {args.dtype}, op {args.redop}, root {args.root}, iters {args.iters}, "
             f"warm-up {args.warmup_iters} (job {args.warmup_s:g} s), {'round trips' if args.blocking else 'queued'}; pyhccl {pyhccl.__version__}, {lib}",
             f"# time: slowest rank per op (us{', median of %d runs' % args.repeats if args.repeats > 1 else ''}); algbw, busbw: GB/s"]
    cols = (f"#{'size(B)':>12} {'count':>11} {'type':>8} {'redop':>5} {'root':>4} "
            f"{'time':>10} {'algbw':>7} {'busbw':>7} {'#wrong':>6}")
    if args.compare:
        cols += f" {'mpi time':>10} {'busbw':>7} {'#wrong':>6} {'mpi/ours':>8}"
    return lines + [cols]


def row_text(row: Dict[str, Any], compare: bool) -> str:
    text = (f" {row['size']:>12} {row['count']:>11} {row['type']:>8} {row['redop']:>5} "
            f"{row['root']:>4} {row['time_us']:>10.1f} {row['algbw']:>7.2f} "
            f"{row['busbw']:>7.2f} {row['wrong']:>6}")
    if compare:
        if row.get("mpi_time_us") is None:
            text += f" {'n/a':>10} {'':>7} {'':>6} {'':>8}"
        else:
            text += (f" {row['mpi_time_us']:>10.1f} {row['mpi_busbw']:>7.2f} "
                     f"{row['mpi_wrong']:>6} {row['ratio']:>8.2f}")
    return text


def plot(path: str, rows: List[Dict[str, Any]], args: argparse.Namespace, size: int) -> str:
    """Draw busbw against size into `path`; return a note for the report."""
    import matplotlib                     # present: parse_args checked
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    fig, (bw, lat) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=120)
    mpi_rows = [r for r in rows if r.get("mpi_busbw") is not None]
    mpi_name = f"mpi4py ({MPI.Get_library_version().split()[0]})"
    for ax, key, mkey, label in ((bw, "busbw", "mpi_busbw", "bus bandwidth (GB/s)"),
                                 (lat, "time_us", "mpi_time_us", "time per operation (µs)")):
        ax.plot([r["size"] for r in rows], [r[key] for r in rows], "o-", label="pyhccl")
        if mpi_rows:
            ax.plot([r["size"] for r in mpi_rows], [r[mkey] for r in mpi_rows], "s--",
                    label=mpi_name)
        ax.set_xscale("log", base=2)
        # a tick at every measured size (-f apart), no minor ones in between
        ax.xaxis.set_major_locator(FixedLocator([r["size"] for r in rows]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: human_size(x)))
        ax.tick_params(axis="x", labelrotation=45 if len(rows) > 8 else 0)
        ax.set_xlabel("size S (bytes)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    lat.set_yscale("log")
    fig.suptitle(f"{args.op}, {args.dtype}, {size} {'rank' if size == 1 else 'ranks'}, "
                 f"median of {args.repeats} runs (higher busbw and lower time are better)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return f"# plot: {path}"


def main(argv: Optional[List[str]] = None) -> int:
    """Run the benchmark; return 1 if any result was wrong."""
    args = parse_args(argv)
    mpi = MPI.COMM_WORLD
    comm = comm_from_mpi(mpi)
    size, rank = comm.size, comm.rank
    if not 0 <= args.root < size:
        if rank == 0:
            print(f"pyhccl.bench: -r {args.root} is no rank of {size}", file=sys.stderr)
        comm.destroy()
        return 2
    stream = pyhccl.Stream()
    impls = ["pyhccl"] + (["mpi"] if args.compare else [])
    if rank == 0:
        print("\n".join(header(args, size)), flush=True)
    rows: List[Dict[str, Any]] = []
    nbytes, step = args.minbytes, 0
    while nbytes <= args.maxbytes:
        case = Case(args, comm, mpi, nbytes)
        if step == 0 and args.warmup_s > 0:
            warm_up_job(case, impls, args.warmup_s, stream)
        # Fewer iterations for huge sizes keep a run short (at most ~2 GB moved per size).
        iters = max(1, min(args.iters, int(2e9 // max(case.nbytes, 1))))
        order = impls if step % 2 == 0 else impls[::-1]          # alternate who goes first
        result: Dict[str, Tuple[float, int]] = {}
        for impl in order:
            if impl == "mpi" and not case.mpi_ok:
                continue
            t = timed(case, impl, iters, args.warmup_iters, stream, args.repeats)
            wrong = int(mpi.allreduce(case.wrong(impl), op=MPI.SUM)) if args.check else 0
            result[impl] = (t, wrong)
        factor = FACTORS[args.op](size)
        t, wrong = result["pyhccl"]
        algbw = case.nbytes / t / 1e9
        row: Dict[str, Any] = {
            "size": case.nbytes, "count": case.count, "type": args.dtype,
            "redop": args.redop if args.op in REDUCING else "none",
            "root": args.root if args.op in ("broadcast", "reduce") else -1,
            "time_us": t * 1e6, "algbw": algbw, "busbw": algbw * factor, "wrong": wrong}
        if "mpi" in result:
            mt, mwrong = result["mpi"]
            row.update(mpi_time_us=mt * 1e6, mpi_busbw=case.nbytes / mt / 1e9 * factor,
                       mpi_wrong=mwrong, ratio=mt / t)
        rows.append(row)
        if rank == 0:
            print(row_text(row, bool(args.compare)), flush=True)
        nbytes *= args.stepfactor
        step += 1
    wrong_total = sum(r["wrong"] + r.get("mpi_wrong", 0) for r in rows)
    if rank == 0:
        print(f"# Out of bounds values : {wrong_total} {'OK' if wrong_total == 0 else 'FAILED'}")
        print(f"# Avg bus bandwidth    : {np.mean([r['busbw'] for r in rows]):.4f}")
        mrows = [r for r in rows if "mpi_busbw" in r]
        if mrows:
            print(f"# Avg bus bandwidth mpi: {np.mean([r['mpi_busbw'] for r in mrows]):.4f}"
                  f"  (mpi time / pyhccl time, geometric mean: "
                  f"{float(np.exp(np.mean(np.log([r['ratio'] for r in mrows])))):.2f})")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"op": args.op, "dtype": args.dtype, "redop": args.redop,
                           "root": args.root, "ranks": size, "iters": args.iters,
                           "blocking": args.blocking,
                           "warmup_iters": args.warmup_iters, "warmup_s": args.warmup_s,
                           "mpi_library": MPI.Get_library_version().splitlines()[0].strip(),
                           "pyhccl": pyhccl.__version__, "rows": rows}, f, indent=1)
            print(f"# json: {args.json}")
        if args.plot:
            print(plot(args.plot, rows, args, size))
    stream.destroy()
    comm.destroy()
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
