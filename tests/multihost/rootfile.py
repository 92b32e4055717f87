"""The root info handed over in a file, for workers started without MPI (worker_faults.py,
worker_scale.py): rank 0 creates it and publishes DIR/root, the others wait for it."""
import os
import time

import pyhccl


def publish(directory, name, data, rank):
    """Write DIR/name at once for readers (through a rank-private temporary file)."""
    tmp = os.path.join(directory, f".{name}.{rank}")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(directory, name))


def root_info(directory, rank, wait_s):
    """Rank 0's root info: created and published by rank 0, read by the others within
    `wait_s` seconds (TimeoutError after)."""
    path = os.path.join(directory, "root")
    if rank == 0:
        info = pyhccl.RootInfo.create()
        publish(directory, "root", bytes(info), rank)
        return info
    deadline = time.monotonic() + wait_s
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no root info from rank 0 in {wait_s} s")
        time.sleep(0.02)
    with open(path, "rb") as f:
        return pyhccl.RootInfo.from_bytes(f.read())
