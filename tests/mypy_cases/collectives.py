"""Correct calls of every collective: mypy --strict must accept them all, and each returns
the type of the output buffer it was given (assert_type).

tests/test_static.py type-checks it (with every tests/mypy_cases file but misuse.py), and
tests/test_stub_cases.py runs check_all() at 1, 2 and 4 ranks, so the runtime accepts what
the stub promises. Buffers: DeviceArray, numpy arrays and scalars, memoryview, bytes,
bytearray, array.array and a DLPack exporter; ops: ReduceOp, names, mpi4py ops; dtypes:
DataType, names, numpy types.
"""

import array
from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt
from mpi4py import MPI
from typing_extensions import assert_type

import pyhccl

F32 = npt.NDArray[np.float32]
DA = pyhccl.DeviceArray


class Exporter:
    """A CPU DLPack exporter that is no numpy array, as a torch.Tensor is."""

    def __init__(self, n: int) -> None:
        self.data = np.zeros(n, np.float32)

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        return self.data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (1, 0)


def device_arrays(comm: pyhccl.Comm, s: pyhccl.Stream) -> None:
    n, r = comm.size, comm.rank
    x = pyhccl.zeros(4 * n, pyhccl.FLOAT32)
    y = pyhccl.empty_like(x)
    block = pyhccl.zeros(4, "float32")
    assert_type(comm.all_reduce(x), DA)
    assert_type(comm.all_reduce(x, y, pyhccl.SUM, stream=s), DA)
    assert_type(comm.all_reduce(x, None, "max", dtype=pyhccl.BFLOAT16), DA)
    assert_type(comm.broadcast(x, 0, stream=s), DA)
    assert_type(comm.all_gather(block, x, stream=None), DA)
    assert_type(comm.reduce_scatter(x, block, pyhccl.ReduceOp.PROD), DA)
    assert_type(comm.reduce(x, y, "min", 0), DA)
    assert_type(comm.reduce(x, op=MPI.SUM, root=n - 1), DA)
    assert_type(comm.scatter(x, block, 0), DA)
    src: Optional[DA] = x if r == 0 else None         # only the root's sendbuf is read
    assert_type(comm.scatter(src, block, root=0), DA)
    assert_type(comm.all_to_all(x, y), DA)
    counts = [4] * n
    displs = list(range(0, 4 * n, 4))
    assert_type(comm.all_gather_v(block, x, counts), DA)
    assert_type(comm.all_gather_v(block, x, np.array(counts), displs), DA)
    assert_type(comm.reduce_scatter_v(x, block, counts, None, MPI.MAX), DA)
    assert_type(comm.all_to_all_v(x, y, counts, counts), DA)
    assert_type(comm.all_to_all_vc(x, y, [[4] * n] * n), DA)
    assert_type(comm.all_to_all_vc(x, y, np.full((n, n), 4)), DA)
    comm.barrier(stream=s)
    host: F32 = np.empty(4 * n, np.float32)
    assert_type(x.copy_to(host), F32)
    if n > 1:
        right, left = (r + 1) % n, (r - 1) % n
        inbox = pyhccl.empty_like(block)
        with pyhccl.group():
            assert_type(comm.send(block, right, stream=s, dtype="uint16"), DA)
            assert_type(comm.recv(inbox, left, stream=s, dtype=pyhccl.UINT16), DA)
        comm.batch_send_recv([("send", block, right), ("recv", inbox, left)], stream=s)
        items: List[Tuple[str, DA, int]] = [("SEND", block, right), ("Recv", inbox, left)]
        comm.batch_send_recv(items, stream=s, dtype=np.float32)
    s.synchronize()


def host_arrays(comm: pyhccl.Comm) -> None:
    n, r = comm.size, comm.rank
    a: F32 = np.ones(4 * n, np.float32)
    b: F32 = np.empty(4 * n, np.float32)
    m = memoryview(bytearray(16 * n))               # uint8; dtype= reads it as float32
    mf = memoryview(bytearray(16)).cast("f")
    ba = bytearray(16 * n)
    ar = array.array("f", [0.0] * (4 * n))
    counts = [4] * n
    displs = list(range(0, 4 * n, 4))
    assert_type(comm.all_reduce(a), F32)
    assert_type(comm.all_reduce(a, b, pyhccl.MAX), F32)
    assert_type(comm.all_reduce(m, op=MPI.PROD, dtype=pyhccl.FLOAT32), memoryview)
    assert_type(comm.all_reduce(ba, dtype="float32"), bytearray)
    assert_type(comm.all_reduce(ar, ar), "array.array[float]")
    assert_type(comm.broadcast(m, 0), memoryview)
    assert_type(comm.all_gather(a[:4], b), F32)
    assert_type(comm.all_gather(bytes(16), m), memoryview)
    assert_type(comm.reduce_scatter(m, bytearray(16), "sum"), bytearray)
    assert_type(comm.reduce(a, b, pyhccl.SUM, 0), F32)
    assert_type(comm.scatter(a, mf, 0), "memoryview[float]")
    assert_type(comm.all_to_all(a, b), F32)
    assert_type(comm.all_gather_v(a[:4], m, counts, dtype=pyhccl.FLOAT32), memoryview)
    assert_type(comm.reduce_scatter_v(a, b[:4], counts, displs, op="prod"), F32)
    assert_type(comm.all_to_all_v(m, b, counts, counts, displs, displs, dtype=np.float32), F32)
    assert_type(comm.all_to_all_vc(a, ar, [4] * (n * n)), "array.array[float]")
    if n > 1:
        right, left = (r + 1) % n, (r - 1) % n
        inbox = bytearray(4)
        with pyhccl.group():
            assert_type(comm.send(b"abcd", right, dtype=pyhccl.UINT8), bytes)
            assert_type(comm.recv(inbox, left, dtype=np.uint8), bytearray)
        comm.batch_send_recv([("send", a[:4], right), ("recv", mf, left)])
    pyhccl.current_stream().synchronize()


def dlpack_and_mixed(comm: pyhccl.Comm) -> None:
    n = comm.size
    e = Exporter(4)
    assert_type(comm.all_reduce(e), Exporter)
    out: F32 = np.empty(4 * n, np.float32)
    assert_type(comm.all_gather(e, out), F32)
    assert_type(comm.all_gather(np.ones(4, np.float32), Exporter(4 * n)), Exporter)
    d = pyhccl.zeros(8)
    h = np.zeros(8)
    # sendbuf and recvbuf of two kinds: the result is recvbuf, typed as any buffer
    mixed = comm.all_reduce(h, d)
    assert isinstance(mixed, DA)
    comm.all_reduce(np.float32(1.0), np.zeros(1, np.float32))   # a numpy scalar: an input
    pyhccl.current_stream().synchronize()


def ops_and_dtypes() -> None:
    for op in (pyhccl.SUM, "sum", "prod", "product", "max", "min", MPI.MIN, 0, "SUM"):
        assert_type(pyhccl.as_op(op), pyhccl.ReduceOp)
    for dt in (pyhccl.FLOAT16, "bf16", np.float32, np.dtype(np.int8), float, int, 4,
               pyhccl.bfloat16):
        assert_type(pyhccl.as_datatype(dt), pyhccl.DataType)
    assert_type(pyhccl.empty((2, 3), np.float32), DA)
    assert_type(pyhccl.zeros(3, dtype="fp16").view(pyhccl.UINT16), DA)
    x = pyhccl.full((2, 3), 1.5, "float32")
    assert_type(x.fill(np.float32(2)).set(np.arange(6).reshape(2, 3)).fill(0), DA)
    flat = x.reshape(3, 2).reshape((6,))
    assert_type(flat.copy_from(array.array("f", [0.5] * 6)).copy_from(pyhccl.ones(6, "f4")), DA)
    assert_type(pyhccl.float_to_bfloat16([1.0, 2.5]), npt.NDArray[np.uint16])
    assert_type(pyhccl.bfloat16_to_float(np.zeros(2, np.uint16)), npt.NDArray[np.float32])


def records(comm: pyhccl.Comm) -> None:
    for rec in comm.flight_record():
        assert_type(rec["dtype"], pyhccl.DataType)
        assert_type(rec["reduce_op"], pyhccl.ReduceOp)
        assert_type(rec["start_us"], Optional[int])
        assert rec["state"] in ("queued", "running", "done", "failed")


def check_all(comm: pyhccl.Comm) -> None:
    """Every case above, on `comm` (any size), with device arrays on a stream of its own."""
    with pyhccl.Stream() as s:
        device_arrays(comm, s)
    host_arrays(comm)
    dlpack_and_mixed(comm)
    ops_and_dtypes()
    records(comm)
