"""pyhccl.Comm.from_env (pyhccl/launch.py): communicators with no mpi4py.

launch_info() on each launcher's variables (torchrun, Open MPI, MPICH, Slurm) and on
explicit arguments, with its errors; then jobs of plain processes started from here
with each launcher's variables, and the group's name held by rank 0 until destroy().

The jobs run on the first MPI rank only (they start their own processes); the rest
runs on every rank.
"""
import os
import random
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import pyhccl
from pyhccl.launch import launch_info
from conftest import OUTER, RANK, first_rank_only, scaled

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="the rendezvous is the host runtime's")






# -- launch_info ------------------------------------------------------------------------------
@pytest.mark.parametrize("env,want", [
    ({"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
      "TORCHELASTIC_RUN_ID": "abc"}, (1, 4, 1, "pyhccl-torchrun-abc", "torchrun", 2)),
    ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "3", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
      "PMIX_NAMESPACE": "prterun-x-1@1"},
     (2, 3, 0, "pyhccl-openmpi-prterun-x-1@1", "Open MPI", None)),
    ({"PMI_RANK": "0", "PMI_SIZE": "2", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2"},
     (0, 2, 0, "pyhccl", "MPICH", 2)),
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_JOB_ID": "42",
      "SLURM_STEP_ID": "0", "SLURM_NTASKS_PER_NODE": "2(x4)"},
     (5, 8, 1, "pyhccl-slurm-42-0", "Slurm", 2)),
    # mpiexec inside a Slurm allocation: MPI's variables win over the batch script's
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "PMI_RANK": "3", "PMI_SIZE": "4"},
     (3, 4, None, "pyhccl", "MPICH", None)),
])
def test_launch_info_from_each_launcher(env, want):
    assert tuple(launch_info(env=env)) == want


def test_launch_info_from_arguments():
    assert tuple(launch_info(2, 3, env={})) == (2, 3, None, "pyhccl", "arguments", None)
    assert launch_info(1, 2, "mine", env={}).group == "mine"
    # the launcher's local rank still picks the device when it speaks of the same rank
    assert launch_info(1, 2, env={"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}).local_rank == 1
    assert launch_info(0, 2, env={"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}).local_rank is None


@pytest.mark.parametrize("args,env,exc,words", [
    ((), {}, ValueError, "no launcher's variables are set"),
    ((1, None), {}, ValueError, "give both rank and world_size"),
    ((2, 2), {}, ValueError, "rank 2 is out of range for world_size 2"),
    ((0, 0), {}, ValueError, "world_size must be at least 1"),
    (("1", 2), {}, TypeError, "rank must be an int"),
    ((), {"RANK": "x", "WORLD_SIZE": "2"}, ValueError, "RANK='x' (torchrun) is not an integer"),
    ((), {"PMI_RANK": "-1", "PMI_SIZE": "2"}, ValueError, "PMI_RANK=-1 (MPICH) is negative"),
    ((), {"SLURM_PROCID": "3", "SLURM_NTASKS": "2"}, ValueError, "from Slurm"),
])
def test_launch_info_errors(args, env, exc, words):
    with pytest.raises(exc, match=words.replace("(", r"\(").replace(")", r"\)")):
        launch_info(*args, env=env)


def test_bad_group_is_a_clear_error():
    with pytest.raises(ValueError, match="group must be 1 to 127 bytes"):
        pyhccl.Comm.from_env(0, 1, group="x" * 200, device=pyhccl.current_device())
    with pytest.raises(TypeError, match="group must be a str"):
        pyhccl.Comm.from_env(0, 1, group=b"g", device=pyhccl.current_device())  # type: ignore[arg-type]


# -- one process ------------------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_group_is_held_until_destroy():
    """A 1-rank communicator: its group is in use until destroy(), then free again."""
    group = f"t{os.getpid()}-held-{RANK}"
    dev = pyhccl.current_device()
    comm = pyhccl.Comm.from_env(0, 1, group=group, device=dev)
    try:
        with pytest.raises(pyhccl.HcclError, match="is in use"):
            pyhccl.Comm.from_env(0, 1, group=group, device=dev)
    finally:
        comm.destroy()
    again = pyhccl.Comm.from_env(0, 1, group=group, device=dev)
    assert (again.rank, again.size) == (0, 1)
    again.destroy()


# -- jobs of plain processes ----------------------------------------------------------------
WORKER = textwrap.dedent("""
    import sys
    import numpy as np
    import pyhccl
    args = [int(a) for a in sys.argv[1:]]
    comm = pyhccl.Comm.from_env(*args) if args else pyhccl.Comm.from_env()
    x = pyhccl.asarray(np.full(8, comm.rank + 1, np.float32))
    s = pyhccl.Stream()
    comm.all_reduce(x, stream=s)
    s.synchronize()
    want = comm.size * (comm.size + 1) / 2
    ok = bool((x.to_numpy() == want).all())
    print(f"RESULT rank={comm.rank} size={comm.size} device={pyhccl.current_device()} ok={ok}")
    comm.destroy()
""")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(tmp_path, envs, args=None, timeout=120):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    base = {k: v for k, v in os.environ.items() if not k.startswith(OUTER)}
    base.update(HCCL_CONNECT_TIMEOUT="30", HCCL_EXEC_TIMEOUT="30")
    procs = [subprocess.Popen([sys.executable, str(script), *map(str, (args[i] if args else []))],
                              env={**base, **{k: str(v) for k, v in e.items()}}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for i, e in enumerate(envs)]
    deadline = time.monotonic() + timeout
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(0.1, deadline - time.monotonic()))[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return [(p.returncode, o) for p, o in zip(procs, outs)]


def launcher_envs(name, n, tag):
    port = free_port()
    job = f"{os.getpid()}{tag}{time.monotonic_ns() % 10**6}"
    if name == "torchrun":
        return [dict(RANK=r, WORLD_SIZE=n, LOCAL_RANK=r, MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                     TORCHELASTIC_RUN_ID=job) for r in range(n)]
    if name == "Open MPI":
        return [dict(OMPI_COMM_WORLD_RANK=r, OMPI_COMM_WORLD_SIZE=n, OMPI_COMM_WORLD_LOCAL_RANK=r,
                     OMPI_MCA_ess_base_jobid=job) for r in range(n)]
    if name == "MPICH":
        return [dict(PMI_RANK=r, PMI_SIZE=n, MPI_LOCALRANKID=r, PMI_KVSNAME=f"kvs_{job}")
                for r in range(n)]
    if name == "Slurm":
        return [dict(SLURM_PROCID=r, SLURM_NTASKS=n, SLURM_LOCALID=r, SLURM_JOB_ID=job,
                     SLURM_STEP_ID=0) for r in range(n)]
    raise AssertionError(name)


def check_job(results, n):
    report = "\n".join(f"--- exit {rc}\n{out}" for rc, out in results)
    for rank, (rc, out) in enumerate(results):
        assert rc == 0 and f"RESULT rank={rank} size={n}" in out and "ok=True" in out, report
    return report


@first_rank_only
@pytest.mark.timeout(180)
@pytest.mark.parametrize("launcher", ["torchrun", "Open MPI", "MPICH", "Slurm"])
def test_from_env_with_each_launchers_variables(tmp_path, launcher):
    """Two ranks from each launcher's variables; the device follows the local rank."""
    results = run_job(tmp_path, launcher_envs(launcher, 2, launcher[:2]))
    check_job(results, 2)
    for rank, (_, out) in enumerate(results):
        assert f"device={rank % max(pyhccl.device_count(), 1)}" in out


@first_rank_only
@pytest.mark.timeout(180)
def test_from_env_with_arguments(tmp_path):
    results = run_job(tmp_path, [{}] * 3, args=[(r, 3) for r in range(3)])
    check_job(results, 3)


@first_rank_only
@pytest.mark.timeout(180)
def test_from_env_beside_torchruns_store(tmp_path):
    """Under torchrun (TORCHELASTIC_USE_AGENT_STORE=True) its agent holds MASTER_PORT:
    pyhccl meets on the next port."""
    store = None
    # A port whose successor is free too, below the ephemeral range: there no outgoing
    # connection (another test's, or a rank's own dial meeting itself) takes the successor
    # between the probe and pyhccl's bind.
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    for port in random.sample(range(max(1024, low - 8000), low - 1), 50):
        store = socket.socket()
        try:
            store.bind(("127.0.0.1", port))
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", port + 1))
            break
        except OSError:
            store.close()
            store = None
    assert store is not None
    try:
        store.listen()
        envs = launcher_envs("torchrun", 2, "ag")
        for e in envs:
            e.update(MASTER_PORT=port, TORCHELASTIC_USE_AGENT_STORE="True")
        check_job(run_job(tmp_path, envs), 2)
    finally:
        store.close()


@first_rank_only
@pytest.mark.timeout(60)
def test_ctrl_c_while_waiting_for_rank_0(tmp_path):
    """SIGINT while from_env waits for a rank 0 that never comes: KeyboardInterrupt at once."""
    script = tmp_path / "wait.py"
    script.write_text("import pyhccl, sys\nprint('waiting', flush=True)\n"
                      f"pyhccl.Comm.from_env(1, 2, group='t{os.getpid()}-ctrlc')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(OUTER)}
    env["HCCL_CONNECT_TIMEOUT"] = "60"
    p = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        assert p.stdout.readline().strip() == "waiting"
        time.sleep(1.0)
        t0 = time.monotonic()
        p.send_signal(2)
        out = p.communicate(timeout=30)[0]
        assert time.monotonic() - t0 < scaled(10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode != 0 and "KeyboardInterrupt" in out, out
