"""ProcessGroupPyhccl: the c10d operations of torch.distributed on a pyhccl Comm.

Each group owns a communicator and a Stream. A call checks its tensors,
enqueues the collective on the stream and returns a PyhcclWork at once
(async_op=True is asynchronous for real). Work that must happen in stream
order around a collective (copying a non-contiguous tensor in or out, scaling
for AVG/PREMUL_SUM, integer AVG's division, spreading a flat buffer over a
list of tensors) runs as a host function on the stream when the stream is
busy, and at once when it is idle. Sends and receives are held until the
group's next call or wait and then posted together as one HcclBatchSendRecv,
which is how batch_isend_irecv's list becomes one batch that cannot deadlock.
"""

import datetime
import functools
import threading
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar

import numpy as np
import torch
import torch.distributed as dist

import pyhccl

from ._dtypes import Reduction, as_array, as_bytes, check_tensor, reduction
from ._work import PyhcclWork

_SUM = dist.ReduceOp.RedOpType.SUM
_DEFAULT_OP = dist.AllreduceOptions().reduceOp          # a ReduceOp holding SUM
_FAST_DTYPES = (torch.float32, torch.float64, torch.float16, torch.int32, torch.int64,
                torch.int8, torch.uint8, torch.int16)
# Unsigned dtypes torch cannot divide (integer AVG divides them as int64).
_NO_DIV = tuple(getattr(torch, n) for n in ("uint16", "uint32") if hasattr(torch, n))
_DistError = getattr(dist, "DistBackendError", RuntimeError)

BACKEND_NAME = "pyhccl"

_F = TypeVar("_F", bound=Callable[..., Any])


def _serial(fn: _F) -> _F:
    """One call at a time per group: a call's enqueues and its number stay together,
    so the numbers follow the stream's order when several threads call."""
    @functools.wraps(fn)
    def run(self: "ProcessGroupPyhccl", *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return fn(self, *args, **kwargs)
    return run  # type: ignore[return-value]


def _pairs(outputs: Any, inputs: Any, api: str) -> Tuple[List[torch.Tensor], List[torch.Tensor]]:
    """The tensors of a coalesced call: as many outputs as inputs, every one checked."""
    outs, ins = list(outputs), list(inputs)
    if len(outs) != len(ins):
        raise ValueError(f"{api}: {len(outs)} outputs for {len(ins)} inputs")
    for i, (o, t) in enumerate(zip(outs, ins)):
        check_tensor(o, api, f"outputs[{i}]")
        check_tensor(t, api, f"inputs[{i}]")
    return outs, ins


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


def _opt(opts: Any, name: str, default: Any) -> Any:
    return default if opts is None else getattr(opts, name, default)


class ProcessGroupPyhccl(dist.ProcessGroup):  # type: ignore[misc, unused-ignore]
    """A torch.distributed process group on one pyhccl communicator."""

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

    def _get_backend(self, device: Any) -> "ProcessGroupPyhccl":
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

    # ---- all-reduce ------------------------------------------------------------------
    def allreduce(self, tensors: Any, opts: Any = None) -> PyhcclWork:
        api = "all_reduce"
        rop = _DEFAULT_OP if opts is None else opts.reduceOp
        # The common case (one contiguous CPU tensor of a numpy dtype, SUM, a healthy
        # group) takes the shortest path: it is what DDP and dist.all_reduce call most.
        if type(tensors) is list and len(tensors) == 1:
            t = tensors[0]
            if type(t) is torch.Tensor and rop == _SUM and t.dtype in _FAST_DTYPES \
                    and t.layout is torch.strided and t.is_cpu and not t.requires_grad \
                    and t.is_contiguous() and not self._p2p and self._failed is None \
                    and not self._closed:
                with self._lock:
                    try:
                        self._comm.all_reduce(t.numpy(), stream=self._stream)
                    except pyhccl.HcclError as e:
                        self._fail(e, api)
                        raise self._wrap(e, api) from e
                    self._enq += 1
                    seq = self._enq
                return PyhcclWork(self, seq, tensors, api)
        t = _one(tensors, api)
        with self._lock:
            self._begin(api)
            self._allreduce_one(t, rop, api)
            return self._enqueued(api, [t])

    def _allreduce_one(self, t: torch.Tensor, rop: Any, api: str) -> None:
        red = reduction(rop, t.dtype, self._size, api)
        c = self._inout(t)
        if red.scale is not None:
            self._ordered(lambda: c.mul_(red.scale))
        arr = as_array(c, red)
        self._call(api, lambda: self._comm.all_reduce(arr, op=red.op, stream=self._stream,
                                                      dtype=red.hdt))
        self._finish([(t, c)], red)

    @_serial
    def allreduce_coalesced(self, tensors: Any, opts: Any = None) -> PyhcclWork:
        api = "all_reduce_coalesced"
        self._begin(api)
        rop = _opt(opts, "reduceOp", _DEFAULT_OP)
        ts = list(tensors)
        for i, t in enumerate(ts):
            check_tensor(t, api, f"tensors[{i}]")
            reduction(rop, t.dtype, self._size, api)       # all checked before any runs
        for t in ts:
            self._allreduce_one(t, rop, api)
        return self._enqueued(api, ts)

    # ---- broadcast -------------------------------------------------------------------
    @_serial
    def broadcast(self, tensors: Any, opts: Any = None) -> PyhcclWork:
        api = "broadcast"
        t = _one(tensors, api)
        root = self._root(_opt(opts, "rootRank", 0), api)
        self._begin(api)
        c = self._inout(t, read=root == self._rank)
        self._call(api, lambda: self._comm.broadcast(as_bytes(c), root=root,
                                                     stream=self._stream))
        self._finish([(t, c)])
        return self._enqueued(api, [t])

    def _root(self, root: Any, api: str) -> int:
        r = int(root)
        if not 0 <= r < self._size:
            raise ValueError(f"{api}: root rank {r} is not in the group of {self._size} ranks")
        return r

    # ---- all-gather --------------------------------------------------------------------
    def _check_parts(self, parts: Sequence[torch.Tensor], like: torch.Tensor, api: str,
                     what: str) -> None:
        if len(parts) != self._size:
            raise ValueError(f"{api}: {what} has {len(parts)} tensors; the group has "
                             f"{self._size} ranks")
        for i, p in enumerate(parts):
            check_tensor(p, api, f"{what}[{i}]")
            if p.dtype != like.dtype or p.numel() != like.numel():
                raise ValueError(f"{api}: {what}[{i}] is {p.dtype} with {p.numel()} "
                                 f"elements; it must match the {like.dtype} tensor of "
                                 f"{like.numel()} elements")

    def _allgather_flat(self, out: torch.Tensor, inp: torch.Tensor, api: str) -> None:
        if out.dtype != inp.dtype:
            raise TypeError(f"{api}: output is {out.dtype}, input {inp.dtype}; they must match")
        if out.numel() != inp.numel() * self._size:
            raise ValueError(f"{api}: output has {out.numel()} elements; it must have "
                             f"input's {inp.numel()} x {self._size} ranks = "
                             f"{inp.numel() * self._size}")
        src = self._input(inp)
        dst = self._inout(out, read=False)
        self._call(api, lambda: self._comm.all_gather(as_bytes(src), as_bytes(dst),
                                                      stream=self._stream))
        self._finish([(out, dst)])

    @_serial
    def allgather(self, output_tensors: Any, input_tensors: Any,
                  opts: Any = None) -> PyhcclWork:
        api = "all_gather"
        inp = _one(input_tensors, api, "input tensor")
        outs = _one_list(output_tensors, api)
        self._check_parts(outs, inp, api, "tensor_list")
        self._begin(api)
        self._allgather_list(outs, inp, api)
        return self._enqueued(api, list(outs))

    def _allgather_list(self, outs: Sequence[torch.Tensor], inp: torch.Tensor,
                        api: str) -> None:
        flat = torch.empty((self._size,) + tuple(inp.shape), dtype=inp.dtype)
        src = self._input(inp)
        self._call(api, lambda: self._comm.all_gather(as_bytes(src), as_bytes(flat),
                                                      stream=self._stream))
        self._spread(flat, outs)

    def _spread(self, flat: torch.Tensor, outs: Sequence[torch.Tensor]) -> None:
        """Copy block i of `flat` into outs[i] after the collective."""
        def run() -> None:
            for i, o in enumerate(outs):
                o.copy_(flat[i].reshape(o.shape))
        self._after(run)

    @_serial
    def allgather_coalesced(self, output_lists: Any, input_list: Any,
                            opts: Any = None) -> PyhcclWork:
        api = "all_gather_coalesced"
        outs_all = [list(o) for o in output_lists]
        ins = list(input_list)
        if len(outs_all) != len(ins):
            raise ValueError(f"{api}: {len(outs_all)} output lists for {len(ins)} inputs")
        for i, (outs, inp) in enumerate(zip(outs_all, ins)):
            check_tensor(inp, api, f"input_tensor_list[{i}]")
            self._check_parts(outs, inp, api, f"output_tensor_lists[{i}]")
        self._begin(api)
        for outs, inp in zip(outs_all, ins):
            self._allgather_list(outs, inp, api)
        return self._enqueued(api, [o for outs in outs_all for o in outs])

    @_serial
    def _allgather_base(self, output: torch.Tensor, input: torch.Tensor,
                        opts: Any = None) -> PyhcclWork:
        api = "all_gather_into_tensor"
        check_tensor(output, api, "output_tensor")
        check_tensor(input, api, "input_tensor")
        self._begin(api)
        self._allgather_flat(output, input, api)
        return self._enqueued(api, [output])

    all_gather_single = _allgather_base

    @_serial
    def allgather_into_tensor_coalesced(self, outputs: Any, inputs: Any,
                                        opts: Any = None) -> PyhcclWork:
        api = "all_gather_into_tensor_coalesced"
        outs, ins = _pairs(outputs, inputs, api)
        self._begin(api)
        for o, t in zip(outs, ins):
            self._allgather_flat(o, t, api)
        return self._enqueued(api, outs)

    all_gather_single_coalesced = allgather_into_tensor_coalesced

    # ---- reduce-scatter ----------------------------------------------------------------
    def _reduce_scatter_flat(self, out: torch.Tensor, inp: torch.Tensor, rop: Any,
                             api: str) -> None:
        if out.dtype != inp.dtype:
            raise TypeError(f"{api}: output is {out.dtype}, input {inp.dtype}; they must match")
        if inp.numel() != out.numel() * self._size:
            raise ValueError(f"{api}: input has {inp.numel()} elements; it must have "
                             f"output's {out.numel()} x {self._size} ranks = "
                             f"{out.numel() * self._size}")
        red = reduction(rop, out.dtype, self._size, api)
        src = self._input(inp, red.scale)
        dst = self._inout(out, read=False)
        self._call(api, lambda: self._comm.reduce_scatter(
            as_array(src, red), as_array(dst, red), op=red.op, stream=self._stream,
            dtype=red.hdt))
        self._finish([(out, dst)], red)

    @_serial
    def reduce_scatter(self, output_tensors: Any, input_lists: Any,
                       opts: Any = None) -> PyhcclWork:
        api = "reduce_scatter"
        out = _one(output_tensors, api, "output")
        ins = _one_list(input_lists, api)
        self._check_parts(ins, out, api, "input_list")
        rop = _opt(opts, "reduceOp", _DEFAULT_OP)
        red = reduction(rop, out.dtype, self._size, api)
        self._begin(api)
        flat = torch.empty((self._size * out.numel(),), dtype=out.dtype)
        parts = list(ins)
        scale = red.scale

        def pack() -> None:
            torch.cat([p.reshape(-1) for p in parts], out=flat)
            if scale is not None:
                flat.mul_(scale)
        self._ordered(pack)
        dst = self._inout(out, read=False)
        self._call(api, lambda: self._comm.reduce_scatter(
            as_array(flat, red), as_array(dst, red), op=red.op, stream=self._stream,
            dtype=red.hdt))
        self._finish([(out, dst)], red)
        return self._enqueued(api, [out])

    @_serial
    def _reduce_scatter_base(self, output: torch.Tensor, input: torch.Tensor,
                             opts: Any = None) -> PyhcclWork:
        api = "reduce_scatter_tensor"
        check_tensor(output, api, "output")
        check_tensor(input, api, "input")
        rop = _opt(opts, "reduceOp", _DEFAULT_OP)
        self._begin(api)
        self._reduce_scatter_flat(output, input, rop, api)
        return self._enqueued(api, [output])

    reduce_scatter_single = _reduce_scatter_base

    @_serial
    def reduce_scatter_tensor_coalesced(self, outputs: Any, inputs: Any,
                                        opts: Any = None) -> PyhcclWork:
        api = "reduce_scatter_tensor_coalesced"
        outs, ins = _pairs(outputs, inputs, api)
        rop = _opt(opts, "reduceOp", _DEFAULT_OP)
        for o in outs:
            reduction(rop, o.dtype, self._size, api)
        self._begin(api)
        for o, t in zip(outs, ins):
            self._reduce_scatter_flat(o, t, rop, api)
        return self._enqueued(api, outs)

    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

    # ---- all-to-all --------------------------------------------------------------------
    @_serial
    def alltoall(self, output_tensors: Any, input_tensors: Any,
                 opts: Any = None) -> PyhcclWork:
        api = "all_to_all"
        outs, ins = list(output_tensors), list(input_tensors)
        for what, lst in (("output_tensor_list", outs), ("input_tensor_list", ins)):
            if len(lst) != self._size:
                raise ValueError(f"{api}: {what} has {len(lst)} tensors; the group has "
                                 f"{self._size} ranks")
            for i, t in enumerate(lst):
                check_tensor(t, api, f"{what}[{i}]")
                if t.dtype != ins[0].dtype:
                    raise TypeError(f"{api}: {what}[{i}] is {t.dtype}, "
                                    f"input_tensor_list[0] {ins[0].dtype}; they must match")
        self._begin(api)
        send_counts = [t.numel() * t.element_size() for t in ins]
        recv_counts = [t.numel() * t.element_size() for t in outs]
        send = torch.empty(sum(send_counts), dtype=torch.uint8)
        recv = torch.empty(sum(recv_counts), dtype=torch.uint8)
        parts = list(ins)

        def pack() -> None:
            torch.cat([as_bytes_t(p) for p in parts], out=send)
        self._ordered(pack)
        self._call(api, lambda: self._comm.all_to_all_v(
            send.numpy(), recv.numpy(), send_counts, recv_counts, stream=self._stream))
        targets = list(outs)

        def unpack() -> None:
            off = 0
            for o, n in zip(targets, recv_counts):
                o.copy_(recv[off:off + n].view(o.dtype).view(o.shape))
                off += n
        self._after(unpack)
        return self._enqueued(api, outs)

    def _split_counts(self, t: torch.Tensor, splits: Sequence[int], api: str,
                      what: str) -> List[int]:
        """Bytes per rank of an all_to_all_single tensor split along dim 0."""
        if not splits:
            if t.numel() % self._size:
                raise ValueError(f"{api}: {what} has {t.numel()} elements, not divisible "
                                 f"by the {self._size} ranks (pass split sizes)")
            return [t.numel() * t.element_size() // self._size] * self._size
        if len(splits) != self._size:
            raise ValueError(f"{api}: {what} split sizes has {len(splits)} entries; the "
                             f"group has {self._size} ranks")
        rows = t.shape[0] if t.dim() else 1
        if sum(splits) != rows or any(s < 0 for s in splits):
            raise ValueError(f"{api}: {what} split sizes {list(splits)} do not add up to "
                             f"its {rows} rows")
        row = t.numel() // rows * t.element_size() if rows else 0
        return [int(s) * row for s in splits]

    @_serial
    def alltoall_base(self, output: torch.Tensor, input: torch.Tensor,
                      output_split_sizes: Sequence[int], input_split_sizes: Sequence[int],
                      opts: Any = None) -> PyhcclWork:
        api = "all_to_all_single"
        check_tensor(output, api, "output")
        check_tensor(input, api, "input")
        if output.dtype != input.dtype:
            raise TypeError(f"{api}: output is {output.dtype}, input {input.dtype}; "
                            "they must match")
        send_counts = self._split_counts(input, list(input_split_sizes), api, "input")
        recv_counts = self._split_counts(output, list(output_split_sizes), api, "output")
        self._begin(api)
        src = self._input(input)
        dst = self._inout(output, read=False)
        if not output_split_sizes and not input_split_sizes:
            if output.numel() != input.numel():
                raise ValueError(f"{api}: output has {output.numel()} elements, input "
                                 f"{input.numel()}; without split sizes they must be equal")
            self._call(api, lambda: self._comm.all_to_all(as_bytes(src), as_bytes(dst),
                                                          stream=self._stream))
        else:
            self._call(api, lambda: self._comm.all_to_all_v(
                as_bytes(src), as_bytes(dst), send_counts, recv_counts,
                stream=self._stream))
        self._finish([(output, dst)])
        return self._enqueued(api, [output])

    all_to_all_single = alltoall_base

    # ---- rooted ------------------------------------------------------------------------
    @_serial
    def reduce(self, tensors: Any, opts: Any = None) -> PyhcclWork:
        api = "reduce"
        t = _one(tensors, api)
        root = self._root(_opt(opts, "rootRank", 0), api)
        red = reduction(_opt(opts, "reduceOp", _DEFAULT_OP), t.dtype, self._size, api)
        self._begin(api)
        at_root = root == self._rank
        c = self._inout(t) if at_root else t
        src = self._input(c, red.scale) if red.scale is not None else self._input(c)
        self._call(api, lambda: self._comm.reduce(
            as_array(src, red), as_array(c, red) if at_root else None, op=red.op,
            root=root, stream=self._stream, dtype=red.hdt))
        if at_root:
            self._finish([(t, c)], red)
        return self._enqueued(api, [t])

    @_serial
    def gather(self, output_lists: Any, input_tensors: Any, opts: Any = None) -> PyhcclWork:
        api = "gather"
        inp = _one(input_tensors, api, "input tensor")
        root = self._root(_opt(opts, "rootRank", 0), api)
        at_root = root == self._rank
        outs: List[torch.Tensor] = []
        if at_root:
            outs = _one_list(output_lists, api)
            self._check_parts(outs, inp, api, "gather_list")
        self._begin(api)
        src = self._input(inp)
        flat: Optional[torch.Tensor] = None
        if at_root:
            flat = torch.empty((self._size,) + tuple(inp.shape), dtype=inp.dtype)
        recv = as_bytes(flat) if flat is not None else None
        self._call(api, lambda: self._comm.gather(as_bytes(src), recv, root=root,
                                                  stream=self._stream))
        if flat is not None:
            self._spread(flat, outs)
        return self._enqueued(api, outs)

    @_serial
    def scatter(self, output_tensors: Any, input_lists: Any, opts: Any = None) -> PyhcclWork:
        api = "scatter"
        out = _one(output_tensors, api, "output tensor")
        root = self._root(_opt(opts, "rootRank", 0), api)
        at_root = root == self._rank
        self._begin(api)
        flat: Optional[torch.Tensor] = None
        if at_root:
            ins = _one_list(input_lists, api)
            self._check_parts(ins, out, api, "scatter_list")
            flat = torch.empty((self._size * out.numel(),), dtype=out.dtype)
            parts, dest = list(ins), flat
            self._ordered(lambda: torch.cat([p.reshape(-1) for p in parts], out=dest))
        dst = self._inout(out, read=False)
        send = as_bytes(flat) if flat is not None else None
        self._call(api, lambda: self._comm.scatter(send, as_bytes(dst), root=root,
                                                   stream=self._stream))
        self._finish([(out, dst)])
        return self._enqueued(api, [out])

    @_serial
    def barrier(self, opts: Any = None) -> PyhcclWork:
        api = "barrier"
        self._begin(api)
        self._call(api, lambda: self._comm.barrier(stream=self._stream))
        return self._enqueued(api, [])

    # ---- point to point ------------------------------------------------------------------
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


def _one_list(lists: Any, api: str) -> List[torch.Tensor]:
    if len(lists) != 1:
        raise ValueError(f"{api}: the pyhccl backend takes one tensor list per process, "
                         f"got {len(lists)}")
    return list(lists[0])


def as_bytes_t(t: torch.Tensor) -> torch.Tensor:
    """A tensor's values as flat uint8 (a copy when not contiguous)."""
    flat = t.detach().reshape(-1)
    return flat if flat.dtype is torch.uint8 else flat.view(torch.uint8)


# The default group's backend: the parent every subgroup's communicator is cut from.
_world: List[ProcessGroupPyhccl] = []


def world_group() -> Optional[ProcessGroupPyhccl]:
    """The live pyhccl backend of the default process group, if there is one."""
    return _world[0] if _world else None


def _forget(pg: ProcessGroupPyhccl) -> None:
    if _world and _world[0] is pg:
        _world.clear()
