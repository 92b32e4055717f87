"""The profiling API (aclprof*) and PYHCCL_TRACE: tests/c/prof_check.c runs on 1 or 2
ranks without MPI (as tests/c/test_c_hccl.py starts them); the Chrome trace JSON each
process writes is checked here: event names, one tid per stream, times, bytes, the
collectives' arguments, and that only the profiled devices are recorded.

Under mpiexec only the first rank runs these (they start their own processes).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cdrivers import assert_all_pass, build_libs, compile_check, no_shm_leftovers  # noqa: F401
from cdrivers import run_mode
from conftest import first_rank_only

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found"),
    first_rank_only,
]


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    build_libs()
    return compile_check("prof_check.c", tmp_path_factory.mktemp("prof_check") / "prof_check",
                         libs=("-lhccl", "-lmsprofiler", "-lascendcl"))


def traces(directory):
    """{pid: parsed JSON} of the trace files in directory (no leftovers beside them)."""
    files = sorted(Path(directory).iterdir())
    assert all(f.name.startswith("pyhccl-trace-") and f.suffix == ".json" for f in files), files
    out = {}
    for f in files:
        data = json.loads(f.read_text())
        out[int(f.stem.rsplit("-", 1)[1])] = data
    return out


def complete(data):
    return [e for e in data["traceEvents"] if e["ph"] == "X"]


def check_trace(data, pid, rank, nranks):
    """The events of one rank's workload (prof_check.c: workload)."""
    assert set(data) >= {"traceEvents", "otherData"}
    evs = complete(data)
    names = [e["name"] for e in evs]
    assert names == ["aclrtMemcpyAsync", "aclrtMemsetAsync", "HcclAllReduce", "HcclBroadcast"], \
        names
    by = {e["name"]: e for e in evs}
    # Everything ran on the one stream: one tid, named in the metadata.
    assert len({e["tid"] for e in evs}) == 1 and all(e["pid"] == pid for e in evs)
    tid = evs[0]["tid"]
    meta = [e for e in data["traceEvents"] if e["ph"] == "M"]
    assert any(m["name"] == "thread_name" and m["tid"] == tid and
               m["args"]["name"] == f"stream {tid} (device {rank})" for m in meta), meta
    pname = next(m for m in meta if m["name"] == "process_name")["args"]["name"]
    assert f"rank {rank}/{nranks}" in pname, pname
    # In order on the stream, no overlap, sane durations.
    for a, b in zip(evs, evs[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-3, (a, b)
    assert all(0 <= e["dur"] < 60e6 for e in evs)
    assert all(e["args"]["device"] == rank and e["args"]["ok"] for e in evs)
    assert by["aclrtMemcpyAsync"]["args"]["bytes"] == 4096
    assert by["aclrtMemsetAsync"]["args"]["bytes"] == 1000
    ar, bc = by["HcclAllReduce"]["args"], by["HcclBroadcast"]["args"]
    assert (ar["bytes"], ar["count"], ar["dtype"]) == (4096, 1024, "float32"), ar
    assert (bc["bytes"], bc["count"], bc["dtype"]) == (1024, 256, "int32"), bc
    assert ar["rank"] == rank and ar["nranks"] == nranks and ar["comm"] == bc["comm"]
    assert ar["algorithm"] and bc["algorithm"], (ar, bc)
    assert bc["seq"] == ar["seq"] + 1
    assert {"comm": ar["comm"], "rank": rank, "nranks": nranks} in data["otherData"]["ranks"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("nranks", [1, 2])
def test_aclprof_records_tasks_and_collectives(exe, tmp_path, nranks):
    out = tmp_path / "prof"
    results = run_mode(exe, tmp_path, nranks, "prof", out, timeout=100)
    assert_all_pass(results, "prof_check")
    found = traces(out)
    assert len(found) == nranks, sorted(found)
    ranks = {}
    for pid, data in found.items():
        ranks[data["otherData"]["ranks"][0]["rank"]] = (pid, data)
    assert sorted(ranks) == list(range(nranks))
    for rank, (pid, data) in ranks.items():
        check_trace(data, pid, rank, nranks)
    if nranks == 2:  # the same collective: the same algorithm and seq on both ranks
        a, b = (complete(ranks[r][1])[2]["args"] for r in (0, 1))
        assert (a["algorithm"], a["seq"]) == (b["algorithm"], b["seq"])


@pytest.mark.timeout(120)
def test_pyhccl_trace_env_c(exe, tmp_path):
    """PYHCCL_TRACE=dir: no aclprof call, no aclFinalize; written at exit."""
    out = tmp_path / "env" / "made"
    results = run_mode(exe, tmp_path, 2, "env", tmp_path / "unused",
                       env={"PYHCCL_TRACE": str(out)}, timeout=100)
    assert_all_pass(results, "prof_check")
    found = traces(out)
    assert len(found) == 2
    for pid, data in found.items():
        check_trace(data, pid, data["otherData"]["ranks"][0]["rank"], 2)


@pytest.mark.timeout(120)
def test_pyhccl_trace_env_python(tmp_path):
    """The same switch for a Python program (the extension loads the same library)."""
    code = ("import numpy as np, pyhccl\n"
            "pyhccl.set_device(0)\n"
            "s = pyhccl.Stream()\n"
            "a = pyhccl.empty(1000, pyhccl.FLOAT32)\n"
            "a.copy_from(np.ones(1000, np.float32), stream=s)\n"
            "s.synchronize()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYHCCL_")}
    env["PYHCCL_TRACE"] = str(tmp_path / "py")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=100)
    assert p.returncode == 0, p.stderr
    found = traces(tmp_path / "py")
    assert len(found) == 1
    data = next(iter(found.values()))
    evs = complete(data)
    assert evs and all(e["ts"] > 0 and e["dur"] >= 0 for e in evs), data
    copy = [e for e in evs if e["name"] == "aclrtMemcpyAsync"]
    assert len(copy) == 1 and copy[0]["args"]["bytes"] == 4000, evs


@pytest.mark.timeout(60)
def test_bad_inputs_and_call_order(exe, tmp_path):
    out = tmp_path / "errors"
    out.mkdir()
    results = run_mode(exe, tmp_path, 1, "errors", out, timeout=50)
    assert_all_pass(results, "prof_check")
    # Device 1 was profiled, the work ran on device 0: a valid, empty trace.
    other = traces(out / "other-device" / "nested")
    assert len(other) == 1 and complete(next(iter(other.values()))) == []
    empty = traces(out / "empty")
    assert len(empty) == 1 and complete(next(iter(empty.values()))) == []
    # aclprofFinalize without aclprofStop still writes what was recorded.
    unstopped = traces(out / "unstopped")
    assert [e["name"] for e in complete(next(iter(unstopped.values())))] == ["aclrtMemcpyAsync"]
