"""The TCP transport's set-up handshake (csrc/hccl/transport/tcp/setup.cc) on its own:
tests/c/tcp_setup_check.cc links it directly and runs two ranks as threads, one reaching
the other through a recording relay. The job secret never crosses the network, a
captured hello replayed to a rank's listener during set-up is refused, and a listener
that cannot prove the secret is not taken for the peer.

No MPI: under mpiexec only the first rank runs it."""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT, first_rank_only

CSRC = ROOT / "csrc"
SOURCES = [ROOT / "tests" / "c" / "tcp_setup_check.cc",
           CSRC / "hccl" / "transport" / "tcp" / "setup.cc", CSRC / "hccl" / "transport" / "tcp" / "conn.cc",
           CSRC / "hccl" / "transport" / "transfer.cc", CSRC / "hccl" / "transport" / "wait_error.cc",
           *sorted((CSRC / "hccl" / "net").glob("*.cc")),
           *(CSRC / "common" / f for f in ("crc32c.cc", "crc32c_fold.cc", "hmac.cc", "sha256.cc"))]

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")


@first_rank_only
@pytest.mark.timeout(180)
def test_tcp_setup_check(tmp_path):
    """A replayed hello is refused while set-up goes on (and then completes); no byte on
    the wire holds the secret; an impostor listener is found out."""
    exe = tmp_path / "tcp_setup_check"
    # -O0: a quarter of -O1's compile time, and the handshake does not need speed.
    cmd = ["g++", "-std=c++17", "-O0", "-pthread", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
           f"-I{ROOT / 'include'}", f"-I{CSRC}", *map(str, SOURCES), "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    assert build.returncode == 0, f"compile failed:\n{build.stderr}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HCCL_IF_", "PYHCCL_FAULT"))}
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=90, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "tcp setup ok", \
        f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.stderr.count("wrong job secret (or a hello replayed") == 2, proc.stderr
