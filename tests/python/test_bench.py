"""python -m pyhccl.bench: rows, checks, --compare mpi, --json and --plot, run in-process on
every rank (the benchmark is collective over MPI.COMM_WORLD)."""

import json
import os

import pytest
from mpi4py import MPI

from pyhccl import bench

pytestmark = pytest.mark.mpi
WORLD = MPI.COMM_WORLD


@pytest.fixture
def shared_dir(tmp_path):
    """Rank 0's temporary directory, the same path on every rank."""
    return WORLD.bcast(str(tmp_path), root=0)


@pytest.mark.parametrize("op,extra", [
    ("allreduce", ["-o", "max", "-d", "bfloat16"]),
    ("allgather", ["-d", "int32"]),
    ("reducescatter", ["-d", "float16", "-o", "prod"]),
    ("alltoall", []),
    ("broadcast", ["-r", str(WORLD.Get_size() - 1)]),
    ("reduce", ["-r", "0", "-o", "min"]),
    ("sendrecv", ["-d", "float64"]),
])
def test_every_collective_is_correct(op, extra, shared_dir, capsys):
    path = os.path.join(shared_dir, f"{op}.json")
    rc = bench.main(["--op", op, "-b", "4", "-e", "40K", "-f", "32", "-n", "3", "-w", "1",
                     "--warmup-s", "0.05", "--compare", "mpi", "--json", path, *extra])
    out = capsys.readouterr().out
    assert rc == 0
    if WORLD.Get_rank() != 0:
        assert out == ""                               # rank 0 reports
        return
    with open(path) as f:
        data = json.load(f)
    rows = data["rows"]
    assert [r["size"] for r in rows] and all(r["wrong"] == 0 for r in rows)
    assert data["ranks"] == WORLD.Get_size() and data["op"] == op
    assert all(r["time_us"] > 0 and r["busbw"] >= 0 for r in rows)
    if not (op != "alltoall" and "bfloat16" in extra):
        assert all(r["mpi_wrong"] == 0 and r["ratio"] > 0 for r in rows)
    lines = out.splitlines()
    assert lines[0].startswith(f"# pyhccl.bench {op} on ")
    assert "#wrong" in lines[2] and "mpi/ours" in lines[2]
    assert len([ln for ln in lines if not ln.startswith("#")]) == len(rows)
    assert "# Out of bounds values : 0 OK" in lines
    assert any(ln.startswith("# Avg bus bandwidth    : ") for ln in lines)


def test_plot(shared_dir, capsys):
    pytest.importorskip("matplotlib")
    path = os.path.join(shared_dir, "plot.png")
    assert bench.main(["-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "--compare", "mpi",
                       "--warmup-s", "0", "--plot", path]) == 0
    if WORLD.Get_rank() == 0:
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        assert f"# plot: {path}" in capsys.readouterr().out


def test_plot_without_matplotlib_fails_before_running(monkeypatch, capsys):
    """It printed a comment and exited 0; now it stops at once, naming the extra."""
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)   # import fails
    with pytest.raises(SystemExit) as info:
        bench.main(["-b", "1K", "-e", "1K", "--plot", "never.png"])
    assert info.value.code == 2
    assert "--plot needs matplotlib" in capsys.readouterr().err


def test_repeats_take_the_median(capsys):
    assert bench.main(["-b", "1K", "-e", "4K", "-f", "4", "-n", "2", "-R", "3", "--warmup-s", "0"]) == 0
    if WORLD.Get_rank() == 0:
        assert "median of 3 runs" in capsys.readouterr().out


def test_bad_flags(capsys):
    for argv in (["-d", "complex64"], ["-b", "10", "-e", "5"], ["-f", "1"], ["--op", "nope"],
                 ["-b", "12Q"], ["--warmup-s", "-1"]):
        with pytest.raises(SystemExit) as info:
            bench.parse_args(argv)
        assert info.value.code == 2
    assert bench.parse_args(["-d", "float", "-b", "1K", "-e", "1.5M"]).dtype == "float32"
    assert bench.parse_size("1.5M") == 3 << 19 and bench.parse_size("64K") == 65536
    capsys.readouterr()


def test_each_library_waits_for_its_slowest_rank_itself():
    """pyhccl's timings take their largest in pyhccl: ranks done first must not wait in
    MPI, whose polling took the cores from ranks still timing (Open MPI, 16 ranks)."""
    class NoMpi:
        def allreduce(self, *args, **kwargs):
            raise AssertionError("waited in MPI for pyhccl's timing")

    comm = bench.comm_from_mpi(WORLD)
    stream = bench.pyhccl.Stream()
    try:
        case = type("Case", (), {"comm": comm, "mpi": NoMpi()})()
        seconds = 0.5 + WORLD.Get_rank()
        assert bench.slowest(case, "pyhccl", seconds, stream) == 0.5 + WORLD.Get_size() - 1
        case.mpi = WORLD
        assert bench.slowest(case, "mpi", seconds, stream) == 0.5 + WORLD.Get_size() - 1
    finally:
        stream.destroy()
        comm.destroy()
