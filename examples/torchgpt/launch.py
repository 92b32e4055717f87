"""Start torch.distributed the same way under torchrun, mpirun/mpiexec and srun.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT.
Under mpirun or srun they are taken from the launcher's own variables and the
port is agreed through mpi4py; when pyhccl.torch offers its own helper for
this, that one is used instead.
"""
import datetime
import os
import socket
from typing import Dict, Optional

import torch
import torch.distributed as dist

# launcher -> (rank, size, local rank, local size) variables, first match wins
_LAUNCHERS = (
    ("torchrun", ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")),
    ("Open MPI", ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                  "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE")),
    ("MPICH", ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS")),
    ("Slurm", ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE")),
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launcher_env() -> Dict[str, str]:
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT for this process.

    Raises:
        RuntimeError: no launcher variables, or no port can be agreed.
    """
    for name, keys in _LAUNCHERS:
        if keys[0] in os.environ and keys[1] in os.environ:
            break
    else:
        # a plain `python script.py` is a job of one
        name, keys = "none", ("", "", "", "")
    rank = int(os.environ.get(keys[0], "0"))
    size = int(os.environ.get(keys[1], "1"))
    env = {"RANK": str(rank), "WORLD_SIZE": str(size),
           "LOCAL_RANK": os.environ.get(keys[2], str(rank)),
           "LOCAL_WORLD_SIZE": os.environ.get(keys[3], str(size)).split("(")[0],
           "MASTER_ADDR": os.environ.get("MASTER_ADDR", "127.0.0.1")}
    port = os.environ.get("MASTER_PORT")
    if port is None:
        if size == 1:
            port = str(_free_port())
        elif name in ("Open MPI", "MPICH", "Slurm"):
            try:
                from mpi4py import MPI
            except ImportError:
                raise RuntimeError(f"launch: started by {name} without MASTER_PORT; set "
                                   "MASTER_ADDR and MASTER_PORT or install mpi4py") from None
            port = str(MPI.COMM_WORLD.bcast(_free_port() if rank == 0 else None, root=0))
        else:
            raise RuntimeError("launch: RANK/WORLD_SIZE are set but MASTER_PORT is not")
    env["MASTER_PORT"] = port
    return env


def init(backend: str, timeout_s: float = 120.0) -> None:
    """init_process_group(backend) from whichever launcher started this process.

    Also gives each rank its share of the cores for torch's intra-op threads.
    """
    if backend == "pyhccl":
        import pyhccl.torch  # noqa: F401  (registers the "pyhccl" backend)
    os.environ.update(launcher_env())
    local = int(os.environ["LOCAL_WORLD_SIZE"])
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(local, 1)))
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))


def finish(code: int) -> int:
    """Destroy the process group and return `code` (the exit status of the example)."""
    if dist.is_initialized():
        dist.destroy_process_group()
    return code


def log0(*args: object) -> None:
    """Print on rank 0 only, flushed at once."""
    if not dist.is_initialized() or dist.get_rank() == 0:
        print(*args, flush=True)


def local_world(default: Optional[int] = None) -> int:
    return int(os.environ.get("LOCAL_WORLD_SIZE", default or 1))
