"""One rank of a pyhccl job that meets a fault; it reports how it ended.

    python tests/multihost/worker_faults.py MODE RANK NRANKS DEVICE DIR [VICTIM]

Started once per rank by the test on the simulated hosts, without MPI: rank 0 writes
the root info (HcclGetRootInfo) to DIR/root, the others read it, as in the C seed
flow. Not under mpiexec because hydra SIGKILLs the survivors of a dead rank even with
-disable-auto-cleanup, before they could report.

MODE:
  loop      AllReduces until an error or LOOP_SECONDS; the test kills a rank or takes
            a link down meanwhile. DIR/ready.<rank> appears once this rank's
            communicator has completed one AllReduce.
  secret    rank VICTIM presents a wrong job secret on its data connections
            (PYHCCL_FAULT=bad_data_secret): set-up must fail on every rank.
  join      set up and run one AllReduce (no fault here: an attacker elsewhere).
  corrupt   rank VICTIM's network corrupts what it receives (PYHCCL_FAULT=corrupt_tcp,
            which TCP's checksum would miss); AllReduces of known sums run until an
            error, and a wrong sum ends the rank with "wrong".
  outage    like loop, but every AllReduce has a known sum (checked: a wrong one ends the
            rank with "wrong sum"); the test takes links down and up meanwhile, then
            writes DIR/stop, and the ranks go on for STOP_AFTER seconds more. "ok" is
            followed by iters=N stalls=END:SECONDS,... (the AllReduces that took over a
            second: when they ended, epoch seconds, and how long they took).

Every rank ends with one line "RESULT rank=K ok|error=<message> t=<epoch seconds>".
"""
import os
import sys
import time

MODE, RANK, NRANKS, DEVICE, DIR = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
VICTIM = int(sys.argv[6]) if len(sys.argv) > 6 else -1
if MODE in ("secret", "corrupt") and RANK == VICTIM:  # before the library reads its environment
    os.environ["PYHCCL_FAULT"] = "bad_data_secret" if MODE == "secret" else "corrupt_tcp"

import pyhccl  # noqa: E402
import rootfile  # noqa: E402

LOOP_SECONDS = 90      # a loop that outlives this has missed its fault
COUNT = 1 << 20        # 4 MiB of float32 per AllReduce
ROOT_WAIT = 60         # seconds rank 0 may take to publish the root info
STOP_AFTER = 2         # outage mode: seconds of AllReduces after DIR/stop appears


def finish(outcome):
    sys.stdout.write(f"RESULT rank={RANK} {outcome} t={time.time():.3f}\n")
    sys.stdout.flush()
    sys.exit(0)


def publish(name, data):
    rootfile.publish(DIR, name, data, RANK)


def root_info():
    return rootfile.root_info(DIR, RANK, ROOT_WAIT)


def describe(exc, comm):
    text = f"{type(exc).__name__}: {exc}"
    try:
        late = comm.async_error() if comm is not None else None
    except Exception:       # a failed communicator may refuse even this
        late = None
    if late is not None and str(late) not in text:
        text += f" / {late}"
    if getattr(exc, "rank", None) is not None:   # the rank at fault, as pyhccl names it
        text += f" culprit={exc.rank}"
    return text.replace("\n", " | ")


def outage(comm, stream, buf):
    """AllReduces of known sums through the test's outages; returns the outcome. The last
    element carries each rank's vote to stop, so that all stop after the same AllReduce (a
    rank that exits first would fail its peers' next one)."""
    stop_at, deadline, iters, stalls = None, time.monotonic() + LOOP_SECONDS, 0, []
    want = (NRANKS * (NRANKS + 1)) // 2
    while True:
        scale = iters % 5 + 1                       # a stale buffer would show
        buf.fill(scale * (RANK + 1))
        now = time.monotonic()
        buf[COUNT - 1] = float((stop_at is not None and now >= stop_at) or now >= deadline)
        comm.all_reduce(buf, stream=stream)
        stream.synchronize()
        took = time.monotonic() - now
        if took > 1.0:
            stalls.append(f"{time.time():.3f}:{took:.2f}")
        got = buf.get()
        if not (got[:-1] == scale * want).all():
            return f"wrong sum in AllReduce {iters}"
        iters += 1
        if got[-1] > 0:
            return f"ok iters={iters} stalls={','.join(stalls) or '-'}"
        if stop_at is None and os.path.exists(os.path.join(DIR, "stop")):
            stop_at = time.monotonic() + STOP_AFTER


def main():
    comm = None
    try:
        pyhccl.set_device(DEVICE)
        comm = pyhccl.Comm(NRANKS, root_info(), RANK)
        stream = pyhccl.Stream()
        buf = pyhccl.full(COUNT, 1.0, "float32")
        comm.all_reduce(buf, stream=stream)        # every connection is used by now
        stream.synchronize()
        if MODE in ("secret", "join"):
            finish("ok")
        if MODE == "corrupt":
            for _ in range(200):
                buf.fill(RANK + 1)
                comm.all_reduce(buf, stream=stream)
                stream.synchronize()
                if not (buf.get() == NRANKS * (NRANKS + 1) / 2).all():
                    finish("wrong")
            finish("ok")
        publish(f"ready.{RANK}", b"ready")
        if MODE == "outage":
            finish(outage(comm, stream, buf))
        deadline = time.monotonic() + LOOP_SECONDS
        while time.monotonic() < deadline:
            comm.all_reduce(buf, op="max", stream=stream)
            stream.synchronize()
        finish("ok")
    except Exception as exc:
        finish(f"error={describe(exc, comm)}")


if __name__ == "__main__":
    main()
