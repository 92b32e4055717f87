"""Starting torch.distributed under any launcher: torchrun, mpirun/mpiexec, srun.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT. MPI
launchers and Slurm set their own variables; launch_env() derives torch's from
them:

- RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE: read as pyhccl.Comm.from_env
  reads them (pyhccl.launch.LAUNCHERS): OMPI_COMM_WORLD_* (Open MPI),
  PMI_RANK/PMI_SIZE/MPI_LOCALRANKID/MPI_LOCALNRANKS (MPICH, Intel MPI),
  PMIX_* (PMIx), SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID/SLURM_NTASKS_PER_NODE.
- MASTER_ADDR/MASTER_PORT where missing: with mpi4py importable, rank 0 picks
  its host name and a free port and broadcasts them; under Slurm, the first
  host of SLURM_JOB_NODELIST and a port derived from SLURM_JOB_ID; otherwise,
  when every rank is on this host, a file:// store named after the launcher's
  process.
"""

import datetime
import os
import re
import socket
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import torch.distributed as dist

from pyhccl.launch import launch_info


def first_slurm_host(nodelist: str) -> str:
    """The first host of a Slurm node list: 'n[01-04,07],m1' -> 'n01'."""
    m = re.match(r"([^,\[]+)(\[([^\]]+)\])?", nodelist.strip())
    if not m:
        raise ValueError(f"cannot read SLURM_JOB_NODELIST {nodelist!r}")
    prefix, _, ranges = m.groups()
    if not ranges:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def _mpi_master(rank: int, size: int) -> Optional[Tuple[str, int]]:
    """Rank 0's host and a free port, agreed over MPI (None without mpi4py).

    None too where MPI's world is not the launcher's (an mpi4py built for another
    MPI than the one that launched the job starts as a 1-rank singleton).
    """
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    world = MPI.COMM_WORLD
    if world.Get_size() != size or world.Get_rank() != rank:
        return None
    addr: Optional[Tuple[str, int]] = None
    if world.Get_rank() == 0:
        addr = (socket.gethostname(), _free_port())
    agreed: Tuple[str, int] = world.bcast(addr, root=0)
    return agreed


def launch_env(environ: Optional[Dict[str, str]] = None,
               use_mpi: bool = True) -> Dict[str, str]:
    """torch's launch variables derived from the launcher's (no change to os.environ).

    Returns RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and either
    MASTER_ADDR/MASTER_PORT or PYHCCL_INIT_METHOD (a file:// URL).

    Raises:
        RuntimeError: no launcher variables, or no way to agree on a master.
    """
    env = dict(os.environ if environ is None else environ)
    out: Dict[str, str] = {}
    try:   # the launchers' variables, read as pyhccl.Comm.from_env reads them
        info = launch_info(env=env)
    except ValueError as exc:
        raise RuntimeError("pyhccl.torch.launch_env: no launcher variables found (RANK/"
                           "WORLD_SIZE, OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE, PMIX_RANK, "
                           "SLURM_PROCID/SLURM_NTASKS); start with torchrun, mpirun or srun "
                           f"({exc})") from None
    launcher, rank, size = info.source, info.rank, info.world_size
    local, local_size = info.local_rank, info.local_size
    out.update(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(local),
               LOCAL_WORLD_SIZE=str(local_size))
    if env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        out.update(MASTER_ADDR=env["MASTER_ADDR"], MASTER_PORT=env["MASTER_PORT"])
        return out
    master = _mpi_master(rank, size) if use_mpi and launcher != "torchrun" and size > 1 \
        else None
    if master is None and env.get("SLURM_JOB_NODELIST") and env.get("SLURM_JOB_ID"):
        master = (first_slurm_host(env["SLURM_JOB_NODELIST"]),
                  20000 + int(env["SLURM_JOB_ID"]) % 20000)
    if master is not None:
        out.update(MASTER_ADDR=env.get("MASTER_ADDR") or master[0],
                   MASTER_PORT=env.get("MASTER_PORT") or str(master[1]))
        return out
    if size == 1:
        out.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
        return out
    if local_size == size:
        # Every rank on this host, children of one launcher process: a file store it names.
        path = os.path.join(tempfile.gettempdir(),
                            f"pyhccl-torch-{os.getuid()}-{os.getppid()}.store")
        out["PYHCCL_INIT_METHOD"] = "file://" + path
        return out
    raise RuntimeError("pyhccl.torch.launch_env: ranks on several hosts need MASTER_ADDR and "
                       "MASTER_PORT (or mpi4py, or Slurm's variables) to meet")


def init_process_group_from_env(backend: str = "pyhccl",
                                timeout: Optional[datetime.timedelta] = None,
                                **kwargs: Any) -> None:
    """dist.init_process_group() under torchrun, mpirun/mpiexec or srun alike.

    Sets the variables launch_env() derives in os.environ (so LOCAL_RANK is
    there for the model code too) and initialises the default group.
    """
    env = launch_env()
    init_method = env.pop("PYHCCL_INIT_METHOD", None)
    os.environ.update(env)
    args: Dict[str, Any] = dict(backend=backend, rank=int(env["RANK"]),
                                world_size=int(env["WORLD_SIZE"]))
    args["init_method"] = init_method or "env://"
    if timeout is not None:
        args["timeout"] = timeout
    args.update(kwargs)
    dist.init_process_group(**args)
    if init_method is not None:
        _remove_store_file_at_exit(init_method[len("file://"):], int(env["RANK"]))


def _remove_store_file_at_exit(path: str, rank: int) -> None:
    if rank != 0:
        return
    import atexit

    def remove() -> None:
        try:
            os.unlink(path)
        except OSError:
            pass
    atexit.register(remove)


__all__: List[str] = ["first_slurm_host", "init_process_group_from_env", "launch_env"]
