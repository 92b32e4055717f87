"""A user script that misuses pyhccl: mypy --strict must flag every line marked `# E: code`.

Never run: tests/test_static.py type-checks it and compares the reported lines.
"""

import numpy as np
from mpi4py import MPI

import pyhccl
from pyhccl.mpi import comm_from_mpi, to_op


def misuse() -> None:
    comm = comm_from_mpi(MPI.COMM_WORLD, device="0")  # E: arg-type
    stream = pyhccl.Stream(priority="high")  # E: arg-type
    buf = pyhccl.zeros(4, "float32")
    comm.all_reduce(buf, None, "sum", stream)  # E: call-arg
    comm.all_reduce(buf, stream=3)  # E: arg-type
    comm.broadcast(buf, root="0")  # E: arg-type
    comm.allreduce(buf)  # E: attr-defined
    comm.rank = 3  # E: misc
    comm.batch_send_recv([("send", buf)])  # E: list-item
    stream.synchronize(timeout="1s")  # E: arg-type
    pyhccl.Event().elapsed_time(stream)  # E: arg-type
    size: str = comm.size  # E: assignment
    err: pyhccl.HcclError = pyhccl.AclError(1)  # E: assignment
    op: int = to_op(MPI.SUM)
    host: np.ndarray = buf.get()
    count: int = buf.shape  # E: assignment
    # buffers, ops and dtypes (issue 18 item 7: these were Any, so mypy let all of them through)
    comm.all_reduce(buf, "sum", stream)  # E: arg-type
    comm.all_reduce(buf, op=stream)  # E: arg-type
    comm.reduce_scatter(buf, buf, "avg")  # E: arg-type
    comm.reduce(buf, op=MPI.COMM_WORLD)  # E: arg-type
    comm.all_reduce("abc")  # E: type-var
    comm.broadcast(["x", "y"])  # E: type-var
    comm.send(7, 1)  # E: type-var
    comm.all_gather(buf, None)  # E: type-var
    comm.all_gather_v(buf, buf, [1.5, 2.0])  # E: list-item
    comm.all_reduce(buf, dtype=[4])  # E: arg-type
    host2: np.ndarray = comm.all_reduce(buf)  # E: arg-type
    state: int = comm.flight_record()[0]["state"]  # E: assignment
    comm.flight_record()[0]["status"]  # E: typeddict-item
    buf.fill([1, 2])  # E: arg-type
    print(size, err, op, host, count, host2, state)
