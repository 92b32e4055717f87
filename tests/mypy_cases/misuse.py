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
    print(size, err, op, host, count)
