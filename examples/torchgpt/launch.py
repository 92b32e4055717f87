"""Start torch.distributed the same way under torchrun, mpirun/mpiexec, srun or plain python.

pyhccl.torch.init_process_group_from_env() takes RANK/WORLD_SIZE from
torchrun's variables or derives them from mpirun's or srun's (and agrees on
a master); it serves any backend, so --backend gloo starts the same way.
A plain `python script.py` is a job of one.
"""
import datetime
import os
import socket

import torch
import torch.distributed as dist

import pyhccl.torch  # registers the "pyhccl" backend

_LAUNCHER_RANKS = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


def init(backend: str, timeout_s: float = 120.0) -> None:
    """init_process_group(backend) from whichever launcher started this process,
    and each rank's share of the cores for torch's intra-op threads."""
    if not any(k in os.environ for k in _LAUNCHER_RANKS):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    pyhccl.torch.init_process_group_from_env(backend, timeout=datetime.timedelta(seconds=timeout_s))
    local = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(local, 1)))


def finish(code: int) -> int:
    """Destroy the process group and return `code` (the exit status of the example)."""
    if dist.is_initialized():
        dist.destroy_process_group()
    return code


def log0(*args: object) -> None:
    """Print on rank 0 only, flushed at once."""
    if not dist.is_initialized() or dist.get_rank() == 0:
        print(*args, flush=True)
