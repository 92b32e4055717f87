"""Values every rank can compute for every rank, and the exact results they must give."""

import torch
import torch.distributed as dist

R = dist.ReduceOp

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
UINTS = [torch.uint16, torch.uint32, torch.uint64]
COMPLEX = [torch.complex64, torch.complex128]
FP8 = [torch.float8_e4m3fn, torch.float8_e5m2]
ALL = FLOATS + INTS + UINTS + [torch.bool] + COMPLEX + FP8

# The ops each dtype reduces with (the backend refuses the others).
OPS = {"SUM": R.SUM, "PRODUCT": R.PRODUCT, "MAX": R.MAX, "MIN": R.MIN, "AVG": R.AVG,
       "PREMUL_SUM": "premul", "BAND": R.BAND, "BOR": R.BOR, "BXOR": R.BXOR}
FACTOR = 0.5


def ops_for(dtype):
    if dtype in FLOATS:
        return ["SUM", "PRODUCT", "MAX", "MIN", "AVG", "PREMUL_SUM"]
    if dtype in INTS or dtype in (torch.uint16, torch.uint32):
        return ["SUM", "PRODUCT", "MAX", "MIN", "AVG"]
    if dtype is torch.uint64:
        return ["SUM", "PRODUCT", "MAX", "MIN"]
    if dtype is torch.bool:
        return ["SUM", "PRODUCT", "MAX", "MIN", "BAND", "BOR"]
    if dtype in COMPLEX:
        return ["SUM", "AVG", "PREMUL_SUM"]
    return []


def reduce_cases():
    return [(op, d) for d in ALL for op in ops_for(d)]


def refused_cases():
    """(op, dtype) pairs the backend must refuse with a message."""
    cases = [("SUM", d) for d in FP8] + [("BXOR", torch.int32), ("BAND", torch.int64),
                                         ("PRODUCT", torch.complex64), ("MAX", torch.complex128),
                                         ("AVG", torch.bool), ("PREMUL_SUM", torch.int32),
                                         ("AVG", torch.uint64)]
    return cases


def torch_op(name):
    op = OPS[name]
    return dist._make_nccl_premul_sum(FACTOR) if op == "premul" else op


def vals(rank, n, dtype, op="SUM"):
    """Rank `rank`'s n values: small integers, exact in every dtype (1, 2 for products)."""
    i = torch.arange(n)
    if dtype is torch.bool:
        return (i + rank) % 2 == 0
    base = 1 + (i + rank) % 2 if op == "PRODUCT" else i % 3 + rank + 1
    if dtype in COMPLEX:
        return torch.complex(base.double(), 2.0 * base.double()).to(dtype)
    return base.to(dtype)


def wide(t):
    """Values in a dtype that holds every result exactly (float64, int64, complex128)."""
    if t.dtype in COMPLEX:
        return t.to(torch.complex128)
    if t.dtype.is_floating_point:
        return t.to(torch.float64)
    return t.to(torch.int64)


def reduced(op, dtype, n, size, ranks=None):
    """The exact result of reducing vals() of `ranks` (all of `size`) with `op`."""
    ranks = list(range(size)) if ranks is None else ranks
    xs = [wide(vals(r, n, dtype, op)) for r in ranks]
    if dtype is torch.bool:
        any_, all_ = torch.stack(xs).amax(0), torch.stack(xs).amin(0)
        return (any_ if op in ("SUM", "MAX", "BOR") else all_).to(torch.bool)
    stack = torch.stack(xs)
    if op == "SUM":
        out = stack.sum(0)
    elif op == "PRODUCT":
        out = stack.prod(0)
    elif op == "MAX":
        out = stack.amax(0)
    elif op == "MIN":
        out = stack.amin(0)
    elif op == "AVG":
        if dtype in FLOATS or dtype in COMPLEX:
            out = (stack / len(ranks)).sum(0)
        else:
            out = torch.div(stack.sum(0), len(ranks), rounding_mode="trunc")
    elif op == "PREMUL_SUM":
        out = (stack * FACTOR).sum(0)
    else:
        raise ValueError(op)
    return out.to(dtype)


def same(a, b):
    """Bit-for-bit equal values and shapes (works for every dtype)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8),
                       b.contiguous().reshape(-1).view(torch.uint8))


def dtype_id(d):
    return str(d).replace("torch.", "")
