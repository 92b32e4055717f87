"""Torch dtypes and ReduceOps as HCCL sees them (the backend's tables and checks).

Data movement (broadcast, gathers, scatters, all-to-all, send/recv) carries the
bytes of any dtype, so it views every tensor as uint8. Reductions need a dtype
HCCL reduces: the table below maps each torch dtype to the tensor view whose
numpy array pyhccl takes, plus the HCCL type where numpy has none (bfloat16).
"""

from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist

import pyhccl

_R = dist.ReduceOp.RedOpType

# torch dtype -> (dtype to view the tensor as, HCCL dtype to pass or None).
_REDUCIBLE: Dict[torch.dtype, Tuple[torch.dtype, Optional[pyhccl.DataType]]] = {
    torch.float32: (torch.float32, None),
    torch.float64: (torch.float64, None),
    torch.float16: (torch.float16, None),
    torch.bfloat16: (torch.int16, pyhccl.BFLOAT16),
    torch.int8: (torch.int8, None),
    torch.int16: (torch.int16, None),
    torch.int32: (torch.int32, None),
    torch.int64: (torch.int64, None),
    torch.uint8: (torch.uint8, None),
    torch.bool: (torch.uint8, None),
}
for _name in ("uint16", "uint32", "uint64"):         # torch >= 2.3
    if hasattr(torch, _name):
        _d = getattr(torch, _name)
        _REDUCIBLE[_d] = (_d, None)

# Complex numbers reduce as pairs of reals: SUM (and AVG, PREMUL_SUM by a real factor).
_COMPLEX = {torch.complex64: torch.float32, torch.complex128: torch.float64}

# ReduceOp -> HCCL op for the dtypes HCCL reduces directly.
HCCL_OPS = {_R.SUM: pyhccl.SUM, _R.PRODUCT: pyhccl.PROD, _R.MAX: pyhccl.MAX,
            _R.MIN: pyhccl.MIN}
# bool as in NCCL: SUM is logical or (MAX), PRODUCT logical and (MIN); BOR/BAND the same.
_BOOL_OPS = {_R.SUM: pyhccl.MAX, _R.PRODUCT: pyhccl.MIN, _R.MAX: pyhccl.MAX,
             _R.MIN: pyhccl.MIN, _R.BOR: pyhccl.MAX, _R.BAND: pyhccl.MIN}
SCALED = (_R.AVG, _R.PREMUL_SUM)


class Reduction:
    """How one reduction runs: the HCCL op, the array view, and what to do around it.

    scale: multiply the input by it before a SUM (AVG and PREMUL_SUM of floats);
    divide: truncating division of the sums after (integer AVG, as NCCL does).
    """

    __slots__ = ("op", "view", "hdt", "scale", "divide")

    def __init__(self, op: pyhccl.ReduceOp, view: torch.dtype, hdt: Optional[pyhccl.DataType],
                 scale: Optional[float] = None, divide: int = 0) -> None:
        self.op, self.view, self.hdt, self.scale, self.divide = op, view, hdt, scale, divide


def _factor(rop: Any, api: str) -> float:
    """The factor of a PREMUL_SUM ReduceOp (dist._make_nccl_premul_sum)."""
    f = getattr(rop, "factor", None)
    if f is None and hasattr(rop, "__getstate__"):
        state = rop.__getstate__()
        f = state[1] if isinstance(state, tuple) and len(state) > 1 else None
    if isinstance(f, torch.Tensor):
        f = f.item()
    if f is None:
        raise ValueError(f"{api}: PREMUL_SUM without a factor")
    return float(f)


def reduction(rop: Any, dtype: torch.dtype, size: int, api: str) -> Reduction:
    """Resolve a torch ReduceOp for tensors of `dtype` on a group of `size` ranks.

    Raises:
        ValueError: the op is not defined for this dtype (or not supported at all).
    """
    kind = rop.op if hasattr(rop, "op") else rop           # ReduceOp or RedOpType
    name = getattr(kind, "name", str(kind))
    if dtype in _COMPLEX:
        if kind == _R.SUM:
            return Reduction(pyhccl.SUM, _COMPLEX[dtype], None)
        if kind == _R.AVG:
            return Reduction(pyhccl.SUM, _COMPLEX[dtype], None, scale=1.0 / size)
        if kind == _R.PREMUL_SUM:
            return Reduction(pyhccl.SUM, _COMPLEX[dtype], None, scale=_factor(rop, api))
        raise ValueError(f"{api}: ReduceOp.{name} is not defined for {dtype}; complex "
                         "tensors reduce with SUM, AVG or PREMUL_SUM")
    entry = _REDUCIBLE.get(dtype)
    if entry is None:
        raise TypeError(f"{api}: HCCL cannot reduce {dtype} (it carries it as bytes for "
                        "broadcast, gathers, scatters, all-to-all and send/recv only)")
    view, hdt = entry
    if dtype is torch.bool:
        op = _BOOL_OPS.get(kind)
        if op is None:
            raise ValueError(f"{api}: ReduceOp.{name} is not defined for torch.bool "
                             "(SUM/BOR = or, PRODUCT/BAND = and, MAX, MIN are)")
        return Reduction(op, view, hdt)
    op = HCCL_OPS.get(kind)
    if op is not None:
        return Reduction(op, view, hdt)
    floating = dtype.is_floating_point
    if kind == _R.AVG:
        if floating:
            return Reduction(pyhccl.SUM, view, hdt, scale=1.0 / size)
        if dtype is getattr(torch, "uint64", None):
            raise ValueError(f"{api}: ReduceOp.AVG is not supported for torch.uint64 (torch "
                             "cannot divide it); use SUM and divide")
        return Reduction(pyhccl.SUM, view, hdt, divide=size)
    if kind == _R.PREMUL_SUM:
        if not floating:
            raise ValueError(f"{api}: ReduceOp.PREMUL_SUM needs floating-point or complex "
                             f"tensors, not {dtype}")
        return Reduction(pyhccl.SUM, view, hdt, scale=_factor(rop, api))
    raise ValueError(f"{api}: ReduceOp.{name} is not supported by the pyhccl backend: "
                     "HCCL reduces with SUM, PRODUCT, MAX and MIN (AVG and PREMUL_SUM "
                     "as a scaled SUM; BAND/BOR only on torch.bool)")


def check_tensor(t: Any, api: str, what: str) -> None:
    """Refuse what the host runtime cannot carry, naming the call and the argument."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{api}: {what} must be a torch.Tensor, not {type(t).__name__}")
    if t.device.type != "cpu":
        raise TypeError(f"{api}: {what} is on {t.device}; the pyhccl backend takes CPU "
                        "tensors (npu tensors need a CANN build of pyhccl with torch_npu, "
                        "see docs/torch.md)")
    if t.is_sparse or t.layout != torch.strided:
        raise TypeError(f"{api}: {what} has layout {t.layout}; only dense (strided) "
                        "tensors are supported")


def as_bytes(t: torch.Tensor) -> np.ndarray:
    """A contiguous tensor's memory as a flat uint8 numpy array (no copy)."""
    flat = t.detach().reshape(-1)
    if flat.dtype is not torch.uint8:
        flat = flat.view(torch.uint8)
    arr: np.ndarray = flat.numpy()
    return arr


def as_array(t: torch.Tensor, red: Reduction) -> np.ndarray:
    """A contiguous tensor as the numpy array a reduction runs on (no copy)."""
    x = t.detach()
    if x.dtype in _COMPLEX:
        x = torch.view_as_real(x)
    if x.dtype is not red.view:
        x = x.view(red.view)
    arr: np.ndarray = x.numpy()
    return arr

