"""Communicators without mpi4py: ranks from a launcher's variables or from arguments.

    comm = pyhccl.Comm.from_env()            # under torchrun, srun, mpiexec, ...
    comm = pyhccl.Comm.from_env(rank=1, world_size=4)   # started by hand

Every rank calls it; rank 0 makes the root info and the others fetch it through
the group rendezvous of hccl/hccl_host.h (PyhcclRendezvousOpen): on one host an
abstract unix socket named after the user and the group, across hosts
MASTER_ADDR:MASTER_PORT (torch's variables). docs/LAUNCH.md has the details.
For MPI programs pyhccl.mpi.comm_from_mpi stays the recommended path.
"""

import os
import re
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple, Union

import pyhccl
from pyhccl import _core

__all__ = ["LaunchInfo", "LAUNCHERS", "comm_from_env", "launch_info"]


class _Launcher(NamedTuple):
    name: str
    rank: str
    size: str
    local_rank: Optional[str]
    local_size: Optional[str]
    job: Tuple[str, ...]   # variables naming the job (for the default group name)


# In this order: a launcher started under another (mpiexec inside a Slurm
# allocation, torchrun under srun) sets its own variables too, and the one
# that started this process directly is the most specific.
LAUNCHERS = (
    _Launcher("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
              ("TORCHELASTIC_RUN_ID",)),
    _Launcher("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
              "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
              ("OMPI_MCA_orte_ess_jobid", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE")),
    _Launcher("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
              ("PMI_KVSNAME",)),
    _Launcher("PMIx", "PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE",
              ("PMIX_NAMESPACE",)),
    # SLURM_NTASKS_PER_NODE may read "2(x3)": its leading number counts
    _Launcher("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
              ("SLURM_JOB_ID", "SLURM_STEP_ID")),
)


class LaunchInfo(NamedTuple):
    """What comm_from_env found: rank, world size, local rank (or None), the
    group name, and where each came from ("arguments", "torchrun", ...)."""
    rank: int
    world_size: int
    local_rank: Optional[int]
    group: str
    source: str
    local_size: Optional[int] = None    # ranks on this host, where the launcher says


def _int_var(env: Mapping[str, str], name: str, launcher: str) -> int:
    text = env[name]
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"Comm.from_env: {name}={text!r} ({launcher}) is not an integer") from None
    if value < 0:
        raise ValueError(f"Comm.from_env: {name}={value} ({launcher}) is negative")
    return value


def _leading_int(env: Mapping[str, str], name: Optional[str]) -> Optional[int]:
    m = re.match(r"\s*(\d+)", env.get(name, "")) if name else None
    return int(m.group(1)) if m else None


def _index(value: Any, what: str) -> int:
    try:
        return int(value.__index__())
    except AttributeError:
        raise TypeError(f"Comm.from_env: {what} must be an int, not {type(value).__name__}") from None


def launch_info(rank: Optional[int] = None, world_size: Optional[int] = None,
                group: Optional[str] = None,
                env: Optional[Mapping[str, str]] = None) -> LaunchInfo:
    """Resolve the rank, world size, local rank and group name comm_from_env would use.

    Explicit `rank` and `world_size` win (both or neither); otherwise the first
    launcher in LAUNCHERS whose rank and size variables are both set. The
    default group is "pyhccl", or "pyhccl-<launcher>-<job id>" when the
    launcher names its job, so that concurrent jobs do not meet.

    Raises:
        TypeError: rank or world_size is not an int.
        ValueError: only one of them given, no launcher found, a variable
            that is not a number, or a rank outside [0, world_size).
    """
    env = os.environ if env is None else env
    local: Optional[int] = None
    local_size: Optional[int] = None
    job = ""
    if rank is not None or world_size is not None:
        if rank is None or world_size is None:
            raise ValueError("Comm.from_env: give both rank and world_size, or neither "
                             "(to read them from the launcher's variables)")
        r, n, source = _index(rank, "rank"), _index(world_size, "world_size"), "arguments"
        for la in LAUNCHERS:  # the launcher's local rank still picks the device if it agrees
            if la.rank in env and la.size in env:
                if la.local_rank and la.local_rank in env and env[la.rank].strip() == str(r):
                    local = _int_var(env, la.local_rank, la.name)
                break
    else:
        found = [la for la in LAUNCHERS if la.rank in env and la.size in env]
        if not found:
            names = ", ".join(f"{la.rank}/{la.size} ({la.name})" for la in LAUNCHERS)
            raise ValueError(f"Comm.from_env: no launcher's variables are set (looked for {names}): "
                             "pass rank= and world_size=")
        la = found[0]
        r, n, source = _int_var(env, la.rank, la.name), _int_var(env, la.size, la.name), la.name
        if la.local_rank and la.local_rank in env:
            local = _int_var(env, la.local_rank, la.name)
        local_size = _leading_int(env, la.local_size)
        job = "-".join(env[v] for v in la.job if env.get(v))
        if job:
            job = f"{la.name.replace(' ', '').lower()}-{job}"
    if n < 1:
        raise ValueError(f"Comm.from_env: world_size must be at least 1, not {n} (from {source})")
    if not 0 <= r < n:
        raise ValueError(f"Comm.from_env: rank {r} is out of range for world_size {n} (from {source})")
    if group is None:
        group = f"pyhccl-{job}"[:127] if job else "pyhccl"
    return LaunchInfo(r, n, local, group, source, local_size)


def comm_from_env(rank: Optional[int] = None, world_size: Optional[int] = None, *,
                  group: Optional[str] = None, device: Optional[int] = None,
                  config: Union[None, "pyhccl.CommConfig", Dict[str, Any]] = None,
                  env: Optional[Mapping[str, str]] = None) -> "pyhccl.Comm":
    """Create this rank's communicator with no mpi4py (pyhccl.Comm.from_env).

    Every rank calls it with the same group. Rank, world size and group come
    from launch_info(); the ranks meet through PyhcclRendezvousOpen (on one
    host by group name, across hosts at MASTER_ADDR:MASTER_PORT), within
    HCCL_CONNECT_TIMEOUT seconds. Rank 0 keeps the group's name until its
    communicator is destroyed: a second job using it meanwhile gets an error.

    Args:
        rank, world_size: this rank and the number of ranks (both or neither).
        group: the rendezvous name (1 to 127 bytes); default from launch_info().
        device: the device to use. None: keep the one set with set_device();
            if none was, the launcher's local rank (else the rank) modulo
            device_count().
        config: None, a CommConfig or a dict of its options.
        env: the variables to read (default os.environ).

    Raises:
        TypeError, ValueError: see launch_info(); a bad device or config.
        HcclError: the rendezvous or the set-up failed (its message says
            why: a missing rank, a group in use, differing world sizes, ...).
    """
    info = launch_info(rank, world_size, group, env)
    if device is None and _core._explicit_device_id() is None:
        device = (info.local_rank if info.local_rank is not None else info.rank) % \
            max(pyhccl.device_count(), 1)
    if device is not None:
        pyhccl.set_device(device)
    root_info, rendezvous = _core._rendezvous_open(info.group, info.world_size, info.rank)
    try:
        comm = pyhccl.Comm(info.world_size, root_info, info.rank, config)
    except BaseException:
        rendezvous.close()
        raise
    comm._keep_rendezvous(rendezvous)
    return comm
