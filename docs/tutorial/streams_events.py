"""Tutorial section 3: streams and events.  mpiexec -n 4 python docs/tutorial/streams_events.py"""

import sys

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi


def main() -> int:
    comm = comm_from_mpi(MPI.COMM_WORLD)
    rank, size = comm.rank, comm.size
    comm_stream = pyhccl.Stream()               # a queue of its own, run in order
    grads = pyhccl.full(1 << 18, float(rank), "float32")

    # Time the AllReduce with two events recorded around it on the same stream.
    start, end = pyhccl.Event(), pyhccl.Event()
    start.record(comm_stream)
    comm.all_reduce(grads, stream=comm_stream)
    end.record(comm_stream)

    # Work on another stream that needs the result waits for `end` on the
    # device side: the host does not block here.
    compute = pyhccl.Stream()
    compute.wait_event(end)
    scaled = pyhccl.empty_like(grads)
    scaled.copy_from(grads, stream=compute)     # runs after the AllReduce

    compute.synchronize()                       # the host waits only here
    ms = start.elapsed_time(end)
    ok = bool(np.all(scaled.get() == sum(range(size))))
    if rank == 0:
        print(f"AllReduce of {grads.nbytes >> 10} KiB took {ms:.3f} ms on the stream")
    for s in (comm_stream, compute):
        s.destroy()
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
