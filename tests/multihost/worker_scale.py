"""One rank of a pyhccl job set up without MPI, for the launch tests at scale (test_scale.py).

    python tests/multihost/worker_scale.py WAY RANK NRANKS DIR

WAY says how the ranks meet:
  torchrun   Comm.from_env() from RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT
             (the test sets them; RANK and NRANKS here only label the output)
  ranktable  comm_init_cluster_info(DIR/rank_table.json, RANK) (HcclCommInitClusterInfo)
  rootfile   rank 0 writes the root info to DIR/root, the others read it (as worker_faults.py)

Then AllReduces of 4 KiB and 1 MiB (float32, checked every time), one of each other
collective (int32, checked) and destroy. The line "RESULT rank=K ok enter=E ready=R
ar_small_ms=S ar_big_ms=B small_algos=AR,AG,RS broadcast=BC" gives the epoch seconds just
before and after set-up, the median AllReduce times (the clock is the machine's, shared by
every simulated host) and the algorithms of the 4 KiB AllReduce, of the small AllGather and
ReduceScatter, and of the small Broadcast; a failure ends with "RESULT rank=K error=...".
"""
import os
import statistics
import sys
import time

import numpy as np

import pyhccl
import rootfile

WAY, RANK, NRANKS, DIR = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ROOT_WAIT = 120        # seconds rank 0 may take to publish the root info (32 starts on 2 cores)
SMALL, BIG = 1 << 10, 1 << 18   # float32 elements: 4 KiB and 1 MiB
REPEATS = 5
C = 16                 # int32 elements per rank's block in the other collectives


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def set_up():
    if WAY == "torchrun":
        return pyhccl.Comm.from_env()
    pyhccl.set_device(0)
    if WAY == "ranktable":
        return pyhccl.comm_init_cluster_info(os.path.join(DIR, "rank_table.json"), RANK)
    if WAY == "rootfile":
        return pyhccl.Comm(NRANKS, rootfile.root_info(DIR, RANK, ROOT_WAIT), RANK)
    raise SystemExit(f"worker_scale.py: unknown WAY {WAY!r}")


def expect(what, got, want):
    want = np.broadcast_to(want, got.shape)
    bad = np.flatnonzero(got != want)
    if bad.size:
        raise AssertionError(f"{what}: {bad.size} wrong elements, first at {bad[0]}: "
                             f"{got.flat[bad[0]]} != {want.flat[bad[0]]}")


def algorithm(comm):
    """The algorithm of the last operation, from the flight record."""
    return comm.flight_record()[-1]["algorithm"]


def all_reduces(comm, s, count):
    """REPEATS checked AllReduces of `count` float32 after one warm-up; the median in ms."""
    n, times = comm.size, []
    x = np.empty(count, np.float32)
    for i in range(REPEATS + 1):
        x.fill(comm.rank + 1 + i)
        t = time.perf_counter()
        comm.all_reduce(x, stream=s)
        s.synchronize()
        times.append(time.perf_counter() - t)
        expect(f"all_reduce count={count} #{i}", x, np.float32(n * (n + 1) / 2 + n * i))
    return statistics.median(times[1:]) * 1e3


def others(comm, s):
    """One of each other collective, small int32 blocks, results checked; the algorithms
    of the AllGather, the ReduceScatter and the Broadcast."""
    n, r = comm.size, comm.rank
    idx = np.arange(C, dtype=np.int32)
    root = n - 1
    buf = idx + 1000 if r == root else np.zeros(C, np.int32)
    comm.broadcast(buf, root=root, stream=s)
    s.synchronize()
    expect("broadcast", buf, idx + 1000)
    bc = algorithm(comm)

    gathered = np.zeros(n * C, np.int32)
    comm.all_gather(np.full(C, r, np.int32), gathered, stream=s)
    s.synchronize()
    expect("all_gather", gathered, np.repeat(np.arange(n, dtype=np.int32), C))
    ag = algorithm(comm)

    out = np.zeros(C, np.int32)
    comm.reduce_scatter(np.repeat(np.arange(1, n + 1, dtype=np.int32), C) * (r + 1), out, stream=s)
    s.synchronize()
    expect("reduce_scatter", out, np.full(C, (r + 1) * n * (n + 1) // 2, np.int32))
    rs = algorithm(comm)

    red = np.full(C, r + 1, np.int32)
    comm.reduce(red, op="max", root=1 % n, stream=s)
    s.synchronize()
    if r == 1 % n:
        expect("reduce", red, np.full(C, n, np.int32))

    send = (np.repeat(np.arange(n, dtype=np.int32), C) + 100 * r)
    recv = np.zeros(n * C, np.int32)
    comm.all_to_all(send, recv, stream=s)
    s.synchronize()
    expect("all_to_all", recv, np.repeat(np.arange(n, dtype=np.int32) * 100 + r, C))

    part = np.zeros(C, np.int32)
    comm.scatter(np.repeat(np.arange(n, dtype=np.int32), C) if r == 0 else None, part, root=0,
                 stream=s)
    s.synchronize()
    expect("scatter", part, np.full(C, r, np.int32))

    comm.barrier(stream=s)
    s.synchronize()
    return ag, rs, bc


def main():
    comm = None
    try:
        enter = time.time()
        comm = set_up()
        ready = time.time()
        if (comm.rank, comm.size) != (RANK, NRANKS):
            raise AssertionError(f"rank {comm.rank} of {comm.size}, not {RANK} of {NRANKS}")
        if len(comm.topology.hosts) != NRANKS:
            raise AssertionError(f"{len(comm.topology.hosts)} hosts, not {NRANKS}")
        s = pyhccl.Stream()
        small = all_reduces(comm, s, SMALL)
        ar = algorithm(comm)
        big = all_reduces(comm, s, BIG)
        ag, rs, bc = others(comm, s)
        comm.destroy()
        say(f"RESULT rank={RANK} ok enter={enter:.4f} ready={ready:.4f} "
            f"ar_small_ms={small:.3f} ar_big_ms={big:.3f} small_algos={ar},{ag},{rs} "
            f"broadcast={bc}")
    except Exception as exc:
        say(f"RESULT rank={RANK} error={type(exc).__name__}: {str(exc).replace(chr(10), ' | ')}")


if __name__ == "__main__":
    main()
