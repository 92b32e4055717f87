"""MPI bootstrap for pyhccl: build a Comm from an mpi4py communicator.

This is the only pyhccl module that imports mpi4py; `import pyhccl` does not.

    from mpi4py import MPI
    from pyhccl.mpi import comm_from_mpi
    comm = comm_from_mpi(MPI.COMM_WORLD)   # collective over the MPI communicator
"""

from typing import Any, Dict, Optional, Union, cast

from mpi4py import MPI

import pyhccl
from pyhccl import _core

__all__ = ["comm_from_mpi", "local_rank", "op_name", "to_op"]

_MPI_OPS = ((MPI.SUM, pyhccl.SUM), (MPI.PROD, pyhccl.PROD),
            (MPI.MAX, pyhccl.MAX), (MPI.MIN, pyhccl.MIN))

# mpi4py's predefined ops print as "<mpi4py.MPI.Op object at 0x...>": name them.
_OP_NAMES = [(op, f"MPI.{name}") for name, op in vars(MPI).items()
             if isinstance(op, MPI.Op) and name.isupper()]


def op_name(op: MPI.Op) -> str:
    """Return the name of an mpi4py op ("MPI.LAND"), or its repr for a user-defined op."""
    for known, name in _OP_NAMES:
        if op == known:
            return name
    return repr(op)


def to_op(op: Any) -> pyhccl.ReduceOp:
    """Convert an mpi4py op (MPI.SUM/PROD/MAX/MIN) or any pyhccl op-like value to a ReduceOp.

    Raises:
        ValueError: an MPI op HCCL has no reduction for (e.g. MPI.LAND), or
            an unknown op name or number.
        TypeError: `op` is no op at all.
    """
    if isinstance(op, MPI.Op):
        for mpi_op, red in _MPI_OPS:
            if op == mpi_op:
                return red
        raise ValueError(f"MPI op {op_name(op)} has no HCCL equivalent "
                         "(only MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN)")
    return pyhccl.as_op(op)


def local_rank(mpi_comm: Optional[MPI.Intracomm] = None) -> int:
    """Return this process's rank among the ranks of `mpi_comm` on the same node.

    Collective over `mpi_comm` (default MPI.COMM_WORLD).
    """
    if mpi_comm is None:
        mpi_comm = MPI.COMM_WORLD
    node = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return int(node.Get_rank())
    finally:
        node.Free()


def comm_from_mpi(mpi_comm: Optional[MPI.Comm] = None, device: Optional[int] = None,
                  config: Union[None, pyhccl.CommConfig, Dict[str, Any]] = None
                  ) -> pyhccl.Comm:
    """Create a pyhccl Comm spanning the ranks of an mpi4py communicator.

    Collective over `mpi_comm`: every rank calls it. Rank 0 creates the root
    info (HcclGetRootInfo) and broadcasts its bytes; every rank then creates
    its communicator (HcclCommInitRootInfo[Config]) with its MPI rank. Works
    on COMM_WORLD, COMM_SELF and on Split / Dup communicators.

    Args:
        mpi_comm: an mpi4py intracommunicator (default MPI.COMM_WORLD).
        device: device to use. None: keep the device set by set_device(), or
            if none was set, use the node-local rank modulo device_count().
        config: None, a CommConfig or a dict of its options.

    Returns:
        pyhccl.Comm with rank == mpi_comm.Get_rank() and size == Get_size().

    Raises:
        TypeError: `mpi_comm` is an intercommunicator, or `config` is of the
            wrong type.
        ValueError: a bad `device` or `config` value.
        AclError: setting the device failed (e.g. no such device).
        HcclError: creating the root info or the communicator failed (on the
            ranks where it failed; a root-info failure is raised on all ranks).
    """
    if mpi_comm is None:
        mpi_comm = MPI.COMM_WORLD
    if mpi_comm.Is_inter():
        raise TypeError("comm_from_mpi: intercommunicators are not supported")
    if device is None:
        lrank = local_rank(cast(MPI.Intracomm, mpi_comm))      # collective: run on every rank alike
        if _core._explicit_device_id() is None:
            device = lrank % max(pyhccl.device_count(), 1)
    if device is not None:
        pyhccl.set_device(device)
    rank = mpi_comm.Get_rank()
    size = mpi_comm.Get_size()
    payload: Union[None, bytes, BaseException] = None
    if rank == 0:
        try:
            payload = bytes(pyhccl.RootInfo.create())
        except Exception as exc:       # every rank must learn of the failure
            payload = exc
    payload = mpi_comm.bcast(payload, root=0)
    if isinstance(payload, BaseException):
        raise payload
    return pyhccl.Comm(size, pyhccl.RootInfo.from_bytes(cast(bytes, payload)), rank, config)
