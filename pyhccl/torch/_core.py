"""GroupCore: a pyhccl process group's state and the machinery every call shares.

A group owns a communicator and a Stream. Its calls are numbered as they are
enqueued (`_enq`); completion is the highest number known done (`_done`), and
the first failure is kept and raised by every later call and wait. Work that
must happen in stream order around a collective (copying a non-contiguous
tensor in or out, scaling, integer AVG's division) runs as a host function on
the stream when the stream is busy, and at once when it is idle. Held sends and
receives are posted here too (`_flush`), since every call and every wait posts
them first. The operations themselves are the mixins of _collectives.py and
_p2p.py, put together as ProcessGroupPyhccl in _backend.py.
"""

import datetime
import functools
import threading
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar

import numpy as np
import torch
import torch.distributed as dist

import pyhccl

from ._dtypes import Reduction, check_tensor
from ._work import PyhcclWork

# Unsigned dtypes torch cannot divide (integer AVG divides them as int64).
_NO_DIV = tuple(getattr(torch, n) for n in ("uint16", "uint32") if hasattr(torch, n))
_DistError = getattr(dist, "DistBackendError", RuntimeError)

BACKEND_NAME = "pyhccl"

_F = TypeVar("_F", bound=Callable[..., Any])


def _serial(fn: _F) -> _F:
    """One call at a time per group: a call's enqueues and its number stay together,
    so the numbers follow the stream's order when several threads call."""
    @functools.wraps(fn)
    def run(self: "GroupCore", *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return fn(self, *args, **kwargs)
    return run  # type: ignore[return-value]


def _one(tensors: Any, api: str, what: str = "tensor") -> torch.Tensor:
    """The single tensor of a c10d tensor list (one tensor per process)."""
    if isinstance(tensors, torch.Tensor):
        t = tensors
    else:
        if len(tensors) != 1:
            raise ValueError(f"{api}: the pyhccl backend takes one {what} per process, "
                             f"got {len(tensors)}")
        t = tensors[0]
    check_tensor(t, api, what)
    return t


class GroupCore(dist.ProcessGroup):  # type: ignore[misc, unused-ignore]
    """The state, ordering, completion and release of a pyhccl process group."""

    def __init__(self, rank: int, size: int, comm: pyhccl.Comm,
                 timeout: datetime.timedelta, global_ranks: Sequence[int]) -> None:
        super().__init__(rank, size)
        self._rank, self._size = rank, size
        self._comm = comm
        self._stream = pyhccl.Stream()
        self._timeout = timeout
        self._global_ranks = list(global_ranks) or list(range(size))
        self._group_name = ""
        self._enq = 0           # collectives enqueued (their seq numbers)
        self._done = 0          # highest seq known complete
        self._failed: Optional[BaseException] = None
        self._failed_from = 0   # works numbered from here on carry _failed
        self._p2p: List[Tuple[str, np.ndarray, int, PyhcclWork, Optional[Callable[[], None]]]] = []
        self._closed = False
        self._lock = threading.RLock()

    # ---- identity ---------------------------------------------------------------
    def getBackendName(self) -> str:
        return BACKEND_NAME

    def name(self) -> str:
        return BACKEND_NAME

    def _set_group_name(self, name: str) -> None:
        self._group_name = name
        super()._set_group_name(name)

    @property
    def group_name(self) -> str:
        # torch's own lookup asks a registered C++ backend, which a Python group has not.
        return self._group_name

    # The group is its own backend for every device: torch asks _get_backend(device)
    # for capabilities (batch_isend_irecv's coalescing check on torch 2.14).
    supports_coalescing = False
    supports_splitting = False

    def _get_backend(self, device: Any) -> "GroupCore":
        return self

    @property
    def comm(self) -> pyhccl.Comm:
        """The pyhccl communicator of this group (for mixing in pyhccl calls)."""
        return self._comm

    @property
    def stream(self) -> pyhccl.Stream:
        """The Stream this group's collectives are enqueued on."""
        return self._stream

    def __repr__(self) -> str:
        return (f"ProcessGroupPyhccl(rank={self._rank}, size={self._size}, "
                f"name={self._group_name!r})")

    # ---- completion and errors ----------------------------------------------------
    def _wrap(self, e: BaseException, opname: str) -> BaseException:
        if isinstance(e, _DistError) and str(e).startswith("pyhccl backend"):
            return e
        err = _DistError(f"pyhccl backend: {opname} failed on rank {self._rank} of group "
                         f"'{self._group_name}' ({self._size} ranks): {e}")
        err.__cause__ = e
        return err

    def _fail(self, e: BaseException, opname: str) -> None:
        if self._failed is None:
            self._failed = self._wrap(e, opname)
            self._failed_from = self._done + 1

    def _sync(self, opname: str, timeout: Optional[float]) -> None:
        """Wait for everything enqueued so far; record a failure."""
        enq = self._enq
        try:
            self._stream.synchronize(timeout)
        except pyhccl.AclError as e:
            if e.name == "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT":
                raise _DistError(f"pyhccl backend: {opname} on rank {self._rank} of group "
                                 f"'{self._group_name}' did not complete within {timeout} s "
                                 "(Work.wait timeout)") from e
            self._fail(e, opname)
        except pyhccl.Error as e:
            self._fail(e, opname)
        # No async_error() check here: it may come from a peer that failed after this
        # work completed (the stream reports the work's own error).
        if enq > self._done:
            self._done = enq

    def _poll(self) -> None:
        enq = self._enq
        try:
            idle = self._stream.query()
        except pyhccl.Error as e:
            self._fail(e, "a collective")
            idle = True
        if idle:
            self._seen_done(enq)

    def _seen_done(self, seq: int) -> None:
        """`seq` and all before it ran (called from a host function too)."""
        if self._failed is None and not self._comm.is_destroyed:
            err = self._comm.async_error()
            if err is not None:
                self._fail(err, "a collective")
        if seq > self._done:
            self._done = seq

    def _ordered(self, fn: Callable[[], None]) -> None:
        """Run `fn` after the work enqueued so far: now if the stream is idle."""
        if self._done < self._enq:
            self._poll()
        if self._done >= self._enq:
            fn()
        else:
            self._stream.launch_host_func(fn)

    def _after(self, fn: Callable[[], None]) -> None:
        """Run `fn` in stream order after the collective just enqueued, if it succeeded."""
        comm = self._comm

        def guarded() -> None:
            # After a failed collective the buffers hold no result: fail the stream
            # (wait() raises) instead of copying them out.
            err = comm.async_error()
            if err is not None:
                raise err
            fn()
        self._stream.launch_host_func(guarded)

    def _begin(self, api: str) -> None:
        if self._p2p:
            self._flush()
        if self._closed:
            raise ValueError(f"{api}: the pyhccl process group is shut down")
        if self._failed is not None:
            raise self._failed

    def _enqueued(self, api: str, result: List[torch.Tensor]) -> PyhcclWork:
        self._enq += 1
        return PyhcclWork(self, self._enq, result, api)

    # ---- tensors --------------------------------------------------------------------
    def _inout(self, t: torch.Tensor, read: bool = True) -> torch.Tensor:
        """A contiguous tensor to run on: `t` itself, or a copy (written back by _back)."""
        if t.is_contiguous():
            return t
        c = torch.empty_like(t, memory_format=torch.contiguous_format)
        if read:
            self._ordered(lambda: c.copy_(t))
        return c

    def _input(self, t: torch.Tensor, scale: Optional[float] = None) -> torch.Tensor:
        """A contiguous tensor holding `t`'s values (times `scale`), never `t` when scaled."""
        if scale is None and t.is_contiguous():
            return t
        c = torch.empty_like(t, memory_format=torch.contiguous_format)
        if scale is None:
            self._ordered(lambda: c.copy_(t))
        else:
            self._ordered(lambda: torch.mul(t, scale, out=c))
        return c

    def _finish(self, outs: List[Tuple[torch.Tensor, torch.Tensor]],
                red: Optional[Reduction] = None) -> None:
        """After the collective: integer AVG's division, copies back into the user's tensors."""
        pairs = [(t, c) for t, c in outs if c is not t]
        divide = red.divide if red is not None else 0
        if not pairs and not divide:
            return

        def run() -> None:
            for t, c in outs:
                if divide and c.dtype in _NO_DIV:
                    c.copy_(torch.div(c.to(torch.int64), divide, rounding_mode="trunc"))
                elif divide:
                    c.div_(divide, rounding_mode="trunc")
                if c is not t:
                    t.copy_(c)
        self._after(run)

    def _call(self, api: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except pyhccl.HcclError as e:
            self._fail(e, api)
            raise self._wrap(e, api) from e

    # ---- held sends and receives (_p2p.py holds them) -------------------------------
    @_serial
    def _flush(self) -> None:
        """Post the held sends and receives as one batch (cannot deadlock within it)."""
        pending, self._p2p = self._p2p, []
        if not pending:
            return
        items = [(k, a, p) for k, a, p, _, _ in pending]
        try:
            self._comm.batch_send_recv(items, stream=self._stream)
        except pyhccl.Error as e:
            err = self._wrap(e, "send/recv")
            self._fail(e, "send/recv")
            for *_, w, _ in pending:
                w.seq = self._enq + 1
            self._enq += 1
            raise err from e
        self._enq += 1
        for *_, w, back in pending:
            w.seq = self._enq
            if back is not None:
                self._after(back)

    # ---- life cycle -------------------------------------------------------------------------
    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self._timeout = timeout

    @_serial
    def _release(self, abort: bool) -> None:
        if self._closed:
            return
        self._closed = True
        self._p2p = []
        comm, stream = self._comm, self._stream
        if not comm.is_destroyed:
            if not abort:
                try:
                    # Finished work ends at once; work stuck on a peer is aborted, so that
                    # destroy_process_group() returns within a second.
                    stream.synchronize(0.5)
                except pyhccl.Error:
                    abort = True
            if abort:
                try:
                    comm.abort()
                except pyhccl.Error:
                    pass
            try:
                comm.destroy()
            except pyhccl.Error:
                pass
        try:
            stream.destroy()
        except pyhccl.Error:
            pass
        _forget(self)

    def shutdown(self) -> None:
        """Release the communicator and stream (destroy_process_group)."""
        self._release(abort=False)

    def abort(self) -> None:
        """Abort pending work on every rank and release everything (torch's abort path)."""
        self._release(abort=True)


# The default group's backend: the parent every subgroup's communicator is cut from.
_world: List[GroupCore] = []


def world_group() -> Optional[GroupCore]:
    """The live pyhccl backend of the default process group, if there is one."""
    return _world[0] if _world else None


def _forget(pg: GroupCore) -> None:
    if _world and _world[0] is pg:
        _world.clear()
