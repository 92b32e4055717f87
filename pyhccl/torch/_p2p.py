"""PointToPoint: send and recv of a pyhccl process group (a GroupCore mixin).

Sends and receives are held until the group's next call or wait and then
posted together as one HcclBatchSendRecv (GroupCore._flush), which is how
batch_isend_irecv's list becomes one batch that cannot deadlock.
"""

from typing import Any, Callable, Optional

from ._core import GroupCore, _one, _serial
from ._dtypes import as_bytes
from ._work import PyhcclWork


class PointToPoint(GroupCore):
    """send, recv: held, then posted as one batch by the group's next call or wait."""

    @_serial
    def _post(self, kind: str, tensors: Any, peer: int, api: str) -> PyhcclWork:
        t = _one(tensors, api)
        if self._closed:
            raise ValueError(f"{api}: the pyhccl process group is shut down")
        if self._failed is not None:
            raise self._failed
        p = int(peer)
        if not 0 <= p < self._size:
            raise ValueError(f"{api}: peer rank {p} is not in the group of {self._size} ranks")
        c = self._input(t) if kind == "send" else self._inout(t, read=False)
        back: Optional[Callable[[], None]] = None
        if c is not t:
            def copy_back() -> None:
                t.copy_(c)
            back = copy_back if kind == "recv" else None
        work = PyhcclWork(self, 0, [t], api)
        self._p2p.append((kind, as_bytes(c), p, work, back))
        return work

    def send(self, tensors: Any, dst: int, tag: int = 0) -> PyhcclWork:
        return self._post("send", tensors, dst, "send")

    def recv(self, tensors: Any, src: int, tag: int = 0) -> PyhcclWork:
        return self._post("recv", tensors, src, "recv")

    def recv_anysource(self, tensors: Any, tag: int = 0) -> PyhcclWork:
        raise RuntimeError("recv: receiving from any source (src=None) is not supported by "
                           "the pyhccl backend: HCCL has no wildcard receive; pass src")
