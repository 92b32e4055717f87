"""Tutorial section 4: overlap communication with computation.

A backward pass produces one gradient per layer, last layer first. Each
gradient is all-reduced on a communication stream as soon as it exists,
while the host goes on computing the next layer's gradient.

    mpiexec -n 4 python docs/tutorial/overlap.py
"""

import sys
from typing import List

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi

LAYERS = 6
WIDTH = 1 << 16


def layer_gradient(layer: int, rank: int) -> np.ndarray:
    """Stands for the backward computation of one layer (the host is busy meanwhile)."""
    rng = np.random.default_rng(1000 * layer + rank)
    return np.round(rng.standard_normal(WIDTH) * 8).astype(np.float32)


def main() -> int:
    comm = comm_from_mpi(MPI.COMM_WORLD)
    rank, size = comm.rank, comm.size
    comm_stream = pyhccl.Stream()
    grads: List[pyhccl.DeviceArray] = []
    for layer in reversed(range(LAYERS)):       # backward: last layer first
        g = pyhccl.asarray(layer_gradient(layer, rank))
        # Hand the gradient to the communication stream and carry on computing.
        comm.all_reduce(g, stream=comm_stream)
        grads.append(g)
    ready = comm_stream.record()                # marks the end of all AllReduces
    ready.synchronize()                         # before the optimizer step reads them

    ok = True
    for layer, g in zip(reversed(range(LAYERS)), grads):
        expect = sum(layer_gradient(layer, r) for r in range(size))
        ok = ok and bool(np.array_equal(g.get(), expect))
    if rank == 0:
        print(f"{LAYERS} gradients all-reduced while the next ones were computed: "
              f"{'ok' if ok else 'WRONG'}")
    comm_stream.destroy()
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
