# Data types and reduction operations: the IntEnums and the conversions that
# accept enums, ints, strings, numpy dtypes and (for ops) mpi4py ops.


class DataType(IntEnum):
    """Element type of an HCCL buffer (HcclDataType values)."""

    INT8 = HCCL_DATA_TYPE_INT8
    INT16 = HCCL_DATA_TYPE_INT16
    INT32 = HCCL_DATA_TYPE_INT32
    FLOAT16 = HCCL_DATA_TYPE_FP16
    FLOAT32 = HCCL_DATA_TYPE_FP32
    INT64 = HCCL_DATA_TYPE_INT64
    UINT64 = HCCL_DATA_TYPE_UINT64
    UINT8 = HCCL_DATA_TYPE_UINT8
    UINT16 = HCCL_DATA_TYPE_UINT16
    UINT32 = HCCL_DATA_TYPE_UINT32
    FLOAT64 = HCCL_DATA_TYPE_FP64
    BFLOAT16 = HCCL_DATA_TYPE_BFP16
    INT128 = HCCL_DATA_TYPE_INT128
    HIF8 = HCCL_DATA_TYPE_HIF8
    FP8E4M3 = HCCL_DATA_TYPE_FP8E4M3
    FP8E5M2 = HCCL_DATA_TYPE_FP8E5M2
    FP8E8M0 = HCCL_DATA_TYPE_FP8E8M0

    @property
    def itemsize(self):
        """Bytes per element."""
        return _DT_ITEMSIZE[self]

    # print() shows the name (Python 3.11's IntEnum prints the bare number); format()
    # and f-strings still give the number, as for any int.
    def __str__(self):
        return f"DataType.{self.name}"

    def __format__(self, spec):
        return int.__format__(int(self), spec)


class ReduceOp(IntEnum):
    """Reduction operation of a reducing collective (HcclReduceOp values)."""

    SUM = HCCL_REDUCE_SUM
    PROD = HCCL_REDUCE_PROD
    MAX = HCCL_REDUCE_MAX
    MIN = HCCL_REDUCE_MIN

    def __str__(self):
        return f"ReduceOp.{self.name}"

    def __format__(self, spec):
        return int.__format__(int(self), spec)


INT8 = DataType.INT8
INT16 = DataType.INT16
INT32 = DataType.INT32
INT64 = DataType.INT64
UINT8 = DataType.UINT8
UINT16 = DataType.UINT16
UINT32 = DataType.UINT32
UINT64 = DataType.UINT64
FLOAT16 = DataType.FLOAT16
FLOAT32 = DataType.FLOAT32
FLOAT64 = DataType.FLOAT64
BFLOAT16 = DataType.BFLOAT16
INT128 = DataType.INT128
HIF8 = DataType.HIF8
FP8E4M3 = DataType.FP8E4M3
FP8E5M2 = DataType.FP8E5M2
FP8E8M0 = DataType.FP8E8M0

SUM = ReduceOp.SUM
PROD = ReduceOp.PROD
MAX = ReduceOp.MAX
MIN = ReduceOp.MIN

_DT_ITEMSIZE = {
    0: 1, 1: 2, 2: 4, 3: 2, 4: 4, 5: 8, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 2,
    12: 16, 14: 1, 15: 1, 16: 1, 17: 1,
}

_DT_ALIASES = {
    "int8": 0, "int16": 1, "int32": 2, "int64": 5,
    "uint8": 7, "uint16": 8, "uint32": 9, "uint64": 6,
    "float16": 3, "fp16": 3, "half": 3,
    "float32": 4, "fp32": 4, "single": 4,
    "float64": 10, "fp64": 10, "double": 10,
    "bfloat16": 11, "bf16": 11, "bfp16": 11,
    "int128": 12, "hif8": 14, "fp8e4m3": 15, "fp8e5m2": 16, "fp8e8m0": 17,
    "hifloat8": 14, "float8_e4m3fn": 15, "float8_e5m2": 16, "float8_e8m0fnu": 17,
}

_OP_ALIASES = {"sum": 0, "prod": 1, "product": 1, "max": 2, "min": 3}

# bfloat16 and the float8 types as numpy dtypes: ml_dtypes' when installed,
# otherwise integer storage of the same size tagged by dtype metadata (numpy
# itself has none of them; values are then bit patterns).
_EXTRA_NAMES = {HCCL_DATA_TYPE_BFP16: "bfloat16", HCCL_DATA_TYPE_FP8E4M3: "float8_e4m3fn",
                HCCL_DATA_TYPE_FP8E5M2: "float8_e5m2", HCCL_DATA_TYPE_FP8E8M0: "float8_e8m0fnu"}
try:
    import ml_dtypes as _ml_dtypes
    _HAVE_ML_DTYPES = True
except ImportError:
    _HAVE_ML_DTYPES = False


cdef object _make_extra_dtype(int hdt):
    name = _EXTRA_NAMES[hdt]
    if _HAVE_ML_DTYPES and hasattr(_ml_dtypes, name):
        return np.dtype(getattr(_ml_dtypes, name))
    return np.dtype(np.uint16 if hdt == HCCL_DATA_TYPE_BFP16 else np.uint8,
                    metadata={"pyhccl": name})


_EXTRA_DTYPES = {hdt: _make_extra_dtype(hdt) for hdt in _EXTRA_NAMES}
_EXTRA_BY_NAME = {name: hdt for hdt, name in _EXTRA_NAMES.items()}
bfloat16 = _EXTRA_DTYPES[HCCL_DATA_TYPE_BFP16]


cdef object _extra_dtype(int hdt):
    """numpy dtype of bfloat16 / a float8 type (ml_dtypes', or tagged integers)."""
    return _EXTRA_DTYPES[hdt]


cdef inline bint _is_tagged(object dt):
    """True for the tagged integer stand-ins (values are bit patterns)."""
    return dt.metadata is not None and "pyhccl" in dt.metadata

# (kind, itemsize) of a native numpy dtype -> HcclDataType
_NP_KIND_SIZE = {
    ("i", 1): 0, ("i", 2): 1, ("i", 4): 2, ("i", 8): 5,
    ("u", 1): 7, ("u", 2): 8, ("u", 4): 9, ("u", 8): 6,
    ("f", 2): 3, ("f", 4): 4, ("f", 8): 10,
}

# HcclDataType -> numpy dtype used by DeviceArray
_DT_NUMPY = {
    0: np.dtype(np.int8), 1: np.dtype(np.int16), 2: np.dtype(np.int32),
    5: np.dtype(np.int64), 7: np.dtype(np.uint8), 8: np.dtype(np.uint16),
    9: np.dtype(np.uint32), 6: np.dtype(np.uint64), 3: np.dtype(np.float16),
    4: np.dtype(np.float32), 10: np.dtype(np.float64),
}
_DT_NUMPY.update(_EXTRA_DTYPES)

_NP_CACHE = {}


cdef inline bint _is_bf16_dtype(object dt):
    return _extra_hdt(dt) == HCCL_DATA_TYPE_BFP16


cdef inline int _extra_hdt(object dt):
    """HCCL type of a bfloat16 / float8 dtype (ml_dtypes' or tagged), else -1."""
    if dt.metadata is not None:
        name = dt.metadata.get("pyhccl")
        if name is not None:
            return _EXTRA_BY_NAME.get(name, -1)
    if dt.fields is None:                  # ml_dtypes' types, by name
        return _EXTRA_BY_NAME.get(dt.name, -1)
    return -1


cdef int _numpy_to_hccl(object dt) except -2:
    """HcclDataType of numpy dtype `dt`, or -1 if it has none."""
    cdef object hit
    if dt.metadata is None:
        hit = _NP_CACHE.get(dt)
        if hit is not None:
            return hit
    res = _extra_hdt(dt)
    if res < 0 and dt.isnative:
        res = _NP_KIND_SIZE.get((dt.kind, dt.itemsize), -1)
    if dt.metadata is None:
        _NP_CACHE[dt] = res
    return res


cdef int _as_datatype(object x, str api) except -1:
    """HcclDataType value of `x` (DataType, int, str or numpy dtype-like)."""
    cdef object v
    if isinstance(x, DataType):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        if x in _DT_ITEMSIZE:
            return x
        raise ValueError(f"{api}: unknown HCCL data type {x}")
    if isinstance(x, str):
        v = _DT_ALIASES.get(x.lower())
        if v is not None:
            return v
    try:
        dt = np.dtype(x)
    except Exception:
        raise TypeError(f"{api}: unknown dtype {x!r}") from None
    v = _numpy_to_hccl(dt)
    if v < 0:
        raise TypeError(f"{api}: dtype {dt} is not supported by HCCL")
    return v


def as_datatype(x):
    """Convert a dtype-like value to a DataType.

    Accepts a DataType, its int value, a name ("float32", "fp16", "bfloat16"),
    or anything numpy.dtype() accepts (numpy dtypes, np.float32, "f4").

    Raises:
        TypeError: `x` is not a dtype or HCCL has no such type.
        ValueError: an int that is no HcclDataType value.
    """
    return DataType(_as_datatype(x, "as_datatype"))


cdef object _array_dtype(object x, str api):
    """(numpy dtype, HcclDataType) for a DeviceArray of dtype `x`."""
    cdef int hdt = _as_datatype(x, api)
    dt = _DT_NUMPY.get(hdt)
    if dt is None:
        raise TypeError(f"{api}: {DataType(hdt).name} has no array representation; "
                        f"use uint8 buffers and dtype=pyhccl.{DataType(hdt).name} "
                        "in collectives")
    return dt, hdt


cdef int _as_op(object op, str api) except -1:
    """HcclReduceOp value of `op` (ReduceOp, int, str or mpi4py op)."""
    cdef object v
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, int) and not isinstance(op, bool):
        if 0 <= op <= 3:
            return op
        raise ValueError(f"{api}: unknown reduction op {op}")
    if isinstance(op, str):
        v = _OP_ALIASES.get(op.lower())
        if v is not None:
            return v
        raise ValueError(f"{api}: unknown reduction op {op!r}")
    if type(op).__module__.startswith("mpi4py"):
        from pyhccl.mpi import MPI, to_op
        if isinstance(op, MPI.Op):      # other mpi4py objects fall to the TypeError
            try:
                return to_op(op)
            except ValueError as exc:
                raise ValueError(f"{api}: {exc}") from None
    raise TypeError(f"{api}: op must be a ReduceOp, str or mpi4py op, "
                    f"not {type(op).__name__}")


def as_op(op):
    """Convert an op-like value to a ReduceOp.

    Accepts a ReduceOp, its int value, a name ("sum", "prod", "max", "min")
    or an mpi4py op (MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN).

    Raises:
        TypeError: `op` is of no accepted type.
        ValueError: no HCCL reduction matches `op`.
    """
    return ReduceOp(_as_op(op, "as_op"))


# ---- bfloat16 helpers (numpy has no bfloat16) ----------------------------

def float_to_bfloat16(x):
    """Round float values to bfloat16 (nearest even) and return the bit patterns.

    Args:
        x: array-like of floats.

    Returns:
        numpy.ndarray of uint16 bit patterns, same shape as `x`.
    """
    f = np.ascontiguousarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded


def bfloat16_to_float(bits):
    """Return float32 values of bfloat16 bit patterns (uint16 array-like)."""
    b = np.ascontiguousarray(bits)
    if b.dtype.itemsize != 2:
        raise TypeError(f"bfloat16_to_float: expected 2-byte elements, got {b.dtype}")
    return (b.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
