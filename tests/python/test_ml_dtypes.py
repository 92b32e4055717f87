"""ml_dtypes (only where it is installed): its bfloat16 and float8 dtypes map to HCCL's
types, DeviceArrays use them, and collectives take arrays of them."""

import numpy as np
import pytest

import pyhccl
from conftest import assert_all

ml_dtypes = pytest.importorskip("ml_dtypes")

pytestmark = pytest.mark.mpi

MAPPING = [("bfloat16", pyhccl.BFLOAT16), ("float8_e4m3fn", pyhccl.FP8E4M3),
           ("float8_e5m2", pyhccl.FP8E5M2), ("float8_e8m0fnu", pyhccl.FP8E8M0)]


@pytest.mark.parametrize("name,hccl", MAPPING)
def test_dtypes_map(name, hccl):
    if not hasattr(ml_dtypes, name):
        pytest.skip(f"this ml_dtypes has no {name}")
    dt = np.dtype(getattr(ml_dtypes, name))
    assert pyhccl.as_datatype(dt) is hccl
    a = pyhccl.empty(3, hccl)
    assert a.dtype == dt and a.hccl_dtype is hccl
    values = np.array([1.0, 2.0, 0.5], dt)
    b = pyhccl.asarray(values)
    assert b.hccl_dtype is hccl and np.array_equal(b.get(), values)
    assert repr(b).startswith("DeviceArray([") and name in repr(b)


def test_bfloat16_is_ml_dtypes(pair):
    comm, _ = pair
    assert pyhccl.bfloat16 == np.dtype(ml_dtypes.bfloat16)
    x = np.arange(8).astype(ml_dtypes.bfloat16) + comm.rank
    comm.all_reduce(x)
    pyhccl.current_stream().synchronize()
    expect = sum(np.arange(8) + r for r in range(comm.size))
    assert_all(np.array_equal(x.astype(np.float64), expect), "bfloat16 all_reduce: wrong result")


def test_float8_collectives_are_refused_by_the_host_runtime(self_comm):
    x = np.zeros(4, ml_dtypes.float8_e4m3fn)
    with pytest.raises(pyhccl.HcclError, match="HCCL_E_NOT_SUPPORT"):
        self_comm.all_reduce(x)
