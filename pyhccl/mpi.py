"""MPI bootstrap for pyhccl: build a Comm from an mpi4py communicator.

This is the only pyhccl module that imports mpi4py; `import pyhccl` does not.

    from mpi4py import MPI
    from pyhccl.mpi import comm_from_mpi
    comm = comm_from_mpi(MPI.COMM_WORLD)   # collective over the MPI communicator
"""

from mpi4py import MPI

import pyhccl
from pyhccl import _core

__all__ = ["comm_from_mpi", "local_rank", "to_op"]

_MPI_OPS = ((MPI.SUM, pyhccl.SUM), (MPI.PROD, pyhccl.PROD),
            (MPI.MAX, pyhccl.MAX), (MPI.MIN, pyhccl.MIN))


def to_op(op):
    """Convert an mpi4py op (MPI.SUM/PROD/MAX/MIN) or any pyhccl op-like value to a ReduceOp.

    Raises:
        ValueError: an MPI op HCCL has no reduction for (e.g. MPI.LAND).
        TypeError: `op` is no op at all.
    """
    if isinstance(op, MPI.Op):
        for mpi_op, red in _MPI_OPS:
            if op == mpi_op:
                return red
        raise ValueError(f"MPI op {op!r} has no HCCL equivalent "
                         "(only MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN)")
    return pyhccl.as_op(op)


def local_rank(mpi_comm=None):
    """Return this process's rank among the ranks of `mpi_comm` on the same node.

    Collective over `mpi_comm` (default MPI.COMM_WORLD).
    """
    if mpi_comm is None:
        mpi_comm = MPI.COMM_WORLD
    node = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_rank()
    finally:
        node.Free()


def comm_from_mpi(mpi_comm=None, device=None, config=None):
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
        HcclError: creating the root info or the communicator failed (on the
            ranks where it failed; a root-info failure is raised on all ranks).
    """
    if mpi_comm is None:
        mpi_comm = MPI.COMM_WORLD
    if mpi_comm.Is_inter():
        raise TypeError("comm_from_mpi: intercommunicators are not supported")
    if device is None:
        lrank = local_rank(mpi_comm)      # collective: run on every rank alike
        if _core._explicit_device_id() is None:
            device = lrank % max(pyhccl.device_count(), 1)
    if device is not None:
        pyhccl.set_device(device)
    rank = mpi_comm.Get_rank()
    size = mpi_comm.Get_size()
    payload = None
    if rank == 0:
        try:
            payload = bytes(pyhccl.RootInfo.create())
        except Exception as exc:       # every rank must learn of the failure
            payload = exc
    payload = mpi_comm.bcast(payload, root=0)
    if isinstance(payload, BaseException):
        raise payload
    return pyhccl.Comm(size, pyhccl.RootInfo.from_bytes(payload), rank, config)
