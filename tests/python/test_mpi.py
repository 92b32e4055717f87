"""pyhccl.mpi: communicators from mpi4py (world, split, dup) and mpi4py ops."""

import numpy as np
import pytest
from mpi4py import MPI

import pyhccl
from conftest import assert_all
from pyhccl.mpi import comm_from_mpi, local_rank, op_name, to_op

pytestmark = pytest.mark.mpi


def check_comm(comm, mpi_comm):
    """All-reduce the MPI ranks over `comm` and compare with MPI's own answer."""
    x = pyhccl.full(10, mpi_comm.Get_rank() + 1, "int64")
    comm.all_reduce(x)
    pyhccl.current_stream().synchronize()
    expect = mpi_comm.allreduce(mpi_comm.Get_rank() + 1)
    return (comm.rank == mpi_comm.Get_rank() and comm.size == mpi_comm.Get_size()
            and bool(np.all(x.get() == expect)))


def test_comm_from_world():
    with comm_from_mpi() as comm:
        ok = check_comm(comm, MPI.COMM_WORLD)
    assert_all(ok and comm.is_destroyed, "comm_from_mpi(COMM_WORLD) misbehaved")


def test_comm_from_split_even_odd():
    world = MPI.COMM_WORLD
    sub = world.Split(world.Get_rank() % 2, world.Get_rank())
    try:
        comm = comm_from_mpi(sub, config={"name": f"split{world.Get_rank() % 2}"})
        ok = check_comm(comm, sub) and comm.name == f"split{world.Get_rank() % 2}"
        comm.destroy()
    finally:
        sub.Free()
    assert_all(ok, "comm_from_mpi on a Split communicator misbehaved")


def test_comm_from_dup_with_config():
    dup = MPI.COMM_WORLD.Dup()
    try:
        cfg = pyhccl.CommConfig(buffer_size=64, deterministic=True, exec_timeout=60)
        comm = pyhccl.Comm.from_mpi(dup, config=cfg)
        ok = check_comm(comm, dup)
        comm.destroy()
    finally:
        dup.Free()
    assert_all(ok, "comm_from_mpi on a Dup communicator misbehaved")


def test_comm_from_self_and_explicit_device():
    dev = pyhccl.get_device()
    with comm_from_mpi(MPI.COMM_SELF, device=dev) as comm:
        assert (comm.rank, comm.size, comm.device) == (0, 1, dev)
    assert pyhccl.get_device() == dev


def test_local_rank():
    lr = local_rank()
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    assert lr == node.Get_rank()
    node.Free()


def _op_in_collective(op):
    with comm_from_mpi(MPI.COMM_SELF) as comm:
        comm.all_reduce(np.zeros(2), op=op)


def test_to_op():
    assert to_op(MPI.SUM) is pyhccl.SUM
    assert to_op(MPI.PROD) is pyhccl.PROD
    assert to_op(MPI.MAX) is pyhccl.MAX
    assert to_op(MPI.MIN) is pyhccl.MIN
    assert to_op("max") is pyhccl.MAX and to_op(pyhccl.MIN) is pyhccl.MIN
    assert pyhccl.as_op(MPI.PROD) is pyhccl.PROD
    for bad, name in ((MPI.LAND, "MPI.LAND"), (MPI.BOR, "MPI.BOR"),
                      (MPI.MAXLOC, "MPI.MAXLOC"), (MPI.REPLACE, "MPI.REPLACE")):
        with pytest.raises(ValueError, match=f"^MPI op {name} has no HCCL equivalent"):
            to_op(bad)
        with pytest.raises(ValueError, match=f"^all_reduce: MPI op {name} has no HCCL"):
            _op_in_collective(bad)            # the collectives name the call as well
    assert op_name(MPI.LAND) == "MPI.LAND" and op_name(MPI.SUM) == "MPI.SUM"
    user = MPI.Op.Create(lambda a, b, t: None, commute=True)
    try:
        assert op_name(user).startswith("<mpi4py.MPI.Op")
        with pytest.raises(ValueError, match="^MPI op <mpi4py.MPI.Op"):
            to_op(user)
    finally:
        user.Free()
    for bad in (MPI.COMM_WORLD, MPI.INT):     # mpi4py objects that are no ops
        with pytest.raises(TypeError):
            to_op(bad)
        with pytest.raises(TypeError):
            pyhccl.as_op(bad)


@pytest.mark.parametrize("mpi_op, np_op", [(MPI.SUM, np.sum), (MPI.PROD, np.prod),
                                           (MPI.MAX, np.max), (MPI.MIN, np.min)])
def test_collectives_accept_mpi_ops(pair, mpi_op, np_op):
    comm, mpi = pair
    mine = np.array([comm.rank + 1, 2, 5 - comm.rank, 1], np.float64)
    out = np.zeros(4)
    comm.all_reduce(mine, out, op=mpi_op)
    rs = np.zeros(1)
    comm.reduce_scatter(np.tile(mine[:1], comm.size), rs, op=mpi_op)
    pyhccl.current_stream().synchronize()
    expect = np_op(np.stack(mpi.allgather(mine)), axis=0)
    assert_all(np.array_equal(out, expect) and rs[0] == expect[0], "wrong result with MPI op")
    # the same values through mpi4py agree
    ref = np.empty_like(mine)
    mpi.Allreduce(mine, ref, op=mpi_op)
    assert_all(np.array_equal(ref, out), "differs from mpi4py")
