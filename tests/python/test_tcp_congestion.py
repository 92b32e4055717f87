"""PYHCCL_TCP_CONGESTION: the TCP congestion control of a rank's connections to ranks on
other hosts (unset: the system's). The program lists its own TCP sockets with `ss` and
reports the algorithm of each."""
import os
import re
import shutil
from pathlib import Path

import pytest

import pyhccl
from conftest import OWN_JOBS_HERE
from rank_procs import run_ranks

pytestmark = [
    pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="needs the host runtime"),
    pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)"),
]

PROGRAM = """
    import subprocess
    rank, path = int(sys.argv[1]), sys.argv[2]
    pyhccl.set_device(rank)
    try:
        comm = pyhccl.Comm(2, root_info(path, rank), rank)
    except pyhccl.HcclError as e:
        print(f"FAILED {e}", flush=True)
        sys.exit(0)
    x = np.full(1 << 16, rank + 1, np.float32)
    s = pyhccl.Stream()
    comm.all_reduce(x, stream=s)
    s.synchronize()
    first = float(x[0])
    # ss -tinp: a socket's line (with users:(("python",pid=...))), then its details,
    # among them the congestion control's name
    known = open("/proc/sys/net/ipv4/tcp_available_congestion_control").read().split()
    lines = subprocess.run(["ss", "-tinpH", "state", "established"], capture_output=True,
                           text=True).stdout.splitlines()
    mine = [next((w for w in lines[i + 1].split() if w in known), "?")
            for i in range(len(lines) - 1) if f"pid={os.getpid()}," in lines[i]]
    comm.all_reduce(x, stream=s)  # no rank closes its sockets before both have listed theirs
    s.synchronize()
    comm.destroy()
    print(f"DONE sum={first} algorithms={','.join(mine)}", flush=True)
"""


def _sysctl(name):
    path = Path("/proc/sys/net/ipv4") / name
    return path.read_text().split() if path.exists() else []


def _another_algorithm():
    """An algorithm this process may use that is not the system's default, or None."""
    default = (_sysctl("tcp_congestion_control") or [None])[0]
    usable = _sysctl("tcp_available_congestion_control" if os.geteuid() == 0
                     else "tcp_allowed_congestion_control")
    return next((name for name in ("reno", "cubic") if name != default and name in usable), None)


def _algorithms(out):
    m = re.search(r"DONE sum=3.0 algorithms=(\S*)", out)
    assert m, out
    return m.group(1).split(",") if m.group(1) else []


@pytest.mark.timeout(120)
def test_connections_use_the_congestion_control_asked_for(tmp_path):
    """With the variable, the control and data sockets between the ranks use it (at
    least 2 per rank: one of each); without it, none does."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    name = _another_algorithm()
    if name is None:
        pytest.skip("no congestion control other than the default can be chosen here")
    env = dict(PYHCCL_TRANSPORT="tcp", HCCL_CONNECT_TIMEOUT="60")
    asked = run_ranks(tmp_path, PROGRAM, 2, env={**env, "PYHCCL_TCP_CONGESTION": name})
    for out in asked:
        assert _algorithms(out).count(name) >= 2, (name, asked)
    (tmp_path / "root").unlink()
    default = run_ranks(tmp_path, PROGRAM, 2, env=env)
    for out in default:
        assert name not in _algorithms(out), (name, default)


@pytest.mark.timeout(120)
def test_an_unknown_congestion_control_fails_setup_on_every_rank(tmp_path):
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    outs = run_ranks(tmp_path, PROGRAM, 2, env=dict(
        PYHCCL_TRANSPORT="tcp", HCCL_CONNECT_TIMEOUT="60", PYHCCL_TCP_CONGESTION="no-such-cc"))
    for out in outs:
        assert "FAILED" in out and "PYHCCL_TCP_CONGESTION=no-such-cc" in out and \
            "no such TCP congestion control" in out and "it has:" in out, outs
