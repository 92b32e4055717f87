"""The bootstrap rendezvous (csrc/hccl/bootstrap) on its own: tests/c/bootstrap_check.cc
links the bootstrap sources directly, runs ranks as threads and as fork()ed
processes, and checks joining, allgather rounds, refusals, timeouts and ranks
that leave.

No MPI: under mpiexec only the first rank runs it (its timing checks assume the
machine is not shared with three more copies)."""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT, SLOWDOWN, first_rank_only
from csources import sources

SOURCES = [*sources("bootstrap_check.cc"),
           *sorted((ROOT / "csrc" / "hccl" / "bootstrap").glob("*.cc")),
           *sorted((ROOT / "csrc" / "hccl" / "net").glob("*.cc")),
           ROOT / "csrc" / "common" / "sha256.cc", ROOT / "csrc" / "common" / "hmac.cc"]

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")



@first_rank_only
@pytest.mark.timeout(280)
def test_bootstrap_check(tmp_path):
    """Bootstrap with 1, 2, 4, 7 ranks (threads and processes) and its failure modes."""
    exe = tmp_path / "bootstrap_check"
    cmd = ["g++", "-std=c++17", "-O1", "-pthread", "-Wall", "-Wextra", "-Wno-unused-parameter",
           f"-I{ROOT / 'include'}", f"-I{ROOT / 'csrc'}", *map(str, SOURCES), "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert build.returncode == 0, f"compile failed:\n{build.stderr}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HCCL_IF_", "HCCL_CONNECT", "HCCL_EXEC"))}
    env["PYHCCL_TEST_SLOWDOWN"] = str(SLOWDOWN)  # scales the check's time bounds (slowdown.h)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=90, env=env)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "0 failed" in proc.stdout.splitlines()[-1], proc.stdout
