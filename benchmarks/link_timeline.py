"""When host 0's link carries a queued benchmark's data, for pyhccl and MPI in one job.

Each measurement is one of pyhccl.bench's (a barrier, then `-n` operations queued on one
stream and a synchronize; MPI: its blocking calls), the two libraries by turns, on
simulated hosts (tests/multihost/simhosts.py). Every rank reads CLOCK_MONOTONIC (one
clock: one machine) as it leaves the barrier and when it is done, while `perf record -k
CLOCK_MONOTONIC` records each packet host 0 sends into the bridge (net:netif_receive_skb
on its switch port). Per library, over the measurements, counted from the first rank to
leave the barrier: when host 0's first data packet (over 1,000 bytes) went, how long its
link then stayed busy and at what rate (IP bytes), and when the last rank was done
(benchmarks/README.md, the 8 KiB Broadcast on 2x2).

    sudo python benchmarks/link_timeline.py [--layout 2x2] [--rate 1gbit] [--op broadcast]
        [-b 8K] [-n 2000] [-w 200] [--rounds 5]

Needs root (namespaces) and perf.
"""
import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import multihost  # noqa: E402  (also puts tests/multihost on the path)
import simhosts  # noqa: E402

IMPLS = ("pyhccl", "mpi")
DATA_BYTES = 1000  # smaller packets are acknowledgements and the barrier's


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layout", default="2x2", help="hosts x ranks per host, or A+B+...")
    ap.add_argument("--rate", default="1gbit", help="every link (tc syntax), or none")
    ap.add_argument("--op", default="broadcast",
                    choices=["allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
                             "reduce"])
    ap.add_argument("-b", "--size", default="8K", help="bytes (K, M suffixes)")
    ap.add_argument("-n", "--iters", type=int, default=2000, help="operations a measurement")
    ap.add_argument("-w", "--warmup", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5, help="measurements of each library")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    simhosts.add_congestion_option(ap)
    return ap


def worker(opts):
    """One rank: the measurements; rank 0 prints each one's clocks as a JSON line."""
    from mpi4py import MPI
    import pyhccl
    from pyhccl import bench
    from pyhccl.mpi import comm_from_mpi

    mpi = MPI.COMM_WORLD
    args = bench.parse_args(["--op", opts.op, "-b", opts.size, "-e", opts.size,
                             "-n", str(opts.iters), "-w", str(opts.warmup)])
    comm, stream = comm_from_mpi(mpi), pyhccl.Stream()
    case = bench.Case(args, comm, mpi, args.minbytes)
    bench.warm_up_job(case, list(IMPLS), args.warmup_s, stream)
    for impl in IMPLS:
        case.runner(impl)(args.warmup_iters, stream)
    for r in range(opts.rounds):
        for impl in IMPLS if r % 2 == 0 else IMPLS[::-1]:
            mpi.Barrier()
            t0 = time.monotonic()
            case.runner(impl)(args.iters, stream)
            clocks = mpi.gather((t0, time.monotonic()), root=0)
            if mpi.rank == 0:
                print(json.dumps({"impl": impl, "t0": [c[0] for c in clocks],
                                  "t1": [c[1] for c in clocks]}), flush=True)
    stream.destroy()
    comm.destroy()


def data_packets(script, port):
    """(time, IP bytes) of each data packet that entered the bridge at `port`, from the
    text of `perf script -F time,trace`."""
    found = []
    for line in script.splitlines():
        t, _, trace = line.partition(":")
        fields = dict(f.split("=", 1) for f in trace.split() if "=" in f)
        if fields.get("dev") == port and int(fields.get("len", 0)) > DATA_BYTES:
            found.append((float(t), int(fields["len"])))
    return found


def timeline(m, sent):
    """One measurement: first data, link busy, rate and last rank done (ms from the
    first rank out of the barrier; Mbit/s)."""
    base, end = min(m["t0"]), max(m["t1"])
    mine = [(t, b) for t, b in sent if base <= t <= end]
    if len(mine) < 2:
        return None
    busy = mine[-1][0] - mine[0][0]
    return {"first": 1e3 * (mine[0][0] - base), "busy": 1e3 * busy,
            "rate": sum(b for _, b in mine) * 8 / busy / 1e6 if busy > 0 else 0.0,
            "done": 1e3 * (end - base)}


def report(rows, sent, opts):
    print(f"# {opts.op} of {opts.size} on {opts.layout} simulated hosts, links {opts.rate}: "
          f"{opts.rounds} measurements of {opts.iters} queued operations each per library, "
          "by turns; ms from the first rank out of the barrier (median, and range)")
    print("| | first data from host 0 | its link busy | rate (Mbit/s) | last rank done |")
    print("|---|---:|---:|---:|---:|")
    for impl in IMPLS:
        lines = [t for t in (timeline(m, sent) for m in rows if m["impl"] == impl) if t]
        if not lines:
            print(f"| {impl} | no data seen | | | |")
            continue
        cells = []
        for key, fmt in (("first", ".2f"), ("busy", ".1f"), ("rate", ".0f"), ("done", ".1f")):
            v = [x[key] for x in lines]
            cells.append(f"{statistics.median(v):{fmt}} ({min(v):{fmt}}-{max(v):{fmt}})")
        print(f"| {impl} | " + " | ".join(cells) + " |")


def main():
    opts = parser().parse_args()
    if opts.worker:
        return worker(opts)
    if shutil.which("perf") is None:
        sys.exit("link_timeline.py: needs perf (linux-tools)")
    counts = simhosts.parse_layout(opts.layout)
    rate = None if opts.rate == "none" else opts.rate
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", *sys.argv[1:]]
    env = {"PYTHONPATH": str(ROOT), "HCCL_EXEC_TIMEOUT": "300", **multihost.MPI_OVER_LINKS}
    with simhosts.Cluster(len(counts), rate=rate, congestion=opts.congestion) as cluster, \
            tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        perf = subprocess.Popen(["perf", "record", "-q", "-a", "-k", "CLOCK_MONOTONIC",
                                 "-e", "net:netif_receive_skb", "-o", str(data)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            cmd, full_env = cluster.mpi_job(opts.layout, argv, env=env)
            proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True,
                                  timeout=1800, cwd=ROOT)
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=120)
        if proc.returncode != 0:
            sys.exit(f"link_timeline.py: the job failed\n{proc.stdout}\n{proc.stderr}")
        if not data.exists():
            sys.exit("link_timeline.py: perf recorded nothing (`perf record -a` needs root, "
                     "or kernel.perf_event_paranoid -1)")
        script = subprocess.run(["perf", "script", "-i", str(data), "-F", "time,trace"],
                                capture_output=True, text=True, check=True).stdout
        sent = data_packets(script, cluster.host(0).veth)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    report(rows, sent, opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
