"""DataType / ReduceOp enums and the conversions that accept names, numpy dtypes and ops."""

import numpy as np
import pytest

import pyhccl
from pyhccl import DataType, ReduceOp


def test_datatype_values_match_hccl():
    expect = {"INT8": 0, "INT16": 1, "INT32": 2, "FLOAT16": 3, "FLOAT32": 4, "INT64": 5,
              "UINT64": 6, "UINT8": 7, "UINT16": 8, "UINT32": 9, "FLOAT64": 10,
              "BFLOAT16": 11, "INT128": 12, "HIF8": 14, "FP8E4M3": 15, "FP8E5M2": 16,
              "FP8E8M0": 17}
    assert {m.name: int(m) for m in DataType} == expect
    assert "RESERVED" not in DataType.__members__
    for name, value in expect.items():
        assert getattr(pyhccl, name) == value
    assert DataType.BFLOAT16.itemsize == 2 and DataType.INT128.itemsize == 16


def test_reduce_op_values_match_hccl():
    assert [(m.name, int(m)) for m in ReduceOp] == [("SUM", 0), ("PROD", 1), ("MAX", 2), ("MIN", 3)]
    assert (pyhccl.SUM, pyhccl.PROD, pyhccl.MAX, pyhccl.MIN) == tuple(ReduceOp)


@pytest.mark.parametrize("value, expect", [
    ("float32", DataType.FLOAT32), ("fp16", DataType.FLOAT16), ("BF16", DataType.BFLOAT16),
    ("bfloat16", DataType.BFLOAT16), ("double", DataType.FLOAT64), ("uint64", DataType.UINT64),
    (np.float32, DataType.FLOAT32), (np.dtype("int16"), DataType.INT16), ("f8", DataType.FLOAT64),
    (np.uint8, DataType.UINT8), (DataType.INT64, DataType.INT64), (11, DataType.BFLOAT16),
    (pyhccl.bfloat16, DataType.BFLOAT16), (np.intc, DataType.INT32), (np.longlong, DataType.INT64),
])
def test_as_datatype(value, expect):
    got = pyhccl.as_datatype(value)
    assert got is expect


@pytest.mark.parametrize("value, exc", [
    ("complex64", TypeError), (np.bool_, TypeError), ("nonsense", TypeError), (13, ValueError),
    (255, ValueError), (np.dtype(">f4"), TypeError), (object(), TypeError),
])
def test_as_datatype_rejects(value, exc):
    with pytest.raises(exc):
        pyhccl.as_datatype(value)


@pytest.mark.parametrize("value, expect", [
    ("sum", ReduceOp.SUM), ("PROD", ReduceOp.PROD), ("max", ReduceOp.MAX), ("min", ReduceOp.MIN),
    (0, ReduceOp.SUM), (3, ReduceOp.MIN), (ReduceOp.MAX, ReduceOp.MAX),
])
def test_as_op(value, expect):
    assert pyhccl.as_op(value) is expect


@pytest.mark.parametrize("value, exc", [("avg", ValueError), (4, ValueError), (1.0, TypeError),
                                        (True, TypeError), (None, TypeError)])
def test_as_op_rejects(value, exc):
    with pytest.raises(exc):
        pyhccl.as_op(value)


def test_bfloat16_conversion():
    x = np.array([0.0, 1.0, -2.5, 3.0, 65280.0, 1.0 / 3.0, np.inf, -np.inf], np.float32)
    bits = pyhccl.float_to_bfloat16(x)
    assert bits.dtype == np.uint16
    assert bits[1] == 0x3F80 and bits[2] == 0xC020
    back = pyhccl.bfloat16_to_float(bits)
    assert np.array_equal(back[[0, 1, 2, 3, 4, 6, 7]], x[[0, 1, 2, 3, 4, 6, 7]])
    assert abs(back[5] - 1.0 / 3.0) < 1e-2
    # round to nearest even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7
    assert pyhccl.float_to_bfloat16(np.float32(1 + 2 ** -8)) == 0x3F80
    assert pyhccl.float_to_bfloat16(np.float32(1 + 3 * 2 ** -8)) == 0x3F82
    assert np.isnan(pyhccl.bfloat16_to_float(pyhccl.float_to_bfloat16(np.float32(np.nan))))
