"""ProcessGroupPyhccl: the c10d operations of torch.distributed on a pyhccl Comm.

Each group owns a communicator and a Stream. A call checks its tensors,
enqueues the collective on the stream and returns a PyhcclWork at once
(async_op=True is asynchronous for real). The class is put together here from
its parts: _core.py (GroupCore: state, stream order, completion, errors,
release), _collectives.py (the collectives) and _p2p.py (send and recv, held
and posted as one batch).
"""

from ._collectives import Collectives
from ._core import BACKEND_NAME
from ._p2p import PointToPoint

__all__ = ["BACKEND_NAME", "ProcessGroupPyhccl"]


class ProcessGroupPyhccl(Collectives, PointToPoint):
    """A torch.distributed process group on one pyhccl communicator."""
