"""benchmarks/multihost_table.py: the README's tables from multihost.py --json runs. A cell
is the median over the runs of MPICH's time / pyhccl's, with the share of the link bound
from 32 KiB; a size a run timed twice counts once (its later timing)."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "multihost_table.py"


def row(size, ratio, busbw=0.0, wrong=0):
    return {"size": size, "ratio": ratio, "busbw": busbw, "wrong": wrong, "mpi_wrong": 0}


def run(tmp_path, runs, rate="1gbit", ring_bps=0):
    paths = []
    for i, results in enumerate(runs):
        path = tmp_path / f"run{i}.json"
        path.write_text(json.dumps({"layout": "2x2", "rate": rate, "tcp_bps": [0, 0],
                                    "ring_bps": ring_bps, "results": {"MPICH": results}}))
        paths.append(str(path))
    out = subprocess.run([sys.executable, str(SCRIPT), *paths], capture_output=True, text=True,
                         check=True)
    return out.stdout, out.stderr


def test_cells_are_medians_over_runs_with_the_share_of_the_bound(tmp_path):
    # 2x2 AllReduce: bound 1 Gbit/s = 0.125 GB/s x 2(n-1)/n / [2(H-1)/H] = 0.1875 GB/s busbw
    runs = [{"allreduce": [row(8, 0.5), row(8, 0.9), row(32768, 1.2, 0.15), row(4 << 20, 0.9, 0.18)],
             "broadcast": [row(8, 1.1)]},
            {"allreduce": [row(8, 0.7), row(32768, 0.8, 0.16), row(4 << 20, 1.1, 0.17)],
             "broadcast": [row(8, 1.3)]},
            {"allreduce": [row(8, 0.8), row(32768, 1.0, 0.17), row(4 << 20, 1.0, 0.16)]}]
    out, summary = run(tmp_path, runs)
    lines = out.splitlines()
    # the first run's second timing of 8 B (0.9) counts, not its first (0.5)
    assert "| 8 | 0.80 | 1.20 |" in lines, out
    assert "| 32,768 | 1.00 (85%) |  |" in lines, out      # 0.16 / 0.1875
    assert "| 4,194,304 | 1.00 (91%) |  |" in lines, out   # 0.17 / 0.1875
    assert lines[0] == "#### 2x2: 3 of 4 cells at least as fast as MPICH", out   # 8 B: 0.80
    assert "from 4 MiB 1 of 1 at 90% of the bound or more; 0 wrong results" in summary, summary


def test_wrong_results_are_counted(tmp_path):
    _, summary = run(tmp_path, [{"reduce": [row(8, 1.0, wrong=3)]}])
    assert "3 wrong results" in summary, summary


def test_unshaped_runs_take_the_bound_from_every_host_sending_at_once(tmp_path):
    # --rate none: what each host carried with all sending (bytes/s) is the link, 1 Gbit/s here
    runs = [{"allreduce": [row(32768, 1.0, 0.17)]}]
    out, _ = run(tmp_path, runs, rate="none", ring_bps=0.125e9)
    assert "| 32,768 | 1.00 (91%) |" in out, out   # 0.17 / 0.1875
