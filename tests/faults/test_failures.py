"""Failure from Python: abort, collective errors as HcclError, and Ctrl-C during waits
(issue: failure you can live with); python/test_topology.py has the healthy side."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from mpi4py import MPI

import pyhccl
from conftest import OWN_JOBS_HERE, RANK, SIZE, WORLD, scaled
from rank_procs import JOIN
from pyhccl.mpi import comm_from_mpi

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="pyhccl's extensions need the host runtime")


@pytest.mark.mpi(min_size=2)
def test_collective_failure_is_an_hccl_error(stream):
    """A mismatch found while the collective runs surfaces from synchronize() as an HcclError
    with the collective's name, number and the rank at fault, on every rank."""
    comm = comm_from_mpi(WORLD)
    try:
        x = pyhccl.full(16, 1, np.float32)
        comm.all_reduce(x[:8] if RANK == 0 else x, op=pyhccl.SUM, stream=stream)
        with pytest.raises(pyhccl.HcclError) as info:
            stream.synchronize()
        e = info.value
        assert e.code == 1 and e.api == "HcclAllReduce" and e.seq == 1, e
        assert e.rank is not None and e.rank != RANK, e
        assert "differs between ranks" in str(e), e
    finally:
        comm.destroy()


def _all_shm(comm):
    t = comm.topology
    local = all(t.transports[p] == "shm" for p in range(comm.size) if p != comm.rank)
    return WORLD.allreduce(local, op=MPI.LAND)


@pytest.mark.mpi(min_size=2)
@pytest.mark.timeout(60)
def test_ring_of_blocking_sends_is_an_error_naming_group(stream):
    """Every rank sends 4 MiB (more than the channel) to the next, then receives, without
    group(): a deadlock, which synchronize() reports on every rank within seconds (not after
    HCCL_EXEC_TIMEOUT) as an HcclError that says to use group()."""
    comm = comm_from_mpi(WORLD)
    try:
        if not _all_shm(comm):
            pytest.skip("needs every rank on one host, over shared memory")
        n = (4 << 20) // 4
        t0 = time.monotonic()
        comm.send(np.full(n, RANK, np.float32), (RANK + 1) % SIZE, stream=stream)
        comm.recv(np.zeros(n, np.float32), (RANK - 1) % SIZE, stream=stream)
        with pytest.raises(pyhccl.HcclError, match=r"deadlock: ranks .*pyhccl\.group\(\)"):
            stream.synchronize()
        assert time.monotonic() - t0 < scaled(10)
    finally:
        comm.destroy()


@pytest.mark.mpi(min_size=2)
@pytest.mark.timeout(60)
@pytest.mark.parametrize("peer_does", ["collective", "destroy", "late_recv"])
def test_destroy_after_an_eager_send(stream, peer_does):
    """Rank 0's small send completes before rank 1 takes it. Its destroy() lingers for the
    message: if rank 1 runs a collective instead (a mismatch) or destroys its communicator
    without receiving, destroy() raises "never received"; if rank 1 receives late, destroy()
    succeeds and the data arrives."""
    pair = WORLD.Split(0 if RANK < 2 else 1, RANK)   # ranks 0 and 1; the others idle
    comm = comm_from_mpi(pair)
    if not _all_shm(comm):
        comm.destroy()
        pytest.skip("a peer's taking a message is seen over shared memory only")
    x = np.arange(8, dtype=np.float32) + 1
    if RANK == 0:
        comm.send(x, 1, stream=stream)
        stream.synchronize()
        pair.Barrier()
        t0 = time.monotonic()
        if peer_does == "late_recv":
            comm.destroy()
            assert time.monotonic() - t0 < scaled(2.5)
        else:
            word = "it failed" if peer_does == "collective" else "destroyed its communicator"
            with pytest.raises(pyhccl.HcclError, match=f"rank 1 never received .*{word}"):
                comm.destroy()
            assert time.monotonic() - t0 < scaled(2.5)
        return
    pair.Barrier()
    if RANK == 1 and peer_does == "late_recv":
        time.sleep(0.3)
        y = np.zeros(8, np.float32)
        comm.recv(y, 0, stream=stream)
        stream.synchronize()
        assert np.array_equal(y, x)
    elif RANK == 1 and peer_does == "collective":
        with pytest.raises(pyhccl.HcclError, match="differs between ranks"):
            comm.all_reduce(x, stream=stream)
            stream.synchronize()
    comm.destroy()


@pytest.mark.mpi(min_size=2)
def test_abort_and_carry_on(stream):
    """Rank 0 aborts: its operations fail (HCCL_E_UNAVAIL), the others' within a second naming
    it; destroy is quick; a new communicator works."""
    comm = comm_from_mpi(WORLD)
    x = pyhccl.full(64, 1, np.float32)
    if RANK == 0:
        time.sleep(0.2)
        comm.abort()
        with pytest.raises(pyhccl.HcclError) as info:  # refused at once, by the call itself
            comm.all_reduce(x, op=pyhccl.SUM, stream=stream)
        assert info.value.code == 7  # HCCL_E_UNAVAIL
    else:
        t0 = time.monotonic()
        comm.all_reduce(x, op=pyhccl.SUM, stream=stream)
        with pytest.raises(pyhccl.HcclError, match="rank 0 aborted"):
            stream.synchronize()
        assert time.monotonic() - t0 < scaled(3)
    t0 = time.monotonic()
    comm.destroy()
    assert time.monotonic() - t0 < scaled(1.5)
    again = comm_from_mpi(WORLD)
    y = pyhccl.full(64, 1, np.float32)
    again.all_reduce(y, op=pyhccl.SUM, stream=stream)
    stream.synchronize()
    assert (y.to_numpy() == SIZE).all()
    again.destroy()


# The programs below start without MPI (rank_procs.JOIN: rank 0 hands the root info over
# in a file, root_info(path, rank)).


# Two processes without MPI: rank 0 waits (set-up, or a collective rank 1 does not join)
# and gets SIGINT; it must raise KeyboardInterrupt within half a second, and leave its
# communicator aborted so that rank 1 fails at once too.
PROGRAM = JOIN + textwrap.dedent("""
    rank, mode, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    pyhccl.set_device(rank)
    info = root_info(path, rank)
    if mode == "setup" and rank == 1:
        time.sleep(60)  # never joins
    print("READY", flush=True)
    try:
        comm = pyhccl.Comm(2, info, rank)
        x = pyhccl.full(8, 1, np.float32)
        if rank == 1:
            time.sleep(3)  # rank 0 is interrupted meanwhile
        t0 = time.monotonic()
        comm.all_reduce(x, op=pyhccl.SUM)
        pyhccl.default_stream().synchronize()
        print("DONE", flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
        sys.exit(3)
    except pyhccl.HcclError as e:
        print(f"FAILED after {time.monotonic() - t0:.2f} s: {e}", flush=True)
        sys.exit(4)
""")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["setup", "collective"])
def test_ctrl_c_interrupts_waits(tmp_path, mode):
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    path = tmp_path / "root"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYHCCL_"))}
    env.update(HCCL_CONNECT_TIMEOUT="60", HCCL_EXEC_TIMEOUT="60")
    procs = [subprocess.Popen([sys.executable, str(script), str(r), mode, str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for r in range(2)]
    try:
        assert procs[0].stdout.readline().strip() == "READY"
        time.sleep(1.0)  # rank 0 is now blocked in its wait
        t0 = time.monotonic()
        procs[0].send_signal(signal.SIGINT)
        out0, _ = procs[0].communicate(timeout=10)
        took = time.monotonic() - t0
        assert procs[0].returncode == 3 and "INTERRUPTED" in out0, out0
        assert took < scaled(1.0), f"KeyboardInterrupt took {took:.2f} s"
        if mode == "collective":  # the interrupted rank aborted: rank 1 fails at once
            out1, _ = procs[1].communicate(timeout=10)
            # whichever comes first names rank 0: its engine stopped on SIGINT, or it aborted
            assert procs[1].returncode == 4, out1
            assert "rank 0 aborted" in out1 or "interrupted (SIGINT)" in out1, out1
            # ... and one code either way: a remote failure (it was UNAVAIL 27 times in 30)
            assert "HCCL_E_REMOTE" in out1 and "HCCL_E_UNAVAIL" not in out1, out1
    finally:
        for p in procs:
            p.kill()
            p.wait()


WATCHDOG = JOIN + textwrap.dedent("""
    rank, path, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    pyhccl.set_device(rank)
    comm = pyhccl.Comm(2, root_info(path, rank), rank)
    x = pyhccl.full(count, 1, np.float32)
    if rank == 1:
        time.sleep(3.5)          # late: rank 0 waits, warned about at 1 s and 2 s
    comm.all_reduce(x, op=pyhccl.SUM)
    pyhccl.default_stream().synchronize()
    assert (x.get() == 2).all()
    comm.destroy()
    print("DONE", flush=True)
""")


@pytest.mark.timeout(90)
@pytest.mark.parametrize("count", [8, 1 << 18])      # a board exchange, FIFO transfers
@pytest.mark.parametrize("watchdog", ["1", "0"])
def test_a_long_wait_warns_then_completes(tmp_path, count, watchdog):
    """A rank that is simply late: the waiting rank warns after PYHCCL_WATCHDOG_S without
    progress, then after twice that, naming the operation and the rank (it waited in
    silence for the whole exec timeout); 0 silences it; the operation still completes."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    script = tmp_path / "prog.py"
    script.write_text(WATCHDOG)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYHCCL_"))}
    env.update(HCCL_CONNECT_TIMEOUT="60", HCCL_EXEC_TIMEOUT="60", PYHCCL_WATCHDOG_S=watchdog)
    env.pop("ASCEND_GLOBAL_LOG_LEVEL", None)
    procs = [subprocess.Popen([sys.executable, str(script), str(r), str(tmp_path / "root"),
                               str(count)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for r in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 and "DONE" in o for p, (o, _) in zip(procs, outs)), outs
    err0 = outs[0][1]
    warnings = [ln for ln in err0.splitlines() if "has made no progress" in ln]
    if watchdog == "0":
        assert warnings == [], err0
        return
    assert len(warnings) == 2, err0                # at 1 s and 2 s (the next mark is 4 s)
    assert "rank 0: HcclAllReduce #1 has made no progress for 1 s, waiting for rank(s) 1" \
        in warnings[0] and "for 2 s" in warnings[1], err0
    assert "[WARNING]" in warnings[0] and "PYHCCL_WATCHDOG_S=0 silences this" in warnings[0]


OPPOSITE_ORDERS = JOIN + textwrap.dedent("""
    rank, path = int(sys.argv[1]), sys.argv[2]
    pyhccl.set_device(rank)
    comms = {name: pyhccl.Comm(2, root_info(path + name, rank), rank) for name in "AB"}
    order = "AB" if rank == 0 else "BA"      # the mistake: opposite orders
    x = pyhccl.full(1 << 16, 1, np.float32)
    try:
        for name in order:
            comms[name].all_reduce(x)
            pyhccl.default_stream().synchronize()
        print("DONE", flush=True)
    except pyhccl.HcclError as e:
        print(f"FAILED {e}", flush=True)
        time.sleep(6)    # leaving would end the other rank's wait before its own timeout
""")


@pytest.mark.timeout(90)
def test_communicators_in_opposite_orders_say_so(tmp_path):
    """Rank 0 runs A's AllReduce then B's, rank 1 B's then A's, over TCP as across hosts, where
    a peer's state cannot be seen (on one host it fails at once: test_comm_order.py): each times
    out (3 s here), and the message names the likely cause instead of only 'no message from it
    yet'."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    script = tmp_path / "prog.py"
    script.write_text(OPPOSITE_ORDERS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYHCCL_"))}
    env.update(HCCL_CONNECT_TIMEOUT="60", HCCL_EXEC_TIMEOUT="3", PYHCCL_TRANSPORT="tcp")
    procs = [subprocess.Popen([sys.executable, str(script), str(r), str(tmp_path / "root")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env) for r in range(2)]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    for out in outs:
        assert "FAILED" in out and "timed out after 3 s" in out and \
            re.search(r"it waits in communicator pyhccl-\w+ \(one of 2 in this process\): ranks "
                      r"that call communicators' collectives in different orders deadlock; if rank "
                      r"[01] is blocked in another one, use one order on every rank", out), outs
