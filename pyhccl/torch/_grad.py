"""all_reduce_tensors and GradReducer: gradient all-reduce on a pyhccl Comm (no torch.distributed).

- all_reduce_tensors(comm, tensors): all-reduce a list of tensors (gradients)
  packed into buckets of about `bucket_bytes`, one AllReduce per bucket,
  enqueued on a stream; returns a Work whose wait() writes the results back.
- GradReducer(module, comm): a DDP-style hook. As backward() finishes each
  parameter's gradient it is packed into its bucket; a full bucket is
  all-reduced at once on the communication stream, overlapping the rest of
  backward(); wait() after backward() leaves the averaged gradients in
  `.grad`.

Tensors must be CPU tensors on the host runtime (its device memory is host
memory).
"""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import torch
from torch.utils.dlpack import from_dlpack

import pyhccl

__all__ = ["DEFAULT_BUCKET_BYTES", "GradReducer", "Work", "all_reduce_tensors"]

DEFAULT_BUCKET_BYTES = 25 << 20     # DDP's default bucket size

_DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
           torch.bfloat16: "bfloat16", torch.int8: "int8", torch.int16: "int16",
           torch.int32: "int32", torch.int64: "int64", torch.uint8: "uint8"}


def _dtype_of(t: torch.Tensor, api: str, what: str) -> str:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{api}: {what} must be a torch.Tensor, not {type(t).__name__}")
    if t.device.type != "cpu":
        raise TypeError(f"{api}: {what} is on {t.device}; the host runtime takes CPU tensors")
    name = _DTYPES.get(t.dtype)
    if name is None:
        raise TypeError(f"{api}: {what} has dtype {t.dtype}, which HCCL does not support")
    return name


class _Bucket:
    """Tensors of one dtype packed into one flat device buffer, all-reduced together."""

    def __init__(self, dtype: str, sizes: List[int]) -> None:
        self.offsets = [0]
        for n in sizes:
            self.offsets.append(self.offsets[-1] + n)
        self.flat = pyhccl.empty(self.offsets[-1], dtype)      # aclrtMalloc memory
        self.view: torch.Tensor = from_dlpack(self.flat)  # the same memory

    def part(self, i: int) -> torch.Tensor:
        return self.view[self.offsets[i]:self.offsets[i + 1]]


def _plan(tensors: Sequence[torch.Tensor], bucket_bytes: int, api: str,
          what: str) -> List[Tuple[str, List[int]]]:
    """Group tensor indices into buckets: same dtype, in order, about bucket_bytes each."""
    if bucket_bytes <= 0:
        raise ValueError(f"{api}: bucket_bytes must be positive, not {bucket_bytes}")
    plan: List[Tuple[str, List[int]]] = []
    open_: Dict[str, Tuple[List[int], int]] = {}
    for i, t in enumerate(tensors):
        dtype = _dtype_of(t, api, f"{what}[{i}]")
        members, size = open_.get(dtype, ([], 0))
        if members and size + t.numel() * t.element_size() > bucket_bytes:
            plan.append((dtype, members))
            members, size = [], 0
        members.append(i)
        open_[dtype] = (members, size + t.numel() * t.element_size())
    plan.extend((dtype, members) for dtype, (members, _) in open_.items() if members)
    return plan


class Work:
    """The pending all-reduce of all_reduce_tensors(); wait() completes it."""

    def __init__(self, stream: pyhccl.Stream, event: pyhccl.Event,
                 parts: List[Tuple[_Bucket, List[torch.Tensor]]], divisor: int) -> None:
        self._stream, self._event, self._parts, self._divisor = stream, event, parts, divisor
        self._done = False

    def is_completed(self) -> bool:
        """Return True once the collectives have run (results not yet written back)."""
        return self._done or self._event.query()

    def wait(self, timeout: Optional[float] = None) -> None:
        """Wait for the collectives, then write the results into the tensors (once).

        Raises:
            AclError: the wait failed or timed out, or a collective failed.
        """
        if self._done:
            return
        self._event.synchronize(timeout)
        self._stream.synchronize()      # surfaces an error of the collectives
        for bucket, tensors in self._parts:
            if self._divisor > 1:
                bucket.view.div_(self._divisor)
            for i, t in enumerate(tensors):
                t.copy_(bucket.part(i).view_as(t))
        self._done = True


def all_reduce_tensors(comm: pyhccl.Comm, tensors: Iterable[torch.Tensor], *,
                       op: Any = "sum", average: bool = False,
                       stream: Optional[pyhccl.Stream] = None,
                       bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> Work:
    """All-reduce a list of tensors in buckets, enqueued on `stream`; wait() writes back.

    Collective: every rank calls it with tensors of the same shapes, dtypes
    and order. Tensors of one dtype are packed (in order) into buckets of
    about `bucket_bytes`; each bucket is one AllReduce on `stream` (None: the
    current stream). The tensors may be read and changed after the call
    returns; they receive the results at Work.wait().

    Args:
        comm: the communicator.
        tensors: CPU tensors (e.g. the gradients of a model's parameters).
        op: "sum", "prod", "max", "min", a ReduceOp or an mpi4py op.
        average: divide the sums by comm.size (floating dtypes only).
        stream: the Stream to enqueue on (keyword only).
        bucket_bytes: the size a bucket is filled up to (a larger tensor
            gets a bucket of its own).

    Returns:
        Work; call wait() before using the tensors' results.

    Raises:
        TypeError: a tensor is not a CPU tensor of a supported dtype.
        ValueError: bad `bucket_bytes`, `op` or `average` for integers.
        HcclError: an AllReduce was refused.
    """
    api = "all_reduce_tensors"
    items = list(tensors)
    if stream is None:
        stream = pyhccl.current_stream()
    if average and any(not t.is_floating_point() for t in items):
        raise ValueError(f"{api}: average=True needs floating-point tensors")
    parts = []
    for dtype, members in _plan(items, bucket_bytes, api, "tensors"):
        group = [items[i] for i in members]
        bucket = _Bucket(dtype, [t.numel() for t in group])
        for i, t in enumerate(group):
            bucket.part(i).copy_(t.reshape(-1))
        comm.all_reduce(bucket.flat, op=op, stream=stream)
        parts.append((bucket, group))
    event = stream.record()
    return Work(stream, event, parts, comm.size if average else 1)


class GradReducer:
    """DDP-style gradient averaging: all-reduce each bucket as soon as backward() fills it.

    Buckets are fixed at construction: the parameters that require a
    gradient, in reverse order (the order backward() usually produces them),
    packed per dtype up to `bucket_bytes`. A hook on each parameter copies
    its new gradient into the bucket; when a bucket is full it is all-reduced
    on `stream` while backward() goes on. Buckets are always launched in the
    same order on every rank, so the ranks' collectives match.

    Call wait() after backward() and before the optimizer step: it launches
    the buckets still open (a parameter that got no gradient counts as
    zeros), waits, and writes the averaged (or summed) gradients into
    `.grad`. Every rank must run the same model.

    Args:
        params: a torch.nn.Module or an iterable of parameters.
        comm: the communicator.
        stream: the communication Stream (None: a new one).
        bucket_bytes: bucket size.
        average: divide by comm.size (else sum).

    Raises:
        TypeError: a parameter is not a CPU tensor of a supported dtype.
        ValueError: bad `bucket_bytes`.
    """

    def __init__(self, params: Union[torch.nn.Module, Iterable[torch.Tensor]],
                 comm: pyhccl.Comm, *, stream: Optional[pyhccl.Stream] = None,
                 bucket_bytes: int = DEFAULT_BUCKET_BYTES, average: bool = True) -> None:
        if isinstance(params, torch.nn.Module):
            params = params.parameters()
        self.params = [p for p in params if p.requires_grad][::-1]
        self.comm = comm
        self.stream = stream if stream is not None else pyhccl.Stream()
        self._divisor = comm.size if average else 1
        self._buckets: List[Tuple[_Bucket, List[torch.Tensor]]] = []
        self._where: Dict[int, Tuple[int, int]] = {}      # id(param) -> (bucket, index)
        for dtype, members in _plan(self.params, bucket_bytes, "GradReducer", "params"):
            group = [self.params[i] for i in members]
            for k, p in enumerate(group):
                self._where[id(p)] = (len(self._buckets), k)
            self._buckets.append((_Bucket(dtype, [p.numel() for p in group]), group))
        # getattr: torch types this hook registration without annotations
        self._handles = [getattr(p, "register_post_accumulate_grad_hook")(self._on_grad)
                         for p in self.params]
        self._reset()

    def _reset(self) -> None:
        self._filled = [set() for _ in self._buckets]   # type: List[set[int]]
        self._next = 0                                  # first bucket not launched

    def _on_grad(self, p: torch.Tensor) -> None:
        b, k = self._where[id(p)]
        bucket, group = self._buckets[b]
        if self._next > b:
            raise RuntimeError("GradReducer: a gradient arrived for a bucket already "
                               "all-reduced; call wait() after each backward()")
        assert p.grad is not None
        bucket.part(k).copy_(p.grad.reshape(-1))
        self._filled[b].add(k)
        while self._next < len(self._buckets) and \
                len(self._filled[self._next]) == len(self._buckets[self._next][1]):
            self._launch(self._next)

    def _launch(self, b: int) -> None:
        self.comm.all_reduce(self._buckets[b][0].flat, stream=self.stream)
        self._next = b + 1

    def wait(self) -> None:
        """Finish the all-reduce of this backward() and write the gradients into `.grad`.

        Raises:
            AclError: a collective failed (reported by the stream).
        """
        while self._next < len(self._buckets):
            bucket, group = self._buckets[self._next]
            for k in range(len(group)):
                if k not in self._filled[self._next]:
                    bucket.part(k).zero_()          # no gradient this time: zeros
            self._launch(self._next)
        self.stream.synchronize()
        for bucket, group in self._buckets:
            if self._divisor > 1:
                bucket.view.div_(self._divisor)
            for k, p in enumerate(group):
                result = bucket.part(k).view_as(p)
                if p.grad is None:
                    p.grad = result.clone()
                else:
                    p.grad.copy_(result)
        self._reset()

    def remove(self) -> None:
        """Remove the gradient hooks."""
        for h in self._handles:
            h.remove()
        self._handles = []
