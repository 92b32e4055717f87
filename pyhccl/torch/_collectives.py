"""Collectives: the c10d collectives of a pyhccl process group (a GroupCore mixin).

Each call checks its tensors (all of them before anything is enqueued), stages
them with GroupCore's helpers, enqueues one pyhccl collective per tensor (or
per flat buffer) on the group's stream and returns a PyhcclWork at once.
Lists of tensors travel as one flat buffer, packed and spread in stream order.
"""

from typing import Any, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

import pyhccl

from ._core import GroupCore, _one, _serial
from ._dtypes import as_array, as_bytes, check_tensor, reduction
from ._work import PyhcclWork

_SUM = dist.ReduceOp.RedOpType.SUM
_DEFAULT_OP = dist.AllreduceOptions().reduceOp          # a ReduceOp holding SUM
_FAST_DTYPES = (torch.float32, torch.float64, torch.float16, torch.int32, torch.int64,
                torch.int8, torch.uint8, torch.int16)


def _pairs(outputs: Any, inputs: Any, api: str) -> Tuple[List[torch.Tensor], List[torch.Tensor]]:
    """The tensors of a coalesced call: as many outputs as inputs, every one checked."""
    outs, ins = list(outputs), list(inputs)
    if len(outs) != len(ins):
        raise ValueError(f"{api}: {len(outs)} outputs for {len(ins)} inputs")
    for i, (o, t) in enumerate(zip(outs, ins)):
        check_tensor(o, api, f"outputs[{i}]")
        check_tensor(t, api, f"inputs[{i}]")
    return outs, ins


def _opt(opts: Any, name: str, default: Any) -> Any:
    return default if opts is None else getattr(opts, name, default)


def _one_list(lists: Any, api: str) -> List[torch.Tensor]:
    if len(lists) != 1:
        raise ValueError(f"{api}: the pyhccl backend takes one tensor list per process, "
                         f"got {len(lists)}")
    return list(lists[0])


def as_bytes_t(t: torch.Tensor) -> torch.Tensor:
    """A tensor's values as flat uint8 (a copy when not contiguous)."""
    flat = t.detach().reshape(-1)
    return flat if flat.dtype is torch.uint8 else flat.view(torch.uint8)


class Collectives(GroupCore):
    """All-reduce, broadcast, all-gather, reduce-scatter, all-to-all, the rooted
    collectives and barrier."""

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
