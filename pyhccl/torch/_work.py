"""The Work a pyhccl backend call returns: completion, errors and futures.

Every collective of one process group is enqueued on that group's pyhccl
Stream and numbered (seq). Completion is tracked per group as the highest
number known done (`_done`): wait() synchronises the stream (the runtime may
run the queued work on the waiting thread, so a blocking call costs one
hand-off less), is_completed() asks the stream, and a future is completed by a
host function enqueued behind the collective, which runs in stream order on the
runtime's worker thread, so DDP's reducer and communication hooks see their
futures complete without anybody calling wait().
"""

import datetime
from typing import TYPE_CHECKING, Any, List, Optional

import torch
import torch.distributed as dist
from torch.futures import Future

if TYPE_CHECKING:
    from ._core import GroupCore


class PyhcclWork(dist.Work):  # type: ignore[misc, unused-ignore]
    """One call's pending work (torch.distributed.Work)."""

    _fut: "Optional[Future[List[torch.Tensor]]]" = None     # made by get_future()

    def __init__(self, pg: "GroupCore", seq: int, result: List[torch.Tensor],
                 opname: str) -> None:
        super().__init__()
        self._pg = pg
        self.seq = seq                  # 0: not enqueued yet (a p2p op waiting for its batch)
        self._result = result
        self._opname = opname

    # -- state -------------------------------------------------------------------
    def _error(self) -> Optional[BaseException]:
        pg = self._pg
        if pg._failed is not None and self.seq >= pg._failed_from:
            return pg._failed
        return None

    def is_completed(self) -> bool:
        pg = self._pg
        if self.seq == 0:
            pg._flush()
        if self.seq <= pg._done:
            return True
        pg._poll()
        return self.seq <= pg._done

    def is_success(self) -> bool:
        return self.is_completed() and self._error() is None

    def exception(self) -> Optional[BaseException]:
        return self._error() if self.is_completed() else None

    def wait(self, timeout: Any = None) -> bool:
        """Block until the work is done; raise its error (naming rank and collective)."""
        pg = self._pg
        seq = self.seq
        if seq == 0:
            pg._flush()
            seq = self.seq
        if seq > pg._done:
            pg._sync(self._opname, _seconds(timeout))
        if pg._failed is not None and seq >= pg._failed_from:
            raise pg._failed
        return True

    def synchronize(self) -> None:
        self.wait()

    def result(self) -> List[torch.Tensor]:
        return self._result

    def source_rank(self) -> int:
        return -1

    # -- futures -------------------------------------------------------------------
    def get_future(self) -> "Future[List[torch.Tensor]]":
        """A Future that completes with the output tensors when the work completes."""
        if self._fut is None:
            fut: Future[List[torch.Tensor]] = Future()
            self._fut = fut
            pg = self._pg
            if self.seq == 0:
                pg._flush()
            if self.seq <= pg._done:
                self._settle()
            else:
                try:
                    pg._stream.launch_host_func(self._on_stream)
                except Exception as e:              # the stream is gone: fail the future
                    fut.set_exception(pg._wrap(e, self._opname))
        return self._fut

    def _on_stream(self) -> None:
        # Runs on the runtime's worker thread after the collective; never raises.
        try:
            self._pg._seen_done(self.seq)
            self._settle()
        except BaseException as e:   # noqa: B036 (a host function must not raise)
            fut = self._fut
            if fut is not None and not fut.done():
                fut.set_exception(e)

    def _settle(self) -> None:
        fut = self._fut
        if fut is None or fut.done():
            return
        err = self._error()
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(self._result)


def _seconds(timeout: Any) -> Optional[float]:
    """torch passes timedelta(0) or a negative one for 'no limit'."""
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        s = timeout.total_seconds()
    else:
        s = float(timeout)
    return s if s > 0 else None
