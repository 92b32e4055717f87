"""The TCP connection (csrc/hccl/transport/tcp/conn.cc) on its own: tests/c/tcp_hold_check.cc
links it directly and runs a sending and a receiving connection over socket pairs. The
signature check's headers that a connection holds back (Transfer::lazy) stay off the wire
until a flush, a message behind them or the limit per socket, then arrive in order and
intact; one behind a message in flight is not held.

No MPI: under mpiexec only the first rank runs it."""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT, first_rank_only

CSRC = ROOT / "csrc"
SOURCES = [ROOT / "tests" / "c" / "tcp_hold_check.cc", CSRC / "hccl" / "transport" / "tcp" / "conn.cc",
           CSRC / "hccl" / "transport" / "transfer.cc", CSRC / "hccl" / "transport" / "wait_error.cc",
           *sorted((CSRC / "hccl" / "net").glob("*.cc")),
           *(CSRC / "common" / f for f in ("crc32c.cc", "crc32c_fold.cc"))]

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")


@first_rank_only
@pytest.mark.timeout(180)
@pytest.mark.parametrize("crc", ["1", "0"])
def test_tcp_hold_check(tmp_path, crc):
    """Held headers, with and without the CRC trailer (PYHCCL_TCP_CRC)."""
    exe = tmp_path / "tcp_hold_check"
    cmd = ["g++", "-std=c++17", "-O0", "-pthread", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
           f"-I{ROOT / 'include'}", f"-I{CSRC}", *map(str, SOURCES), "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    assert build.returncode == 0, f"compile failed:\n{build.stderr}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYHCCL_FAULT", "PYHCCL_TCP_CRC"))}
    env["PYHCCL_TCP_CRC"] = crc
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=90, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "tcp hold ok", \
        f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
