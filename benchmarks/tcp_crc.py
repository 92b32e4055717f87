"""What the TCP transport's CRC32C check (PYHCCL_TCP_CRC) costs, in one run.

Two simulated hosts (tests/multihost/simhosts.py) on links shaped to --rate, one or more
ranks each. One job makes two communicators, one with the check and one without, and runs
the collective on each by turns, --rounds times per size (which goes first alternates), so
the two share the machine's state of the moment. Prints the median time of each and the
cost (on / off - 1) per size: the median of the rounds' ratios and their middle half.

    sudo python benchmarks/tcp_crc.py [--layout 2x1] [--rate 10gbit|none] [--op allreduce]
        [-b 1M -e 64M] [--rounds 30] [-n 2]

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
OPS = ("allreduce", "allgather", "reducescatter", "broadcast")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layout", default="2x1", help="hosts x ranks per host")
    ap.add_argument("--rate", default="10gbit", help="every link (tc syntax), or none")
    ap.add_argument("--op", default="allreduce", choices=OPS)
    ap.add_argument("-b", "--minbytes", default="1M")
    ap.add_argument("-e", "--maxbytes", default="64M")
    ap.add_argument("-n", "--iters", type=int, default=2, help="operations per turn")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    sys.path.insert(0, str(ROOT / "tests" / "multihost"))
    import simhosts
    simhosts.add_congestion_option(ap)
    return ap.parse_args(argv), simhosts


def worker(opts):
    """One rank: both communicators, the turns, rank 0 prints the table."""
    import numpy as np
    from mpi4py import MPI
    import pyhccl
    from pyhccl.bench import parse_size
    from pyhccl.mpi import comm_from_mpi

    mpi = MPI.COMM_WORLD
    n = mpi.Get_size()
    comms = {}
    for crc in ("1", "0"):  # the variable is read when the connections are made
        os.environ["PYHCCL_TCP_CRC"] = crc
        comms[crc] = comm_from_mpi(mpi)
    stream = pyhccl.Stream()
    if mpi.Get_rank() == 0:
        print(f"# {opts.op}, {opts.layout} simulated hosts, links {opts.rate}; {opts.rounds} "
              f"turns of {opts.iters} operations each, by turns")
        print("| size | CRC on (ms) | CRC off (ms) | cost (median of turns) | middle half |")
        print("|---:|---:|---:|---:|---:|")
    size = parse_size(opts.minbytes)
    while size <= parse_size(opts.maxbytes):
        count = max(size // 4 // n, 1) * n
        src = pyhccl.asarray(np.ones(count // n if opts.op == "allgather" else count, np.float32))
        dst = pyhccl.empty(count // n if opts.op == "reducescatter" else count, "float32")

        def turn(comm):
            mpi.Barrier()
            t0 = time.perf_counter()
            for _ in range(opts.iters):
                if opts.op == "allreduce":
                    comm.all_reduce(src, dst, "sum", stream=stream)
                elif opts.op == "allgather":
                    comm.all_gather(src, dst, stream=stream)
                elif opts.op == "reducescatter":
                    comm.reduce_scatter(src, dst, "sum", stream=stream)
                else:
                    comm.broadcast(src, 0, stream=stream)
            stream.synchronize()
            return mpi.allreduce(time.perf_counter() - t0, op=MPI.MAX) / opts.iters

        times = {"1": [], "0": []}
        for crc in comms:  # warm-up
            turn(comms[crc])
            want = n if opts.op in ("allreduce", "reducescatter") else 1
            got = (src if opts.op == "broadcast" else dst).get()
            if int(mpi.allreduce(int(np.count_nonzero(got != want)), op=MPI.SUM)):
                sys.exit(f"tcp_crc: wrong results with PYHCCL_TCP_CRC={crc}")
        for r in range(opts.rounds):
            for crc in ("1", "0") if r % 2 == 0 else ("0", "1"):
                times[crc].append(turn(comms[crc]))
        if mpi.Get_rank() == 0:
            costs = sorted(100 * (a / b - 1) for a, b in zip(times["1"], times["0"]))
            q = len(costs) // 4
            print(f"| {size:,} | {statistics.median(times['1']) * 1e3:.2f} | "
                  f"{statistics.median(times['0']) * 1e3:.2f} | {statistics.median(costs):+.1f}% | "
                  f"{costs[q]:+.1f}% to {costs[-1 - q]:+.1f}% |", flush=True)
        size *= 4
    for comm in comms.values():
        comm.destroy()


def main():
    opts, simhosts = parse_args()
    if opts.worker:
        return worker(opts)
    hosts = int(opts.layout.split("x")[0])
    rate = None if opts.rate == "none" else opts.rate
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", *sys.argv[1:]]
    env = {"PYTHONPATH": str(ROOT), "HCCL_EXEC_TIMEOUT": "300"}
    with simhosts.Cluster(hosts, rate=rate, congestion=opts.congestion) as cluster:
        cmd, full_env = cluster.mpi_job(opts.layout, argv, env=env)
        proc = subprocess.run(cmd, env=full_env, text=True, timeout=3600, cwd=ROOT)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
