"""The per-layout tables of benchmarks/README.md from runs of multihost.py --json.

Each cell is the median over the given runs of MPICH's time / pyhccl's time (above 1:
pyhccl is faster), from 32 KiB with pyhccl's busbw as a share of the bound on a host's
link (multihost.py's bound, at the run's --rate). A layout's heading counts the cells at
least as fast as MPICH; the summary on stderr adds the cells at 90% of the bound or more
from 4 MiB, and any wrong result.

    python benchmarks/multihost_table.py runs/*.json > tables.md
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict

from multihost import bound_gbs, link_bits, simhosts

OPS = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall"]
SHARE_FROM = 32 << 10   # busbw shares from this size (smaller ones are latency)
FULL_FROM = 4 << 20     # where the 90% target applies


def load(paths, mpi):
    """{layout: {(op, size): [row, ...]}} and {layout: link bits/s}."""
    rows, links = defaultdict(lambda: defaultdict(list)), {}
    for path in paths:
        data = json.loads(open(path).read())
        layout = data["layout"]
        links[layout] = link_bits(data["rate"], data.get("ring_bps", 0))
        for key, r in last_rows(data["results"].get(mpi, {})).items():
            rows[layout][key].append(r)
    return rows, links


def last_rows(results):
    """{(op, size): row} of one run's {op: rows}, the rows MPI was timed in. A run may time
    one size twice (its first sizes round up to whole elements per rank): the later one
    counts, as the first size of a run measures its warm-up."""
    return {(op, r["size"]): r for op, op_rows in results.items() for r in op_rows
            if r.get("ratio") is not None}


def table(layout, cells, link_bps, mpi="MPICH"):
    """The layout's table from {(op, size): [row, ...]}, and its counts on stderr."""
    counts = simhosts.parse_layout(layout)
    hosts, ranks = len(counts), sum(counts)
    ops = sorted({op for op, _ in cells}, key=lambda op: (OPS.index(op) if op in OPS else len(OPS), op))
    lines, good, total, full, full_total, wrong = [], 0, 0, 0, 0, 0
    for size in sorted({s for _, s in cells}):
        texts = []
        for op in ops:
            runs = cells.get((op, size))
            if not runs:
                texts.append("")
                continue
            ratio = round(statistics.median(r["ratio"] for r in runs), 2)
            share = statistics.median(r["busbw"] for r in runs) / bound_gbs(op, hosts, ranks, link_bps / 8)
            wrong += sum(r["wrong"] + (r.get("mpi_wrong") or 0) for r in runs)
            total += 1
            good += ratio >= 1.0
            if size >= FULL_FROM:
                full_total += 1
                full += round(100 * share) >= 90
            texts.append(f"{ratio:.2f}" + (f" ({100 * share:.0f}%)" if size >= SHARE_FROM else ""))
        lines.append(f"| {size:,} | " + " | ".join(texts) + " |")
    head = [f"#### {layout}: {good} of {total} cells at least as fast as {mpi}", "",
            "| size | " + " | ".join(ops) + " |", "|---:|" + "---:|" * len(ops)]
    print(f"{layout}: {good} of {total} cells at least as fast as {mpi}; from 4 MiB {full} of "
          f"{full_total} at 90% of the bound or more; {wrong} wrong results", file=sys.stderr)
    return "\n".join(head + lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="multihost.py --json files (several runs, layouts)")
    ap.add_argument("--mpi", default="MPICH", help="which MPI's results (MPICH, Open MPI)")
    opts = ap.parse_args()
    rows, links = load(opts.json, opts.mpi)
    print("\n".join(table(layout, rows[layout], links[layout], opts.mpi) for layout in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
