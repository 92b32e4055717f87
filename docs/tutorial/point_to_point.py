"""Tutorial section 5: point to point, groups and variable-size collectives.

    mpiexec -n 4 python docs/tutorial/point_to_point.py
"""

import sys

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi


def main() -> int:
    comm = comm_from_mpi(MPI.COMM_WORLD)
    rank, size = comm.rank, comm.size
    right, left = (rank + 1) % size, (rank - 1) % size

    # A ring of 4 MiB messages: in a group, the sends and receives progress
    # together (one after the other on one stream, large sends would wait
    # for receives that never start).
    out = np.full(1 << 20, rank, np.float32)
    inbox = np.zeros(1 << 20, np.float32)
    with pyhccl.group():
        comm.send(out, right)
        comm.recv(inbox, left)

    # The same exchange as one batch.
    inbox2 = np.zeros_like(inbox)
    comm.batch_send_recv([("send", out, right), ("recv", inbox2, left)])

    # Every rank contributes rank + 1 elements; everyone gets all of them.
    counts = [r + 1 for r in range(size)]
    gathered = np.zeros(sum(counts), np.int32)
    comm.all_gather_v(np.full(rank + 1, rank, np.int32), gathered, counts)

    pyhccl.current_stream().synchronize()
    ok = (bool(np.all(inbox == left)) and bool(np.all(inbox2 == left))
          and np.array_equal(gathered, np.repeat(np.arange(size), counts)))
    if rank == 0:
        print(f"ring and all_gather_v over {size} {'rank' if size == 1 else 'ranks'}: "
              f"{'ok' if ok else 'WRONG'}; gathered {gathered.tolist()}")
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
