"""Tutorial section 1: one AllReduce.  mpiexec -n 4 python docs/tutorial/first_allreduce.py"""

import sys

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi


def main() -> int:
    comm = comm_from_mpi(MPI.COMM_WORLD)        # collective: every rank calls it
    rank, size = comm.rank, comm.size

    x = pyhccl.asarray(np.full(4, rank + 1, np.float32))   # host -> device
    comm.all_reduce(x, op="sum")                # enqueued on the current stream
    pyhccl.current_stream().synchronize()       # wait before reading the result

    expected = size * (size + 1) / 2
    ok = bool(np.all(x.get() == expected))
    if rank == 0:
        print(f"sum over {size} {'rank' if size == 1 else 'ranks'}: {x.get()}")
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
