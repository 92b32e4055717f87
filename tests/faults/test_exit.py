"""Leaving with work in flight: Comm.destroy(timeout=) aborts what is still running and
says what it abandoned, and interpreter exit does so within PYHCCL_EXIT_TIMEOUT instead of
waiting HCCL_EXEC_TIMEOUT (it once took the whole exec timeout, 30 minutes by default).

Each test starts its own 2-rank job in which rank 1 never joins rank 0's AllReduce; they
run in the 1-rank pass."""
import os
import subprocess
import sys
import time

import pytest
from conftest import ROOT, scaled

sys.path.insert(0, str(ROOT / "tests" / "multihost"))
import simhosts  # noqa: E402
from mhtest import once  # noqa: E402

JOB = r'''
import sys, time
import pyhccl
from mpi4py import MPI
from pyhccl.mpi import comm_from_mpi
world = MPI.COMM_WORLD
comm = comm_from_mpi(world)
s = pyhccl.Stream()
world.Barrier()
if world.rank == 0:
    x = pyhccl.full(1 << 16, 1.0, "float32")
    comm.all_reduce(x, stream=s)               # rank 1 never joins
    if sys.argv[1] == "destroy":
        t0 = time.monotonic()
        try:
            comm.destroy(timeout=0.5)
        except pyhccl.HcclError as exc:
            print(f"DESTROY {time.monotonic() - t0:.2f} {exc}", flush=True)
        else:
            print("DESTROY returned success", flush=True)
        try:
            s.synchronize()
        except pyhccl.HcclError as exc:
            print(f"STREAM {exc}", flush=True)
    print(f"EXITING {time.monotonic():.3f}", flush=True)
    sys.exit(0)                                 # pyhccl's atexit: PYHCCL_EXIT_TIMEOUT
else:
    time.sleep(4)                               # busy elsewhere; leaves after rank 0
'''


def run_job(tmp_path, mode):
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = {k: v for k, v in os.environ.items() if not k.startswith(simhosts.OUTER_MPI_PREFIXES)}
    env.update(HCCL_EXEC_TIMEOUT="60", PYHCCL_EXIT_TIMEOUT="1")
    mpiexec = simhosts.default_mpiexec()
    extra = ["--oversubscribe", "--allow-run-as-root"] \
        if simhosts.mpi_flavour(mpiexec) == "openmpi" else []
    t0 = time.monotonic()
    done = subprocess.run([mpiexec, *extra, "-n", "2", sys.executable, str(script), mode],
                          env=env, capture_output=True, text=True, timeout=120)
    return done, time.monotonic() - t0


@once
@pytest.mark.timeout(150)
def test_exit_with_an_operation_in_flight_aborts_it_within_a_second(tmp_path):
    done, took = run_job(tmp_path, "exit")
    out = done.stdout + done.stderr
    assert "EXITING" in out, out[-3000:]
    # generous for a loaded machine; without the bound it takes the 60 s exec timeout
    assert took < scaled(30), f"the job took {took:.1f} s:\n{out[-3000:]}"
    assert "pyhccl: at exit:" in out and "were aborted: #1 HcclAllReduce (running)" in out, \
        out[-3000:]


@once
@pytest.mark.timeout(150)
def test_destroy_with_a_timeout_reports_what_it_abandoned(tmp_path):
    done, took = run_job(tmp_path, "destroy")
    out = done.stdout + done.stderr
    assert "DESTROY returned success" not in out, out[-3000:]
    line = next((ln for ln in out.splitlines() if ln.startswith("DESTROY ")), "")
    assert "HCCL_E_TIMEOUT" in line and "1 operation(s) did not finish within 500 ms and were " \
        "aborted: #1 HcclAllReduce (running)" in line, out[-3000:]
    assert float(line.split()[1]) < scaled(10), line
    # the aborted operation's stream reports it
    assert "STREAM" in out and "destroyed with this operation in flight" in out, out[-3000:]
    assert took < scaled(30), f"the job took {took:.1f} s:\n{out[-3000:]}"


EXIT_AFTER_LAST = """
    import ctypes
    rank, path = int(sys.argv[1]), sys.argv[2]
    comm = pyhccl.Comm(2, root_info(path, rank), rank)
    s = pyhccl.Stream()
    x = np.full(4 << 20, 7 if rank == 0 else 0, np.float32)
    try:
        comm.broadcast(x, root=0, stream=s)
        s.synchronize()
        print("OK" if (x == 7).all() else "WRONG", flush=True)
    except pyhccl.HcclError as e:
        print("FAILED", e, flush=True)
    if rank == 0:
        ctypes.CDLL(None).exit(0)   # C's exit: no destroy, no Python finalization
    comm.destroy()
"""


@once
@pytest.mark.timeout(120)
def test_exit_right_after_the_last_collective_never_fails_a_peer(tmp_path):
    """Rank 0 exits (C's exit(), as a C program that never destroys its communicator)
    right after its last Broadcast over TCP completed on its side, while rank 1, a slow
    reader (PYHCCL_FAULT=slow_tcp_recv), still has megabytes of it to read. Rank 0 lingers
    until rank 1's host took them and says goodbye, so rank 1 reads them instead of failing
    with "closed the connection" (without the fault, 1 run in 5 failed so)."""
    from rank_procs import run_ranks
    outs = run_ranks(tmp_path, EXIT_AFTER_LAST, 2, env={"PYHCCL_TRANSPORT": "tcp"},
                     rank_env={1: {"PYHCCL_FAULT": "slow_tcp_recv"}})
    assert all(out.startswith("OK") for out in outs), outs
