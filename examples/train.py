"""Data-parallel training: a two-layer MLP on synthetic data, gradients averaged with AllReduce.

Each rank trains on its own shard of every batch. Per layer, as soon as its
gradient is computed, it is copied to the device on the compute stream, an
event is recorded, and the communication stream waits on that event and
all-reduces the gradient, so communication overlaps the rest of the backward
pass. The script checks that every rank ends with bit-identical parameters
and that they match a single-process reference trained on the whole batch.

Run:  mpirun -np 4 python examples/train.py
"""
import sys
from typing import Any, Iterator, List, Optional, Tuple

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi

IN, HIDDEN, OUT = 32, 64, 1
BATCH, STEPS, LR = 256, 60, 0.05


def make_data(step: int) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Return the global batch of a step (identical on every rank)."""
    rng = np.random.default_rng(1000 + step)
    x = rng.standard_normal((BATCH, IN)).astype(np.float64)
    y = np.sin(x[:, :1]) + 0.5 * x[:, 1:2]
    return x, y


def init_params() -> List[npt.NDArray[np.float64]]:
    """Return the same initial parameters on every rank."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal((IN, HIDDEN)) / np.sqrt(IN), np.zeros(HIDDEN),
            rng.standard_normal((HIDDEN, OUT)) / np.sqrt(HIDDEN), np.zeros(OUT)]


def backward(params: List[npt.NDArray[np.float64]], x: npt.NDArray[np.float64],
             y: npt.NDArray[np.float64], scale: float) -> Iterator[Tuple[Optional[int], Any]]:
    """Yield (index, gradient) from the last layer to the first, and the loss last."""
    w1, b1, w2, b2 = params
    h = np.maximum(x @ w1 + b1, 0.0)
    err = (h @ w2 + b2) - y
    d_out = 2.0 * err * scale
    yield 3, d_out.sum(0)
    yield 2, h.T @ d_out
    d_h = (d_out @ w2.T) * (h > 0)
    yield 1, d_h.sum(0)
    yield 0, x.T @ d_h
    yield None, float((err ** 2).sum() * scale)


def train(comm: pyhccl.Comm, shard: slice
          ) -> Tuple[List[npt.NDArray[np.float64]], List[float]]:
    """Train with gradients all-reduced on a communication stream; return params and losses."""
    params = init_params()
    compute, comm_stream = pyhccl.Stream(), pyhccl.Stream()
    grads = [pyhccl.empty(p.shape, np.float64) for p in params]
    ready = [pyhccl.Event() for _ in params]
    losses: List[float] = []
    for step in range(STEPS):
        x, y = make_data(step)
        x, y = x[shard], y[shard]
        for i, g in backward(params, x, y, 1.0 / BATCH):
            if i is None:
                losses.append(g)
                continue
            grads[i].set(g, stream=compute)        # host -> device, async
            ready[i].record(compute)
            comm_stream.wait_event(ready[i])       # communication waits only for this layer
            comm.all_reduce(grads[i], op=pyhccl.SUM, stream=comm_stream)
        comm_stream.synchronize()
        for p, g in zip(params, grads):
            p -= LR * g.to_numpy()
    compute.destroy()
    comm_stream.destroy()
    return params, losses


def main() -> int:
    world = MPI.COMM_WORLD
    comm = comm_from_mpi(world)
    rank, size = comm.rank, comm.size
    shard = slice(rank * BATCH // size, (rank + 1) * BATCH // size)
    params, losses = train(comm, shard)
    total_loss = world.allreduce(losses[-1], op=MPI.SUM)
    first_loss = world.allreduce(losses[0], op=MPI.SUM)

    flat = np.concatenate([p.ravel() for p in params])
    everyone = world.allgather(flat.tobytes())
    identical = all(b == everyone[0] for b in everyone)

    # Reference: the same data-parallel arithmetic in one process.
    ref = init_params()
    for step in range(STEPS):
        x, y = make_data(step)
        summed = [np.zeros_like(p) for p in ref]
        for r in range(size):
            s = slice(r * BATCH // size, (r + 1) * BATCH // size)
            for i, g in backward(ref, x[s], y[s], 1.0 / BATCH):
                if i is not None:
                    summed[i] = summed[i] + g
        for p, g in zip(ref, summed):
            p -= LR * g
    ref_flat = np.concatenate([p.ravel() for p in ref])
    close = bool(np.allclose(flat, ref_flat, rtol=1e-9, atol=1e-12))
    learned = total_loss < 0.5 * first_loss
    ok = identical and close and learned
    if rank == 0:
        print(f"{size} ranks, {STEPS} steps: loss {first_loss:.4f} -> {total_loss:.4f}; "
              f"parameters identical on all ranks: {identical}; match reference: {close}")
        print("training verified" if ok else "TRAINING CHECK FAILED")
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
