"""Asynchronous semantics: collectives return before completion, streams are ordered by
events, and Python buffers stay alive until the work that uses them is done."""

import gc
import threading
import time
import weakref

import numpy as np
import pytest

import pyhccl
from conftest import assert_all, first_rank_only, scaled
from rank_procs import run_ranks

pytestmark = pytest.mark.mpi


class Gate:
    """Blocks a stream until opened: a host function waits on a threading.Event."""

    def __init__(self, stream):
        self.event = threading.Event()
        stream.launch_host_func(self.event.wait, 60)

    def open(self):
        self.event.set()


def test_collective_returns_before_completion(pair):
    comm, mpi = pair
    a, b = pyhccl.Stream(), pyhccl.Stream()
    gate = Gate(b)
    try:
        ready = b.record_event()          # completes only when the gate opens
        a.wait_event(ready)
        x = pyhccl.full(1 << 16, comm.rank + 1, "float32")
        out = comm.all_reduce(x, stream=a)
        enqueued = out is x and not a.query() and not ready.query()
    finally:
        gate.open()
    a.synchronize()
    expect = comm.size * (comm.size + 1) / 2
    assert_all(enqueued, "all_reduce did not return before its stream ran it")
    assert_all(np.all(x.get() == expect), "wrong all_reduce result")
    a.destroy()
    b.destroy()


def test_event_orders_copy_before_collective(pair):
    """An async copy on stream A, an event on A, stream B waits for it, a collective on B."""
    comm, mpi = pair
    a, b = pyhccl.Stream(), pyhccl.Stream()
    n = 10000
    src = np.arange(n, dtype=np.int64) * (comm.rank + 1)
    x = pyhccl.zeros(n, "int64")
    gate = Gate(a)                        # hold A so B would run first without the event
    try:
        x.set(src, stream=a)
        copied = a.record_event()
        b.wait_event(copied)
        y = pyhccl.empty(n, "int64")
        comm.all_reduce(x, y, "sum", stream=b)
        out = y.get(stream=b)
    finally:
        gate.open()
    b.synchronize()
    expect = np.arange(n, dtype=np.int64) * (comm.size * (comm.size + 1) // 2)
    assert_all(np.array_equal(out, expect), "collective on B did not see the copy on A")
    a.destroy()
    b.destroy()


def test_buffers_kept_alive_until_done(pair):
    comm, mpi = pair
    s = pyhccl.Stream()
    total = comm.size * (comm.size + 1) / 2
    verdicts = []
    for _ in range(2):                    # a second round on the same stream, after a release
        gate = Gate(s)
        try:
            send = np.full(1000, comm.rank + 1, np.float64)
            recv = pyhccl.zeros(1000, "float64")
            host_in_place = np.full(10, 2.0)
            send_ref = weakref.ref(send)
            host_ref = weakref.ref(host_in_place)
            comm.all_reduce(send, recv, stream=s)
            dev = pyhccl.full(50, 3, "int32")
            dev_ref = weakref.ref(dev)
            comm.broadcast(dev, 0, stream=s)
            comm.all_reduce(host_in_place, stream=s)
            del send, dev, host_in_place
            gc.collect()
            held = send_ref() is not None and dev_ref() is not None and host_ref() is not None
            pending = s._pending_count()
        finally:
            gate.open()
        s.synchronize()
        gc.collect()
        released = send_ref() is None and dev_ref() is None and host_ref() is None
        verdicts.append((held and pending >= 3, released and s._pending_count() == 0,
                         bool(np.all(recv.get() == total))))
    assert_all(all(v[0] for v in verdicts), f"buffers of pending calls released early {verdicts}")
    assert_all(all(v[1] for v in verdicts), f"buffers not released after sync {verdicts}")
    assert_all(all(v[2] for v in verdicts), "wrong result")
    s.destroy()


def test_keepalive_list_is_pruned(pair):
    comm, mpi = pair
    s = pyhccl.Stream()
    x = pyhccl.ones(16, "float32")
    for _ in range(50):
        comm.all_reduce(x, op="max", stream=s)
    s.synchronize()
    assert s._pending_count() == 0
    for _ in range(50):
        comm.all_reduce(x, op="max", stream=s)
        s.query()
    s.synchronize()
    assert_all(np.all(x.get() == 1) and s._pending_count() == 0, "keep-alive list not pruned")
    s.destroy()


def test_queued_calls_on_the_same_buffers_share_one_entry(pair):
    """A loop of calls queued on the same buffers keeps them alive through one entry, not
    one per call: the objects the GC tracks do not grow with the queue (they grew by two per
    call, each scanned by every collection while the calls were pending)."""
    comm, mpi = pair
    s = pyhccl.Stream()
    x, y = pyhccl.ones(16, "float32"), pyhccl.empty(16, "float32")
    gate = Gate(s)
    try:
        gc.collect()
        before = len(gc.get_objects())
        for _ in range(1000):
            comm.all_reduce(x, y, op="max", stream=s)
        grown = len(gc.get_objects()) - before
        pending = s._pending_count()
        z = pyhccl.ones(16, "float32")      # other buffers: an entry of their own
        comm.all_reduce(z, y, op="max", stream=s)
        pending_z = s._pending_count()
    finally:
        gate.open()
    s.synchronize()
    ok = grown < 200 and pending >= 1000 and pending_z == pending + 1 and s._pending_count() == 0
    assert_all(ok and np.all(y.get() == 1), f"{grown} objects for 1000 queued calls, "
               f"{pending} then {pending_z} pending")
    s.destroy()


def test_current_stream_is_used(pair):
    comm, mpi = pair
    s = pyhccl.Stream()
    gate = Gate(s)
    x = pyhccl.full(8, 1, "int32")
    try:
        with s:
            comm.all_reduce(x)            # stream=None: the current stream, s
        on_s = not s.query() and pyhccl.default_stream().query()
    finally:
        gate.open()
    s.synchronize()
    assert_all(on_s and np.all(x.get() == comm.size), "stream=None did not use the current stream")
    s.destroy()


def test_fast_sync_collective_starts_while_its_caller_waits_elsewhere(pair):
    """A STREAM_FAST_SYNC stream leaves its worker asleep while its caller synchronizes after
    each collective. Then one rank waits in an MPI barrier before synchronizing, while its
    peers wait for its part of the collective: the worker's tick must start it."""
    comm, mpi = pair
    s = pyhccl.Stream(flags=pyhccl.STREAM_FAST_SYNC)
    x = pyhccl.full(1 << 15, comm.rank + 1, "float32")   # 128 KiB: never run inside the call
    y = pyhccl.zeros(1 << 15, "float32")
    for _ in range(3):
        for _ in range(5):
            comm.all_reduce(x, y, stream=s)
            s.synchronize()
        time.sleep(0.01)
    x2 = pyhccl.full(1 << 15, 2 * (comm.rank + 1), "float32")
    comm.all_reduce(x2, y, stream=s)
    if comm.rank == 0:
        mpi.Barrier()
        s.synchronize()
    else:
        s.synchronize()
        mpi.Barrier()
    assert_all(np.all(y.get() == comm.size * (comm.size + 1)), "wrong all_reduce result")
    s.destroy()


def test_stream_destroy_waits_for_work(pair):
    comm, mpi = pair
    s = pyhccl.Stream()
    x = pyhccl.full(1 << 15, 1, "float64")
    comm.all_reduce(x, stream=s)
    s.destroy()                           # synchronises first
    assert_all(np.all(x.get() == comm.size), "destroy() did not wait for the stream")


@pytest.mark.parametrize("read", ["to_numpy", "get", "array", "dlpack", "copy"])
def test_host_reads_wait_for_pending_writers_on_any_stream(pair, read):
    """The README's pattern without the synchronize: a collective on stream=s, then a
    read through the array on the current stream. The read waits for the collective
    (it once read the stale input)."""
    comm, _ = pair
    s = pyhccl.Stream()
    gate = Gate(s)
    x = pyhccl.full(3, comm.rank + 1, "float32")
    comm.all_reduce(x, stream=s)
    threading.Timer(0.2, gate.open).start()
    if read == "to_numpy":
        got = x.to_numpy()
    elif read == "get":
        got = x.get()
    elif read == "array":
        got = np.asarray(x)
    elif read == "dlpack":
        got = np.from_dlpack(x).copy()
    else:
        got = x.copy().get()
    want = comm.size * (comm.size + 1) / 2
    assert_all((got == want).all(), f"read {got}, want {want}")
    s.synchronize()
    s.destroy()


def test_host_read_raises_the_pending_writers_failure():
    """A read that has to wait for the stream of a pending writer raises that stream's
    failure (the gate keeps the writer pending until the read waits for it)."""
    s = pyhccl.Stream()
    x = pyhccl.zeros(4, "float32")
    gate = Gate(s)

    def fail():
        raise RuntimeError("writer failed")

    s.launch_host_func(fail)
    x.set(np.ones(4, np.float32), stream=s)     # the pending writer, after the failure
    threading.Timer(0.2, gate.open).start()
    with pytest.raises(pyhccl.Error):
        x.get()
    s.synchronize()                               # reported once, then clean
    s.destroy()


def test_host_write_waits_for_a_pending_reader(pair):
    """set() with stream=None must not overwrite a buffer a pending collective still reads."""
    comm, _ = pair
    s = pyhccl.Stream()
    gate = Gate(s)
    x = pyhccl.full(3, comm.rank + 1, "float32")
    out = pyhccl.zeros(3, "float32")
    comm.all_reduce(x, out, stream=s)
    threading.Timer(0.2, gate.open).start()
    x.set(np.full(3, -100, np.float32))
    s.synchronize()
    want = comm.size * (comm.size + 1) / 2
    got = out.get()
    assert_all((got == want).all(), f"{got} != {want}")
    s.destroy()


QUEUED_ACROSS_HOSTS = """
    import threading
    rank, path, late = int(sys.argv[1]), sys.argv[2], float(os.environ["LATE_S"])
    comm = pyhccl.Comm(4, root_info(path, rank), rank)
    s = pyhccl.Stream()
    xs = [pyhccl.asarray(np.full(8, rank + 1 + i, np.float32)) for i in range(20)]
    comm.barrier(stream=s)
    s.synchronize()
    t0 = time.monotonic()
    if rank == 1:
        time.sleep(late)
    gate = threading.Event()
    s.launch_host_func(gate.wait, 60)  # every Broadcast queued before the first runs
    for x in xs:
        comm.broadcast(x, 0, stream=s)  # each kept alive by a mark, nothing on the stream
    gate.set()
    s.synchronize()
    assert all((x.get() == 1 + i).all() for i, x in enumerate(xs)), [x.get() for x in xs]
    ends = [(r["end_us"] / 1e6 - t0) for r in comm.flight_record()[-20:]]
    print("ENDS", ends[-2], ends[-1], flush=True)
    comm.destroy()
"""


@first_rank_only
@pytest.mark.timeout(120)
def test_queued_rooted_collectives_do_not_wait_for_their_check(tmp_path):
    """4 simulated hosts: rank 2 gets its Broadcasts' data from rank 0 and hears from rank 1,
    which starts late, only their signature check. The binding's keep-alive after each call
    puts nothing on the stream that makes a Broadcast wait for that check (hostrtStreamMark):
    rank 2's queued Broadcasts end at once but the last, which waits for the check before
    synchronize returns (as tests/c's `pipeline` mode checks from C)."""
    late = scaled(2.0)
    # The link declared so that the star is chosen, not a chain through rank 1
    env = {"LATE_S": str(late), "PYHCCL_NET_LATENCY_US": "50", "PYHCCL_NET_MESSAGE_US": "1"}
    outs = run_ranks(tmp_path, QUEUED_ACROSS_HOSTS, 4, timeout=scaled(90), env=env,
                     rank_env={r: {"PYHCCL_HOST_TAG": f"h{r}"} for r in range(4)})
    ends = [line.split()[1:] for line in outs[2].splitlines() if line.startswith("ENDS")]
    assert ends, outs
    early, last = map(float, ends[0])
    assert early < late / 2, f"the last but one Broadcast waited for the late rank: {early:.3f} s"
    assert last > late * 0.9, f"the last Broadcast did not wait for its check: {last:.3f} s"


ROOT_RUNS_AHEAD = """
    import threading
    rank, path = int(sys.argv[1]), sys.argv[2]
    comm = pyhccl.Comm(2, root_info(path, rank), rank)
    s = pyhccl.Stream()
    xs = [pyhccl.full(32768, rank, np.int32) for _ in range(3)]  # beyond a board
    y = pyhccl.full(2, rank + 1, np.float32)
    comm.barrier(stream=s)
    s.synchronize()
    gate = threading.Event()
    s.launch_host_func(gate.wait, 60)
    if rank == 0:
        s.launch_host_func(time.sleep, 0.5)  # rank 1 runs ahead meanwhile
    comm.broadcast(xs[0], 1, stream=s)
    comm.broadcast(xs[1], 1, stream=s)
    comm.broadcast(xs[2], 1, stream=s)
    comm.all_reduce(y, stream=s)  # on the boards
    gate.set()
    s.synchronize()
    assert all((x.get() == 1).all() for x in xs) and (y.get() == 3).all()
    print("ALGOS", [r["algorithm"] for r in comm.flight_record()[-4:]], flush=True)
    comm.destroy()
"""


@first_rank_only
@pytest.mark.timeout(120)
def test_a_root_that_runs_ahead_is_no_mismatch(tmp_path):
    """One host: rank 1, the root of queued Broadcasts, runs ahead of rank 0 into a board
    exchange, where rank 0's signature-check headers of the Broadcasts (received later,
    ctx.h) reach it. Such a message tells of a peer behind, not of one that runs something
    else (it failed as "collective #5 differs")."""
    outs = run_ranks(tmp_path, ROOT_RUNS_AHEAD, 2, timeout=scaled(60))
    for out in outs:
        assert "ALGOS ['flat', 'flat', 'flat', 'board']" in out, out
