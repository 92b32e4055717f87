"""pyhccl beside MPI across simulated hosts, in one run.

Builds a cluster of simulated hosts (network namespaces on a bridge, links shaped with tc:
tests/multihost/simhosts.py), measures what one TCP stream and several streams carry
between two hosts, then runs `python -m pyhccl.bench --compare mpi` for each collective
with the ranks spread over the hosts (MPICH's mpiexec launches into the namespaces; Open
MPI's mpirun too when --openmpi names one). Prints one table per collective: size, pyhccl
and MPI busbw, their ratio, and pyhccl's busbw as a share of the link's bound; then the
layout's table of ratios as in benchmarks/README.md (multihost_table.py).

The bound: every byte a host's ranks need from the other hosts crosses that host's link.
With H hosts of L ranks (n = H x L), AllReduce must move 2(H-1)/H x S each way over a
host's link, so its busbw (2(n-1)/n x S / t) is at most
link x [2(n-1)/n] / [2(H-1)/H]; AllGather and ReduceScatter: link x [(n-1)/n] / [(H-1)/H];
AlltoAll: link x [(n-1)/n] / [L(n-L)/n]; Broadcast: link. "link" is the shaped rate (nominal), and the bound is also given against
what TCP reached over the link in this run (measured), which on a 2-core machine is
often below the nominal rate. `--rate none` leaves the links unshaped: the cores are then
the limit, and "link" is what each host carried with every host sending to the next at once.

    sudo python benchmarks/multihost.py [--layout 2x2] [--rate 10gbit|none] [--delay 1ms] [-b 1M -e 64M]
        [--ops allreduce,allgather,reducescatter,broadcast] [-z 1] [-R 5] [--openmpi PATH/mpirun [--no-mpich]]

Needs root (namespaces), like the multi-host tests.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "multihost"))
import simhosts  # noqa: E402

RATE_UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12, "bit": 1.0}
# MPI between hosts over the (shaped) network too: its UCX or libfabric would otherwise
# find the other "hosts" on this machine and use shared memory.
MPI_OVER_LINKS = {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "eth0", "FI_PROVIDER": "tcp",
                  "OMPI_MCA_btl": "self,vader,tcp", "OMPI_MCA_pml": "ob1"}

# A sender and a receiver of raw TCP, to measure what the link carries.
SINK = """
import socket, sys, time
n = int(sys.argv[1])
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 47001)); srv.listen(n)
print("LISTENING", flush=True)
conns = [srv.accept()[0] for _ in range(n)]
import selectors
sel = selectors.DefaultSelector()
for c in conns: sel.register(c, selectors.EVENT_READ)
total, t0, open_ = 0, None, n
while open_:
    for key, _ in sel.select():
        b = key.fileobj.recv(1 << 20)
        if t0 is None: t0 = time.monotonic()
        if not b:
            sel.unregister(key.fileobj); open_ -= 1
        total += len(b)
print(total / (time.monotonic() - t0), flush=True)
"""
SOURCE = """
import socket, sys, threading
host, n, nbytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def push():
    s = socket.create_connection((host, 47001)); buf = b"x" * (1 << 20); left = nbytes
    while left > 0:
        s.sendall(buf[:min(left, len(buf))]); left -= len(buf)
    s.close()
ts = [threading.Thread(target=push) for _ in range(n)]
for t in ts: t.start()
for t in ts: t.join()
"""


def link_bits(rate, ring_bps):
    """The link rate the bound uses: the shaped one; unshaped ("none"), what each host carried
    with every host sending to the next at once (bytes/s), the machine's limit."""
    return ring_bps * 8 if rate == "none" else rate_bits(rate)


def rate_bits(text):
    t = text.lower()
    for unit, mul in RATE_UNITS.items():
        if t.endswith(unit):
            return float(t[:-len(unit)]) * mul
    return float(t)


def measure_tcp(cluster, streams, nbytes=256 << 20):
    """Bytes/s that `streams` TCP connections carry from host 1 to host 0."""
    sink = cluster.popen(0, [sys.executable, "-c", SINK, str(streams)], stdout=subprocess.PIPE,
                         text=True)
    assert sink.stdout.readline().strip() == "LISTENING"
    cluster.run(1, [sys.executable, "-c", SOURCE, cluster.host(0).ip, str(streams),
                    str(nbytes // streams)], timeout=120)
    out, _ = sink.communicate(timeout=60)
    return float(out.split()[-1])


def measure_ring(cluster, hosts, nbytes=64 << 20):
    """Bytes/s per host when every host sends to the next one at once (one TCP stream
    each, host H-1 to host 0): what every link carries when all are busy both ways, as in
    a collective. The slowest host's rate: on a machine with few cores the kernel's own
    work for all the links at once, not the shaping, can be the limit."""
    sinks = [cluster.popen(h, [sys.executable, "-c", SINK, "1"], stdout=subprocess.PIPE, text=True)
             for h in range(hosts)]
    for sink in sinks:
        assert sink.stdout.readline().strip() == "LISTENING"
    sources = [cluster.popen(h, [sys.executable, "-c", SOURCE, cluster.host((h + 1) % hosts).ip, "1",
                                 str(nbytes)]) for h in range(hosts)]
    for source in sources:
        source.wait(timeout=120)
    return min(float(sink.communicate(timeout=60)[0].split()[-1]) for sink in sinks)


def bound_factor(op, hosts, ranks):
    n, h = ranks, hosts
    if op == "allreduce":
        return (2 * (n - 1) / n) / (2 * (h - 1) / h)
    if op in ("allgather", "reducescatter"):
        return ((n - 1) / n) / ((h - 1) / h)
    if op == "alltoall":
        # each rank sends (n-L)/n of its buffer off the host: L(n-L)/n x S per host link
        local = n // h
        return ((n - 1) / n) / (local * (n - local) / n)
    return 1.0  # broadcast: S crosses each link


def bound_gbs(op, hosts, ranks, bytes_per_s):
    """The most busbw (GB/s) a host link carrying `bytes_per_s` each way allows `op`."""
    return bytes_per_s / 1e9 * bound_factor(op, hosts, ranks)


def run_bench(cluster, layout, op, args, mpiexec, label, tmp):
    out = Path(tmp) / f"{label}-{op}.json"
    # Open MPI's ranks run the Python beside its mpirun (a venv with mpi4py built for it)
    python = Path(mpiexec).parent / "python" if mpiexec else Path(sys.executable)
    argv = [str(python), "-m", "pyhccl.bench", "--op", op, "-b", args.minbytes, "-e",
            args.maxbytes, "-f", str(args.factor), "-n", str(args.iters), "-w", str(args.warmup),
            "-z", str(args.blocking), "-R", str(args.repeats), "--compare", "mpi", "--json", str(out)]
    env = {"PYTHONPATH": str(ROOT), "HCCL_EXEC_TIMEOUT": "300", "HCCL_CONNECT_TIMEOUT": "120",
           **MPI_OVER_LINKS}
    cmd, full_env = cluster.mpi_job(layout, argv, env=env, mpiexec=mpiexec, bind=args.bind_to)
    # From ROOT: `python -m` puts the working directory first on sys.path, so a run from
    # another checkout would time that checkout's pyhccl.
    proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=3000,
                          cwd=ROOT)
    if proc.returncode != 0 or not out.exists():
        print(f"{label} {op}: the benchmark failed\n{proc.stdout}\n{proc.stderr}", file=sys.stderr)
        return None
    return json.loads(out.read_text())


def report(data, op, label, hosts, ranks, link_bps, tcp_bps):
    nominal, measured = bound_gbs(op, hosts, ranks, link_bps / 8), bound_gbs(op, hosts, ranks, tcp_bps)
    print(f"\n## {op}, {label} ({data['mpi_library']}), {hosts} hosts x {ranks // hosts} ranks")
    print(f"busbw bound: {nominal:.2f} GB/s from the link rate, {measured:.2f} GB/s from "
          f"what TCP carried in this run")
    print("| size | pyhccl µs | MPI µs | pyhccl busbw (GB/s) | MPI busbw (GB/s) | pyhccl / MPI "
          "| % of bound (link) | % of bound (TCP) | wrong |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in data["rows"]:
        print(f"| {r['size']:,} | {r['time_us']:.1f} | {r.get('mpi_time_us') or float('nan'):.1f} | "
              f"{r['busbw']:.3f} | {r.get('mpi_busbw', float('nan')):.3f} | "
              f"{r.get('ratio', float('nan')):.2f} | {100 * r['busbw'] / nominal:.0f}% | "
              f"{100 * r['busbw'] / measured:.0f}% | {r['wrong'] + r.get('mpi_wrong', 0)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layout", default="2x2", help="ranks per host, e.g. 2x2, 4x1, 3+1")
    ap.add_argument("--rate", default="10gbit", help="every host's link (tc syntax), or none: "
                    "unshaped, the bound then from what every host carried at once (the cores' limit)")
    ap.add_argument("--delay", help="added to what every host sends (tc syntax, e.g. 1ms)")
    simhosts.add_congestion_option(ap, "for both libraries, the hosts'")
    ap.add_argument("--ops", default="allreduce,allgather,reducescatter,broadcast")
    ap.add_argument("-b", "--minbytes", default="1M")
    ap.add_argument("-e", "--maxbytes", default="64M")
    ap.add_argument("-f", "--factor", type=int, default=4)
    ap.add_argument("-n", "--iters", type=int, default=10)
    ap.add_argument("-w", "--warmup", type=int, default=3)
    ap.add_argument("-z", "--blocking", type=int, default=0, choices=[0, 1],
                    help="1: synchronize after every operation (round trips)")
    ap.add_argument("-R", "--repeats", type=int, default=1, help="median of this many timings")
    ap.add_argument("--json", metavar="FILE", help="also write every row as JSON")
    ap.add_argument("--bind-to", default="none", help="the launcher binds each rank to this "
                    "(none, core: a rank and its threads stay on one core; both MPIs alike)")
    ap.add_argument("--openmpi", metavar="MPIRUN", help="also run under this Open MPI mpirun "
                    "(the ranks run the python beside it, e.g. .venv-openmpi/bin/mpirun from make bench)")
    ap.add_argument("--no-mpich", action="store_true", help="with --openmpi: beside Open MPI only")
    opts = ap.parse_args()
    if opts.no_mpich and not opts.openmpi:
        ap.error("--no-mpich needs --openmpi")
    why = simhosts.unavailable_reason()
    if why:
        sys.exit(f"cannot simulate hosts here: {why}")
    counts = simhosts.parse_layout(opts.layout)
    hosts, ranks = len(counts), sum(counts)
    shaped = opts.rate != "none"
    with simhosts.Cluster(hosts, rate=opts.rate if shaped else None, delay=opts.delay,
                          congestion=opts.congestion) as cluster, tempfile.TemporaryDirectory() as tmp:
        tcp1 = measure_tcp(cluster, 1)
        tcp2 = measure_tcp(cluster, 2)
        ring = measure_ring(cluster, hosts)
        link = link_bits(opts.rate, ring)
        print(f"# {hosts} simulated hosts ({opts.layout}), "
              f"{'links shaped to ' + opts.rate if shaped else 'links unshaped'}"
              f"{' + ' + opts.delay + ' delay' if opts.delay else ''}, TCP congestion control "
              f"{cluster.congestion or 'the machine default'}: one TCP "
              f"stream carried {tcp1 * 8 / 1e9:.2f} Gbit/s, two {tcp2 * 8 / 1e9:.2f} Gbit/s; "
              f"every host sending to the next at once, {ring * 8 / 1e9:.2f} Gbit/s each (slowest)")
        runs = [("MPICH", None)] if not opts.no_mpich else []
        runs += [("Open MPI", opts.openmpi)] if opts.openmpi else []
        by_mpi = {}
        for label, mpiexec in runs:
            results = by_mpi[label] = {}
            for op in opts.ops.split(","):
                data = run_bench(cluster, opts.layout, op, opts, mpiexec, label, tmp)
                if data:
                    report(data, op, label, hosts, ranks, link, max(tcp1, tcp2))
                    results[op] = data["rows"]
            summary(results, label, opts.layout, link)
        if opts.json:  # every MPI's rows, by collective
            Path(opts.json).write_text(json.dumps(
                {"layout": opts.layout, "rate": opts.rate, "tcp_bps": [tcp1, tcp2], "ring_bps": ring,
                 "results": by_mpi},
                indent=1))
    return 0


def summary(results, label, layout, link_bps):
    """This run's table for the layout, as benchmarks/README.md's (multihost_table.py)."""
    from multihost_table import last_rows, table  # here: it imports this module's helpers
    cells = {key: [r] for key, r in last_rows(results).items()}
    if cells:
        print("\n" + table(layout, cells, link_bps, label))


if __name__ == "__main__":
    sys.exit(main())
