"""What the TCP transport's CRC32C check (PYHCCL_TCP_CRC) costs, in one run.

Two simulated hosts (tests/multihost/simhosts.py) on links shaped to --rate, one or more
ranks each; `python -m pyhccl.bench` runs the collective with the check on and off,
alternating which goes first, --rounds times. Prints the median busbw of each and the
cost (1 - on / off) per size.

    sudo python benchmarks/tcp_crc.py [--layout 2x1] [--rate 10gbit|none] [--op allreduce]
        [-b 1M -e 64M] [--rounds 5]

Needs root (namespaces), like the multi-host tests.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "multihost"))
import simhosts  # noqa: E402


def bench(cluster, opts, crc, out):
    argv = [sys.executable, "-m", "pyhccl.bench", "--op", opts.op, "-b", opts.minbytes, "-e",
            opts.maxbytes, "-f", "4", "-n", str(opts.iters), "-w", "3", "--json", str(out)]
    env = {"PYTHONPATH": str(ROOT), "PYHCCL_TCP_CRC": crc, "HCCL_EXEC_TIMEOUT": "300"}
    cmd, full_env = cluster.mpi_job(opts.layout, argv, env=env)
    # From ROOT: `python -m` puts the working directory first on sys.path, so a run from
    # another checkout would time that checkout's pyhccl.
    proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=1200,
                          cwd=ROOT)
    if proc.returncode != 0:
        sys.exit(f"the benchmark failed (PYHCCL_TCP_CRC={crc}):\n{proc.stdout}\n{proc.stderr}")
    return {r["size"]: r["busbw"] for r in json.loads(out.read_text())["rows"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layout", default="2x1", help="hosts x ranks per host")
    ap.add_argument("--rate", default="10gbit", help="every link (tc syntax), or none")
    ap.add_argument("--op", default="allreduce")
    ap.add_argument("-b", "--minbytes", default="1M")
    ap.add_argument("-e", "--maxbytes", default="64M")
    ap.add_argument("-n", "--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    simhosts.add_congestion_option(ap)
    opts = ap.parse_args()
    hosts = int(opts.layout.split("x")[0])
    rate = None if opts.rate == "none" else opts.rate
    runs = {"1": [], "0": []}
    with tempfile.TemporaryDirectory() as tmp, simhosts.Cluster(hosts, rate=rate, congestion=opts.congestion) as cluster:
        for i in range(opts.rounds):
            for crc in ("1", "0") if i % 2 == 0 else ("0", "1"):
                runs[crc].append(bench(cluster, opts, crc, Path(tmp) / f"{crc}-{i}.json"))
    print(f"# {opts.op}, {opts.layout} simulated hosts, links {opts.rate}; median of "
          f"{opts.rounds} runs each, alternating")
    # Each round's on and off ran back to back, so their ratio shares the machine's state
    # of the moment; the median of those ratios is steadier than the ratio of medians.
    print("| size | busbw, CRC on (GB/s) | busbw, CRC off (GB/s) | cost (medians) "
          "| cost (median of rounds) | middle half of rounds |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size in runs["1"][0]:
        on = statistics.median(r[size] for r in runs["1"])
        off = statistics.median(r[size] for r in runs["0"])
        costs = sorted(100 * (1 - a[size] / b[size]) for a, b in zip(runs["1"], runs["0"]))
        q = len(costs) // 4
        print(f"| {size:,} | {on:.3f} | {off:.3f} | {100 * (1 - on / off):+.1f}% | "
              f"{statistics.median(costs):+.1f}% | {costs[q]:+.1f}% to {costs[-1 - q]:+.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
