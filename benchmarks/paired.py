"""Two settings of pyhccl side by side in one job, across simulated hosts.

Each rank makes two communicators and a stream for each, A under the environment settings
--a and B under --b (variables read at set-up: PYHCCL_ALGO, PYHCCL_TCP_CRC,
PYHCCL_LATENCY_BYTES, PYHCCL_FAST_SYNC for the stream, ...), and runs the collective on each
by turns, --rounds times per size (which goes first
alternates), so the two share the machine's state of the moment: a comparison of separate
runs on these 2 cores moves by more than most effects. Prints per size the median time of
each, the median of the turns' ratios A/B - 1 with their middle half, and the algorithm
each took (the flight record). Hosts are simulated (tests/multihost/simhosts.py) on links
shaped to --rate.

    sudo python benchmarks/paired.py --a PYHCCL_ALGO=allreduce:ring --b PYHCCL_ALGO=
        [--layout 2x1] [--rate 10gbit|none] [--op allreduce] [-b 1M -e 64M -f 4]
        [--rounds 20] [-n 2] [-z 1] [--host]

--a and --b take VAR=VALUE, several separated by commas; an empty VALUE unsets VAR. Buffers
are device memory (pyhccl.asarray), or numpy arrays in host memory with --host.
Needs root (namespaces), like the multi-host tests.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = ("allreduce", "allgather", "reducescatter", "broadcast", "alltoall", "pingpong")


def parser(description=__doc__.split("\n\n")[0], settings=True):
    ap = argparse.ArgumentParser(description=description)
    if settings:
        ap.add_argument("--a", required=True, help="VAR=VALUE[,VAR=VALUE]: A's settings")
        ap.add_argument("--b", required=True, help="VAR=VALUE[,VAR=VALUE]: B's settings")
    ap.add_argument("--layout", default="2x1", help="hosts x ranks per host")
    ap.add_argument("--rate", default="10gbit", help="every link (tc syntax), or none")
    ap.add_argument("--op", default="allreduce", choices=OPS)
    ap.add_argument("-b", "--minbytes", default="1M")
    ap.add_argument("-e", "--maxbytes", default="64M")
    ap.add_argument("-f", "--factor", type=int, default=4)
    ap.add_argument("-n", "--iters", type=int, default=2, help="operations per turn")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("-z", "--blocking", type=int, default=0, choices=[0, 1],
                    help="1: synchronize after every operation (round trips)")
    ap.add_argument("--host", action="store_true",
                    help="numpy buffers in host memory (as torch's CPU tensors) instead of device memory")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    sys.path.insert(0, str(ROOT / "tests" / "multihost"))
    import simhosts
    simhosts.add_congestion_option(ap)
    return ap


def settings(text):
    """{VAR: VALUE or None (unset)} from "VAR=VALUE,VAR=VALUE"."""
    out = {}
    for item in filter(None, text.split(",")):
        var, eq, value = item.partition("=")
        if not eq:
            sys.exit(f"paired.py: {item!r} is not VAR=VALUE")
        out[var] = value or None
    return out


def make_comm(mpi, env):
    """A communicator and a stream made under `env`."""
    import pyhccl
    from pyhccl.mpi import comm_from_mpi
    for var, value in env.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    return comm_from_mpi(mpi), pyhccl.Stream()


def worker(opts, labels):
    """One rank: both communicators, the turns; rank 0 prints the table."""
    import numpy as np
    from mpi4py import MPI
    import pyhccl
    from pyhccl.bench import parse_size

    mpi = MPI.COMM_WORLD
    n, me = mpi.Get_size(), mpi.Get_rank()
    if opts.op == "pingpong" and n % 2:
        sys.exit("paired.py: pingpong needs an even number of ranks")
    sides = {"A": make_comm(mpi, settings(opts.a)), "B": make_comm(mpi, settings(opts.b))}
    if me == 0:
        print(f"# {opts.op}, {opts.layout} simulated hosts, links {opts.rate}; {labels[0]}: "
              f"{opts.a or '(as is)'}; {labels[1]}: {opts.b or '(as is)'}; {opts.rounds} "
              f"turns of {opts.iters} operations each, by turns"
              f"{', a synchronize after each' if opts.blocking else ''}")
        print(f"| size | {labels[0]} (ms) | {labels[1]} (ms) | {labels[0]} / {labels[1]} - 1 "
              "(median of turns) | middle half | algorithms |")
        print("|---:|---:|---:|---:|---:|---|")
    size = parse_size(opts.minbytes)
    while size <= parse_size(opts.maxbytes):
        count = max(size // 4 // n, 1) * n if opts.op != "pingpong" else max(size // 4, 1)
        small = opts.op == "allgather"
        src = np.full(count // n if small else count, me + 1, np.float32)
        dst = np.empty(count // n if opts.op == "reducescatter" else count, np.float32)
        if not opts.host:
            src, dst = pyhccl.asarray(src), pyhccl.asarray(dst)

        def call(comm, stream):
            if opts.op == "allreduce":
                comm.all_reduce(src, dst, "sum", stream=stream)
            elif opts.op == "allgather":
                comm.all_gather(src, dst, stream=stream)
            elif opts.op == "reducescatter":
                comm.reduce_scatter(src, dst, "sum", stream=stream)
            elif opts.op == "alltoall":
                comm.all_to_all(src, dst, stream=stream)
            elif opts.op == "pingpong":  # rank 2k sends to 2k + 1, which sends it back
                peer = me ^ 1
                if me % 2 == 0:
                    comm.send(src, peer, stream=stream)
                    comm.recv(dst, peer, stream=stream)
                else:
                    comm.recv(dst, peer, stream=stream)
                    comm.send(dst, peer, stream=stream)
            else:
                comm.broadcast(dst, 0, stream=stream)

        def expected():
            if opts.op in ("allreduce", "reducescatter"):
                return np.full(dst.size, n * (n + 1) / 2)
            if opts.op in ("allgather", "alltoall"):
                return np.repeat(np.arange(1, n + 1), dst.size // n)
            if opts.op == "pingpong":  # what the even rank sent
                return np.full(dst.size, (me & ~1) + 1.0)
            return np.full(dst.size, 1.0)

        def turn(key):
            comm, stream = sides[key]
            mpi.Barrier()
            t0 = time.perf_counter()
            for _ in range(opts.iters):
                call(comm, stream)
                if opts.blocking:
                    stream.synchronize()
            stream.synchronize()
            return mpi.allreduce(time.perf_counter() - t0, op=MPI.MAX) / opts.iters

        times = {"A": [], "B": []}
        for key in sides:  # warm-up and check
            if opts.op == "broadcast":
                dst[...] = 1.0 if me == 0 else 0.0
            turn(key)
            wrong = np.count_nonzero((dst if opts.host else dst.get()) != expected())
            if int(mpi.allreduce(int(wrong), op=MPI.SUM)):
                sys.exit(f"paired.py: wrong results under {key}'s settings")
        for r in range(opts.rounds):
            for key in ("A", "B") if r % 2 == 0 else ("B", "A"):
                times[key].append(turn(key))
        if me == 0:
            ratios = sorted(100 * (a / b - 1) for a, b in zip(times["A"], times["B"]))
            q = len(ratios) // 4
            algos = " / ".join(c.flight_record()[-1]["algorithm"] for c, _ in sides.values())
            print(f"| {size:,} | {statistics.median(times['A']) * 1e3:.3f} | "
                  f"{statistics.median(times['B']) * 1e3:.3f} | {statistics.median(ratios):+.1f}% | "
                  f"{ratios[q]:+.1f}% to {ratios[-1 - q]:+.1f}% | {algos} |", flush=True)
        size *= opts.factor
    for comm, stream in sides.values():
        stream.destroy()
        comm.destroy()


def run(opts, script, labels=("A", "B")):
    """The worker's job on simulated hosts (the launcher side), or the worker itself."""
    if opts.worker:
        return worker(opts, labels)
    import simhosts
    hosts = int(opts.layout.split("x")[0])
    rate = None if opts.rate == "none" else opts.rate
    argv = [sys.executable, str(Path(script).resolve()), "--worker", *sys.argv[1:]]
    env = {"PYTHONPATH": str(ROOT), "HCCL_EXEC_TIMEOUT": "300"}
    with simhosts.Cluster(hosts, rate=rate, congestion=opts.congestion) as cluster:
        cmd, full_env = cluster.mpi_job(opts.layout, argv, env=env)
        proc = subprocess.run(cmd, env=full_env, text=True, timeout=3600, cwd=ROOT)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(run(parser().parse_args(), __file__))
