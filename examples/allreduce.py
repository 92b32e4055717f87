"""Gradient aggregation with AllReduce: the canonical pyhccl flow.

Every rank holds 256 float32 "gradients" set to rank*0.1 + i; AllReduce (sum)
on a stream leaves element i = sum over ranks of (rank*0.1 + i) on every rank.

Run:  mpirun -np 4 python examples/allreduce.py
Exit status is non-zero if any rank sees a wrong result.
"""
import sys

import numpy as np
from mpi4py import MPI

import pyhccl

COUNT = 256


def main() -> int:
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()

    # One device per rank: the rank's index on its host.
    local_rank = world.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    pyhccl.set_device(local_rank % pyhccl.device_count())
    stream = pyhccl.Stream()

    # Rank 0 creates the root info; MPI ships it to everyone.
    root_info = pyhccl.RootInfo.create() if rank == 0 else None
    root_info = world.bcast(root_info, root=0)

    with pyhccl.Comm(size, root_info, rank) as comm:
        grads = (np.float32(rank * 0.1) + np.arange(COUNT, dtype=np.float32))
        send = pyhccl.asarray(grads)          # host -> device
        recv = pyhccl.empty_like(send)
        comm.all_reduce(send, recv, pyhccl.SUM, stream=stream)  # enqueued, returns at once
        stream.synchronize()
        result = recv.to_numpy()              # device -> host

    expected = np.sum([np.float32(r * 0.1) + np.arange(COUNT, dtype=np.float32)
                       for r in range(size)], axis=0, dtype=np.float32)
    ok = bool(np.allclose(result, expected, rtol=4 * np.finfo(np.float32).eps, atol=0))
    all_ok = world.allreduce(ok, op=MPI.LAND)
    if rank == 0:
        print(f"AllReduce over {size} ranks, first 5 values: "
              + " ".join(f"{v:.4f}" for v in result[:5]))
        print("result verified" if all_ok else "WRONG RESULT")
    stream.destroy()
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
