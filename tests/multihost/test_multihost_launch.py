"""Ranks started by hand across simulated hosts (no MPI): rank 0's address from
MASTER_ADDR / MASTER_PORT (torch's variables), for acltdtCreateComm (tests/c/tdt_check.c)
and for pyhccl.Comm.from_env with torchrun's variables; without them the ranks of another
host cannot find rank 0 and say so within HCCL_CONNECT_TIMEOUT.
"""
import subprocess

import pytest

import mhtest
import simhosts
from mhtest import PYTHON, ROOT

pytestmark = [mhtest.once]
PORT = 29500  # each simulated host has its own network namespace: nothing else listens there


@pytest.fixture(scope="module")
def cluster():
    mhtest.require_simhosts()
    with simhosts.Cluster(2) as c:
        yield c


@pytest.fixture(scope="module")
def tdt_check(tmp_path_factory):
    lib = ROOT / "pyhccl" / "lib"
    if not (lib / "libacl_tdt.so").exists():
        pytest.skip("needs a built pyhccl/lib with libacl_tdt.so (make build)")
    exe = tmp_path_factory.mktemp("tdt_check") / "tdt_check"
    cc = subprocess.run(["gcc", "-std=c99", "-O2", f"-I{ROOT / 'include'}",
                         str(ROOT / "tests" / "c" / "tdt_check.c"), f"-L{lib}", "-lacl_tdt",
                         "-lacl_rt", "-lhccl", f"-Wl,-rpath,{lib}", "-o", str(exe)],
                        capture_output=True, text=True, timeout=120)
    assert cc.returncode == 0, cc.stderr
    return exe


def job_env(**extra):
    return mhtest.bounded_env(HCCL_SOCKET_IFNAME=simhosts.IFNAME, PYTHONPATH=ROOT, **extra)


@pytest.mark.timeout(180, method="signal")
def test_acltdt_across_hosts_with_master_addr(cluster, tdt_check):
    """2 hosts x 2 ranks, every acltdt collective; MASTER_ADDR is host 0's address."""
    env = job_env(MASTER_ADDR=cluster.hosts[0].ip, MASTER_PORT=PORT)
    procs = mhtest.start_ranks(cluster, "2x2", lambda rank, n, local: [
        tdt_check, rank, n, "across", "flow"], env)
    outs = mhtest.finish_ranks(procs, 150)
    for rank, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"OK rank {rank}" in out, mhtest.report(procs, outs)


WORKER = """
import numpy as np, pyhccl
comm = pyhccl.Comm.from_env()
x = pyhccl.asarray(np.full(1000, comm.rank + 1, np.float64))
s = pyhccl.Stream()
comm.all_reduce(x, stream=s)
s.synchronize()
ok = bool((x.to_numpy() == comm.size * (comm.size + 1) / 2).all())
hosts = len(comm.topology.hosts)
print(f"RESULT rank={comm.rank} ok={ok} hosts={hosts}", flush=True)
comm.destroy()
"""


@pytest.mark.timeout(180, method="signal")
def test_from_env_across_hosts_with_torchrun_variables(cluster, tmp_path):
    """Comm.from_env on 2 x 2 from RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR (host 0's
    name, resolved on every host) / MASTER_PORT."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    places = mhtest.placement("2x2")
    procs = [cluster.popen(h, [PYTHON, script], env=job_env(
        RANK=rank, WORLD_SIZE=len(places), LOCAL_RANK=local, MASTER_ADDR=cluster.hosts[0].name,
        MASTER_PORT=PORT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for rank, h, local in places]
    outs = mhtest.finish_ranks(procs, 150)
    rows = mhtest.results("\n".join(outs))
    for rank in range(4):
        assert rank in rows and rows[rank][0] == "ok=True hosts=2", mhtest.report(procs, outs)


@pytest.mark.timeout(120, method="signal")
def test_other_host_without_master_addr_times_out(cluster, tdt_check):
    """With nothing set the group is per host: rank 1 on host 1 waits for a rank 0 of its
    own host and says so, naming MASTER_ADDR; rank 0 names the missing rank."""
    env = job_env(HCCL_CONNECT_TIMEOUT=3)
    procs = [cluster.popen(h, [tdt_check, h, 2, "nomaster", "create"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for h in (0, 1)]
    outs = mhtest.finish_ranks(procs, 90)
    assert procs[0].returncode == 3 and "missing: rank 1" in outs[0], mhtest.report(procs, outs)
    assert procs[1].returncode == 3 and "waiting for rank 0" in outs[1] and "MASTER_ADDR" in outs[1], \
        mhtest.report(procs, outs)
