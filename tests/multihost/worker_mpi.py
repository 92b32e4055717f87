"""An mpi4py job that shows where each rank runs and that MPI works between hosts.

Each rank prints one line "RESULT rank=K {json}" with its hostname, network namespace,
boot id, MPI's node-local rank and size, and the outcome of an Allreduce over 1 MiB
and of a message around a ring of all ranks (checked here).
"""
import json
import os
import socket
import sys

import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
node = world.Split_type(MPI.COMM_TYPE_SHARED)
data = np.full(1 << 17, rank + 1, np.float64)
total = np.empty_like(data)
world.Allreduce(data, total)
got = world.sendrecv(f"from {rank}", dest=(rank + 1) % size, source=(rank - 1) % size)
with open("/proc/sys/kernel/random/boot_id") as f:
    boot_id = f.read().strip()
info = {
    "hostname": socket.gethostname(),
    "resolves": socket.gethostbyname(socket.gethostname()),
    "netns": os.readlink("/proc/self/ns/net"),
    "boot_id": boot_id,
    "processor": MPI.Get_processor_name(),
    "local_rank": node.Get_rank(),
    "local_size": node.Get_size(),
    "allreduce_ok": bool(np.all(total == size * (size + 1) / 2)),
    "ring_ok": got == f"from {(rank - 1) % size}",
}
node.Free()
sys.stdout.write(f"RESULT rank={rank} {json.dumps(info)}\n")   # one write: whole lines
sys.stdout.flush()
