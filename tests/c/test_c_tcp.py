"""Parts of the TCP transport on their own, linked directly into C++ checks:

- tests/c/tcp_setup_check.cc: the set-up handshake (csrc/hccl/transport/tcp/setup.cc), two
  ranks as threads, one reaching the other through a recording relay. The job secret never
  crosses the network, a captured hello replayed to a rank's listener during set-up is
  refused, and a listener that cannot prove the secret is not taken for the peer.
- tests/c/tcp_hold_check.cc: the connection (conn.cc), a sending and a receiving one over
  socket pairs. The signature check's headers that a connection holds back
  (Transfer::lazy) stay off the wire until a flush, a message behind them or the limit per
  socket, then arrive in order and intact; one behind a message in flight is not held.

No MPI: under mpiexec only the first rank runs them."""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT, first_rank_only

CSRC = ROOT / "csrc"
TCP = CSRC / "hccl" / "transport" / "tcp"
COMMON = [CSRC / "hccl" / "transport" / "transfer.cc", CSRC / "hccl" / "transport" / "wait_error.cc",
          *sorted((CSRC / "hccl" / "net").glob("*.cc")),
          *(CSRC / "common" / f for f in ("crc32c.cc", "crc32c_fold.cc", "hmac.cc", "sha256.cc"))]

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found"),
              first_rank_only]


def run_check(tmp_path, name, sources, want, **env):
    """Builds tests/c/NAME.cc with `sources` and runs it (the environment less fault
    injection, plus `env`); returns its stderr once it printed `want` and exited 0."""
    exe = tmp_path / name
    # -O0: a quarter of -O1's compile time, and these do not need speed.
    cmd = ["g++", "-std=c++17", "-O0", "-pthread", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
           f"-I{ROOT / 'include'}", f"-I{CSRC}", str(ROOT / "tests" / "c" / f"{name}.cc"),
           *map(str, sources + COMMON), "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    assert build.returncode == 0, f"compile failed:\n{build.stderr}"
    run_env = {k: v for k, v in os.environ.items()
               if not k.startswith(("HCCL_IF_", "PYHCCL_FAULT", "PYHCCL_TCP_CRC"))}
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=90, env={**run_env, **env})
    assert proc.returncode == 0 and proc.stdout.strip() == want, \
        f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stderr


@pytest.mark.timeout(180)
def test_tcp_setup_check(tmp_path):
    """A replayed hello is refused while set-up goes on (and then completes); no byte on
    the wire holds the secret; an impostor listener is found out."""
    err = run_check(tmp_path, "tcp_setup_check", [TCP / "setup.cc", TCP / "conn.cc"], "tcp setup ok")
    assert err.count("wrong job secret (or a hello replayed") == 2, err


@pytest.mark.timeout(180)
@pytest.mark.parametrize("crc", ["1", "0"])
def test_tcp_hold_check(tmp_path, crc):
    """Held headers, with and without the CRC trailer (PYHCCL_TCP_CRC)."""
    run_check(tmp_path, "tcp_hold_check", [TCP / "conn.cc"], "tcp hold ok", PYHCCL_TCP_CRC=crc)
