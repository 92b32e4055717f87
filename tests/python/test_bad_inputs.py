"""Bad arguments raise TypeError / ValueError / BufferError before any C call, with a
message naming the call and the argument. (Every rank passes the same bad input, so no
rank is left waiting in a collective.)"""

import numpy as np
import pytest
from mpi4py import MPI

import pyhccl
import pyhccl.mpi
from conftest import DEVICE, assert_all

pytestmark = pytest.mark.mpi


def f32(n, value=1.0):
    return np.full(n, value, np.float32)


def test_unknown_dtype(pair):
    comm, _ = pair
    with pytest.raises(TypeError, match="all_reduce: sendbuf has dtype complex64"):
        comm.all_reduce(np.zeros(4, np.complex64))
    with pytest.raises(TypeError, match="all_reduce: sendbuf has dtype bool"):
        comm.all_reduce(np.zeros(4, bool))
    with pytest.raises(TypeError, match="all_reduce: unknown dtype"):
        comm.all_reduce(f32(4), dtype="nonsense")
    with pytest.raises(ValueError, match="all_reduce: unknown HCCL data type 13"):
        comm.all_reduce(f32(4), dtype=13)


def test_bad_op(pair):
    comm, _ = pair
    with pytest.raises(ValueError, match="all_reduce: unknown reduction op 'avg'"):
        comm.all_reduce(f32(4), op="avg")
    with pytest.raises(TypeError, match="all_reduce: op must be"):
        comm.all_reduce(f32(4), op=1.5)
    with pytest.raises(ValueError, match="reduce_scatter: MPI op"):
        comm.reduce_scatter(f32(4 * comm.size), f32(4), op=MPI.LAND)


def test_wrong_sizes(pair):
    comm, _ = pair
    n = comm.size
    with pytest.raises(ValueError, match="all_reduce: recvbuf has 5 elements, sendbuf 4"):
        comm.all_reduce(f32(4), f32(5))
    with pytest.raises(ValueError, match=f"all_gather: recvbuf has {4 * n + 1} elements"):
        comm.all_gather(f32(4), f32(4 * n + 1))
    with pytest.raises(ValueError, match=f"reduce_scatter: sendbuf has {4 * n - 1} elements"):
        comm.reduce_scatter(f32(4 * n - 1), f32(4))
    with pytest.raises(ValueError, match="scatter: sendbuf has"):
        comm.scatter(f32(3 * n + 1), f32(3), root=comm.rank)
    if n > 1:
        with pytest.raises(ValueError, match="all_to_all: 5 elements do not split"):
            comm.all_to_all(f32(5), f32(5))
    with pytest.raises(ValueError, match="all_to_all: sendbuf has 8 elements, recvbuf 4"):
        comm.all_to_all(f32(8), f32(4))
    with pytest.raises(ValueError, match="whole number of BFLOAT16"):
        comm.all_reduce(np.zeros(3, np.uint8), dtype=pyhccl.BFLOAT16)


def test_mismatched_dtypes(pair):
    comm, _ = pair
    with pytest.raises(TypeError, match="all_reduce: sendbuf dtype float32 does not match "
                                        "recvbuf dtype int32"):
        comm.all_reduce(f32(4), np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="all_gather: sendbuf dtype"):
        comm.all_gather(pyhccl.zeros(2, "float64"), pyhccl.zeros(2 * comm.size, "float32"))


def test_read_only_output(pair):
    comm, _ = pair
    ro = f32(4)
    ro.flags.writeable = False
    with pytest.raises(BufferError, match="all_reduce: recvbuf is read-only"):
        comm.all_reduce(f32(4), ro)
    with pytest.raises(BufferError, match="all_reduce: sendbuf is read-only"):
        comm.all_reduce(ro)                # in place: sendbuf is the output
    with pytest.raises(BufferError, match="all_gather: recvbuf is read-only"):
        comm.all_gather(f32(4), np.frombuffer(bytes(16 * comm.size), np.float32))
    comm.all_reduce(ro, f32(4))            # a read-only input is fine
    pyhccl.current_stream().synchronize()


def test_immutable_outputs_are_refused(pair):
    """An input whose memory pyhccl cannot write back (a numpy scalar, bytes, a
    memoryview of bytes) is refused as an output of every collective; it once came
    back unchanged, with no error. (A broadcast's or reduce's root reads its buffer
    only, so there it is accepted; every rank here must refuse alike.)"""
    comm, _ = pair
    n, size, rank = 2, comm.size, comm.rank
    scalar = np.float32(rank + 1)
    with pytest.raises(BufferError, match="all_reduce: sendbuf is a numpy scalar"):
        comm.all_reduce(scalar)
    with pytest.raises(BufferError, match="reduce_scatter: recvbuf is a numpy scalar"):
        comm.reduce_scatter(f32(size), np.float32(0))
    immutable = [bytes(4 * n), memoryview(bytes(4 * n))]
    for buf in immutable:
        kind = type(buf).__name__
        with pytest.raises(BufferError, match="all_reduce: sendbuf is read-only"):
            comm.all_reduce(buf, dtype="float32")
        with pytest.raises(BufferError, match="reduce_scatter: recvbuf is read-only"):
            comm.reduce_scatter(f32(n * size), buf, dtype="float32")
        with pytest.raises(BufferError, match="all_gather: recvbuf is read-only"):
            comm.all_gather(f32(1), bytes(4 * size), dtype="float32")
        with pytest.raises(BufferError, match="all_to_all: recvbuf is read-only"):
            comm.all_to_all(f32(n * size), bytes(4 * n * size), dtype="float32")
        with pytest.raises(BufferError, match="recv: buf is read-only"):
            comm.recv(buf, 0, dtype="float32")
        assert kind                     # both kinds went through every check
    # As inputs they are fine: a numpy scalar, and bytes read as their own memory.
    out = np.zeros(1, np.float32)
    comm.all_reduce(scalar, out)
    total = np.zeros(n, np.float32)
    comm.all_reduce(np.full(n, rank + 1, np.float32).tobytes(), total, dtype="float32")
    pyhccl.current_stream().synchronize()
    want = size * (size + 1) / 2
    assert_all(out[0] == want and (total == want).all(), f"{out} {total}")


def test_non_contiguous(pair):
    comm, _ = pair
    with pytest.raises(BufferError, match="all_reduce: sendbuf is not contiguous"):
        comm.all_reduce(f32(8)[::2], f32(4))
    with pytest.raises(BufferError, match="broadcast: buf is not contiguous"):
        comm.broadcast(pyhccl.zeros((4, 4))[:, 1])
    with pytest.raises(BufferError, match="all_gather: recvbuf is not contiguous"):
        comm.all_gather(pyhccl.zeros(2), pyhccl.zeros(4 * comm.size)[::2])


def test_not_a_buffer(pair):
    comm, _ = pair
    with pytest.raises(TypeError, match="all_reduce: sendbuf must be a DeviceArray or a host "
                                        "array"):
        comm.all_reduce([1.0, 2.0])
    with pytest.raises(TypeError, match="broadcast: buf must be"):
        comm.broadcast(None)
    with pytest.raises(TypeError, match="all_reduce: stream must be a pyhccl.Stream"):
        comm.all_reduce(f32(4), stream=0)


def test_overlapping_buffers(pair):
    comm, _ = pair
    a = pyhccl.zeros(10, "float32")
    with pytest.raises(ValueError, match="all_reduce: sendbuf and recvbuf overlap"):
        comm.all_reduce(a[0:6], a[4:10])


def test_root_out_of_range(pair):
    comm, _ = pair
    n = comm.size
    with pytest.raises(ValueError, match=f"broadcast: root {n + 1} out of range for a "
                                         f"communicator of size {n}"):
        comm.broadcast(f32(4), root=n + 1)
    with pytest.raises(ValueError, match="reduce: root -1 out of range"):
        comm.reduce(f32(4), root=-1)
    with pytest.raises(ValueError, match=f"scatter: root {n} out of range"):
        comm.scatter(f32(4 * n), f32(4), root=n)
    with pytest.raises(ValueError, match=f"send: peer {n} out of range"):
        comm.send(f32(4), n)
    with pytest.raises(ValueError, match=f"recv: peer {n + 3} out of range"):
        comm.recv(f32(4), n + 3)
    with pytest.raises(TypeError, match="broadcast: root must be an int"):
        comm.broadcast(f32(4), root="0")


def test_destroyed_communicator():
    comm = pyhccl.mpi.comm_from_mpi(MPI.COMM_SELF)
    comm.destroy()
    comm.destroy()                         # second destroy is a no-op
    assert comm.is_destroyed and repr(comm) == "Comm(destroyed)"
    for call in (lambda: comm.all_reduce(f32(4)), lambda: comm.broadcast(f32(4)),
                 lambda: comm.all_gather(f32(1), f32(1)), lambda: comm.barrier(),
                 lambda: comm.reduce_scatter(f32(1), f32(1)), lambda: comm.name):
        with pytest.raises(ValueError, match="the communicator is destroyed"):
            call()


def test_stream_of_another_device(pair):
    comm, _ = pair
    if pyhccl.device_count() < 2:
        pytest.skip("needs two devices")
    other = (DEVICE + 1) % pyhccl.device_count()
    pyhccl.set_device(other)
    try:
        s = pyhccl.Stream()
        foreign = pyhccl.zeros(4, "float32")
    finally:
        pyhccl.set_device(DEVICE)
    with pytest.raises(ValueError, match=f"all_reduce: stream is on device {other}, the "
                                         f"communicator on device {DEVICE}"):
        comm.all_reduce(f32(4), stream=s)
    with pytest.raises(ValueError, match=f"all_reduce: sendbuf is on device {other}"):
        comm.all_reduce(foreign)
    pyhccl.set_device(other)
    try:
        with pytest.raises(ValueError, match=f"the current device is {other}"):
            comm.all_reduce(f32(4))
    finally:
        pyhccl.set_device(DEVICE)
    s.destroy()


def test_comm_constructor_arguments():
    ri = bytes(4108)
    with pytest.raises(ValueError, match="Comm: rank 2 out of range for 2 ranks"):
        pyhccl.Comm(2, ri, 2)
    with pytest.raises(ValueError, match=r"Comm: nranks must be between 1 and 2\*\*32 - 1, not 0"):
        pyhccl.Comm(0, ri, 0)
    with pytest.raises(ValueError, match="Comm: nranks must be between 1 and 2.*not 4294967296"):
        pyhccl.Comm(2**32, ri, 0)
    with pytest.raises(pyhccl.HcclError, match=r"hcclBufferSize is 4294967280 \(MB\); it must "
                       r"be between 1 and 1048576"):
        pyhccl.Comm(1, pyhccl.RootInfo.create(), 0, config={"buffer_size": 0xfffffff0})
    with pytest.raises(ValueError, match=r"empty: shape \(1099511627776, 1099511627776\) of "
                       "float64 is too large"):
        pyhccl.empty((2**40, 2**40))
    with pytest.raises(TypeError, match="Comm: nranks must be an int"):
        pyhccl.Comm("2", ri, 0)
    with pytest.raises(ValueError, match="root info must be 4108 bytes"):
        pyhccl.Comm(1, b"abc", 0)
    with pytest.raises(TypeError, match="unknown config keys"):
        pyhccl.Comm(1, ri, 0, config={"bogus": 1})
    with pytest.raises(ValueError, match="config name must be at most 127 bytes"):
        pyhccl.Comm(1, ri, 0, config={"name": "x" * 200})
    with pytest.raises(TypeError, match="config buffer_size must be an int"):
        pyhccl.Comm(1, ri, 0, config=pyhccl.CommConfig(buffer_size="big"))
    with pytest.raises(TypeError, match="config must be a CommConfig"):
        pyhccl.Comm(1, ri, 0, config=[1])


def test_collectives_run_on_a_comm_only():
    """The collectives live in Comm's stateless base; on anything else they refuse, not crash."""
    from pyhccl import _core
    with pytest.raises(TypeError, match="Comm"):
        _core._Collectives().all_reduce(f32(4))
