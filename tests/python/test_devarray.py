"""DeviceArray: factories, attributes, views, transfers, DLPack, bfloat16."""

import gc
import threading
import weakref

import numpy as np
import pytest

import pyhccl
from conftest import DEVICE, DTYPES


def host(dtype, shape, start=0):
    """Small exact values of `dtype` (bfloat16 as float32 values)."""
    n = int(np.prod(shape))
    vals = (np.arange(n) % 50 + start).reshape(shape)
    return vals.astype(np.float32 if dtype == "bfloat16" else dtype)


def to_values(a):
    """Host values of a DeviceArray (bfloat16 decoded to float32)."""
    out = a.get()
    if a.hccl_dtype == pyhccl.BFLOAT16:
        return pyhccl.bfloat16_to_float(out)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype):
    x = host(dtype, (3, 5))
    a = pyhccl.asarray(x, dtype=dtype)
    assert a.shape == (3, 5) and a.size == 15 and a.ndim == 2 and len(a) == 3
    assert a.itemsize == np.dtype(np.uint16 if dtype == "bfloat16" else dtype).itemsize
    assert a.nbytes == 15 * a.itemsize and a.strides == (5 * a.itemsize, a.itemsize)
    assert a.is_contiguous and a.device == DEVICE and a.ptr != 0
    assert a.hccl_dtype == pyhccl.as_datatype(dtype)
    assert np.array_equal(to_values(a), x)
    text = repr(a)
    assert text.startswith("DeviceArray([[") and f", device={DEVICE})" in text
    assert f"dtype={dtype}" in text and text.count("\n") == 2      # values, like numpy
    values = to_values(a)
    if dtype != "bfloat16":
        assert np.array2string(values, separator=", ").split("\n")[0][1:] in text


def test_repr():
    big = pyhccl.zeros((100, 100), "float32")
    assert repr(big) == f"DeviceArray(shape=(100, 100), dtype=float32, device={DEVICE})"
    assert repr(pyhccl.zeros(0, "int8")) == f"DeviceArray([], shape=(0,), dtype=int8, device={DEVICE})"
    assert repr(pyhccl.asarray(np.arange(3, dtype=np.int32))) == \
        f"DeviceArray([0, 1, 2], dtype=int32, device={DEVICE})"
    bf = repr(pyhccl.asarray([1.5, -2.0], dtype="bfloat16"))
    if pyhccl.bfloat16 == np.dtype(np.uint16):                   # without ml_dtypes
        assert bf.startswith("DeviceArray([ 1.5, -2. ], dtype=bfloat16 (numpy dtype uint16: "
                             "bit patterns; install ml_dtypes")
    else:                                                        # numpy prints ml_dtypes'
        assert bf.startswith("DeviceArray([1.5, -2], dtype=bfloat16, device=")


def test_factories():
    assert np.array_equal(pyhccl.zeros((2, 3), "int32").get(), np.zeros((2, 3), np.int32))
    assert np.array_equal(pyhccl.ones(4, np.float16).get(), np.ones(4, np.float16))
    f = pyhccl.full((2, 2), 7)
    assert f.dtype == np.asarray(7).dtype and np.all(f.get() == 7)
    assert pyhccl.full(3, 2.5, dtype="float32").get().tolist() == [2.5] * 3
    e = pyhccl.empty((4,), "uint8")
    assert e.shape == (4,) and e.dtype == np.uint8
    assert pyhccl.empty(3).dtype == np.float64
    like = np.zeros((2, 5), np.int16)
    assert pyhccl.empty_like(like).shape == (2, 5) and pyhccl.empty_like(like).dtype == np.int16
    assert np.all(pyhccl.zeros_like(like).get() == 0)
    assert np.all(pyhccl.ones_like(pyhccl.zeros(3, "int64")).get() == 1)
    assert np.all(pyhccl.full_like(like, -3, dtype="float64").get() == -3.0)
    a = pyhccl.asarray([[1, 2], [3, 4]])
    assert a.shape == (2, 2) and a.get().tolist() == [[1, 2], [3, 4]]
    assert pyhccl.asarray(a) is a
    b = pyhccl.array(a)
    assert b is not a and b.ptr != a.ptr and b.get().tolist() == a.get().tolist()
    c = pyhccl.asarray(a, dtype="float32")
    assert c.dtype == np.float32 and c.get().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    d = pyhccl.DeviceArray((2, 3), "int8")
    assert d.shape == (2, 3) and d.dtype == np.int8


def test_zero_size_and_zero_dim():
    z = pyhccl.zeros(0, "float32")
    assert z.size == 0 and z.nbytes == 0 and z.get().shape == (0,)
    z.fill(3)
    z.set(np.zeros(0, np.float32))
    assert z.copy().size == 0
    s = pyhccl.asarray(np.float64(2.5))
    assert s.shape == () and s.ndim == 0 and s.get() == 2.5
    with pytest.raises(TypeError):
        len(s)
    e = pyhccl.zeros((3, 0, 2))
    assert e.size == 0 and e[1:].shape == (2, 0, 2)


def test_basic_indexing_matches_numpy():
    x = np.arange(4 * 5 * 6, dtype=np.int32).reshape(4, 5, 6)
    a = pyhccl.asarray(x)
    keys = [1, -1, (2, 3), (slice(None), 2), slice(1, 3), slice(None, None, 2),
            slice(None, None, -1), (Ellipsis, 1), (None, 1), (1, None, slice(None, None, -2)),
            (slice(3, 0, -2), Ellipsis, slice(1, 5, 3)), (Ellipsis,), (slice(10, 20),),
            (np.int64(2), slice(None), None), (-4, -5, -6), slice(-100, 100)]
    for key in keys:
        v = a[key]
        expect = x[key]
        assert v.shape == expect.shape, key
        assert v.strides == expect.strides, key
        assert np.array_equal(v.get(), expect), key
        assert v.is_contiguous == expect.flags.c_contiguous or expect.size <= 1, key
    assert a[1, 2, 3].shape == () and a[1, 2, 3].get() == x[1, 2, 3]
    # views of views share memory
    v = a[1:, ::2][1]
    assert np.array_equal(v.get(), x[1:, ::2][1])
    base = x.__array_interface__["data"][0]
    assert v.ptr == a.ptr + x[1:, ::2][1].__array_interface__["data"][0] - base


@pytest.mark.parametrize("key, exc", [((0, 0, 0, 0), IndexError), (4, IndexError), (-5, IndexError),
                                      ((Ellipsis, Ellipsis), IndexError), ([0, 1], IndexError),
                                      (True, IndexError), (1.5, IndexError), ("a", IndexError)])
def test_bad_indices(key, exc):
    a = pyhccl.zeros((4, 5, 6))
    with pytest.raises(exc):
        a[key]


def test_views_keep_memory_alive():
    a = pyhccl.asarray(np.arange(10, dtype=np.float32))
    v = a[2:5]
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is None
    assert v.get().tolist() == [2.0, 3.0, 4.0]


def test_setitem_and_fill():
    a = pyhccl.zeros((3, 4), "int16")
    a[1] = 5
    a[:, 0] = np.array([7, 8, 9])
    a[2, 1:3] = pyhccl.asarray(np.array([1, 2], np.int16))
    a[0, ::2] = [3, 4]
    x = np.zeros((3, 4), np.int16)
    x[1] = 5
    x[:, 0] = [7, 8, 9]
    x[2, 1:3] = [1, 2]
    x[0, ::2] = [3, 4]
    assert np.array_equal(a.get(), x)
    # memset path (all bytes equal) and host path, on a whole array and on a strided view
    b = pyhccl.empty((4, 4), "int32").fill(-1)
    assert np.all(b.get() == -1)
    b[::2, 1::2].fill(123456)
    y = np.full((4, 4), -1, np.int32)
    y[::2, 1::2] = 123456
    assert np.array_equal(b.get(), y)
    with pytest.raises(ValueError):
        b.fill([1, 2])


def test_reshape_ravel_view_transpose():
    x = np.arange(24, dtype=np.float32)
    a = pyhccl.asarray(x)
    r = a.reshape(2, 3, 4)
    assert r.shape == (2, 3, 4) and r.ptr == a.ptr
    assert np.array_equal(r.get(), x.reshape(2, 3, 4))
    assert a.reshape((4, -1)).shape == (4, 6)
    assert a.reshape(-1).shape == (24,)
    with pytest.raises(ValueError):
        a.reshape(5, 5)
    with pytest.raises(ValueError):
        a.reshape(-1, 7)
    with pytest.raises(ValueError, match="contiguous"):
        r[:, ::2].reshape(-1)
    assert np.array_equal(r[:, ::2].ravel().get(), x.reshape(2, 3, 4)[:, ::2].ravel())
    t = r.T
    assert t.shape == (4, 3, 2) and np.array_equal(t.get(), x.reshape(2, 3, 4).T)
    u = a.view("int32")
    assert u.dtype == np.int32 and np.array_equal(u.get(), x.view(np.int32))
    h = a.view("uint16")
    assert h.shape == (48,) and np.array_equal(h.get(), x.view(np.uint16))
    assert [row.get().tolist() for row in a.reshape(3, 8)][1] == x.reshape(3, 8)[1].tolist()


def test_copy_and_copy_to_from():
    x = np.arange(30, dtype=np.float64).reshape(5, 6)
    a = pyhccl.asarray(x)
    c = a[::2, ::-3].copy()
    assert c.is_contiguous and np.array_equal(c.get(), x[::2, ::-3])
    out = np.zeros((5, 6))
    a.copy_to(out)
    assert np.array_equal(out, x)
    d = pyhccl.zeros((5, 6))
    a.copy_to(d)
    assert np.array_equal(d.get(), x)
    d.copy_from(np.ones((5, 6)))
    assert np.all(d.get() == 1)
    d[1:3].copy_from(a[3:])
    assert np.array_equal(d.get()[1:3], x[3:])
    with pytest.raises(ValueError):
        a.copy_to(np.zeros((6, 5)))
    with pytest.raises(TypeError):
        a.copy_to(pyhccl.zeros((5, 6), "float32"))
    with pytest.raises(ValueError):
        a.copy_to(pyhccl.zeros((5, 5)))
    ro = np.zeros((5, 6))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        a.copy_to(ro)
    with pytest.raises(ValueError):
        d.set(np.zeros(7))


def test_async_transfers(stream):
    x = np.arange(1000, dtype=np.int64)
    a = pyhccl.empty(1000, "int64")
    a.set(x, stream=stream)
    b = a.copy(stream=stream)
    b[::2].fill(-1, stream=stream)
    out = b.get(stream=stream)
    stream.synchronize()
    expect = x.copy()
    expect[::2] = -1
    assert np.array_equal(out, expect)
    assert stream._pending_count() == 0


def test_async_get_keeps_objects_alive(stream):
    gate = threading.Event()
    stream.launch_host_func(gate.wait, 30)
    try:
        a = pyhccl.asarray(np.arange(100, dtype=np.float32))
        out = a.get(stream=stream)
        ref = weakref.ref(a)
        del a
        gc.collect()
        assert ref() is not None          # held until the copy has run
        assert not stream.query()
    finally:
        gate.set()
    stream.synchronize()
    gc.collect()
    assert ref() is None
    assert np.array_equal(out, np.arange(100, dtype=np.float32))


def test_dlpack_zero_copy_with_numpy():
    a = pyhccl.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a.__dlpack_device__() == (1, 0)
    v = np.from_dlpack(a)
    assert v.shape == (3, 4) and v.dtype == np.float32
    v[1, 2] = 100.0                   # host runtime: device memory is host memory
    assert a.get()[1, 2] == 100.0
    s = np.from_dlpack(a[::2, ::-1])
    assert np.array_equal(s, a.get()[::2, ::-1])
    back = pyhccl.asarray(v)
    assert np.array_equal(back.get(), a.get()) and back.ptr != a.ptr
    c = np.from_dlpack(a, copy=True)
    assert c.__array_interface__["data"][0] != a.ptr and np.array_equal(c, a.get())


def test_dlpack_capsules_and_lifetime():
    a = pyhccl.asarray(np.arange(6, dtype=np.int16))
    legacy = a.__dlpack__()
    versioned = a.__dlpack__(max_version=(1, 0))
    assert "dltensor" in repr(legacy) and "dltensor_versioned" in repr(versioned)
    ref = weakref.ref(a)
    v = np.from_dlpack(a)
    del a, legacy, versioned
    gc.collect()
    assert ref() is not None          # the numpy view keeps the array alive
    assert v.tolist() == list(range(6))
    del v
    gc.collect()
    assert ref() is None
    with pytest.raises(BufferError):
        pyhccl.zeros(3).__dlpack__(dl_device=(2, 0))


def test_array_protocol():
    a = pyhccl.asarray(np.arange(5, dtype=np.uint32))
    assert np.asarray(a).tolist() == [0, 1, 2, 3, 4]
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError):
        np.asarray(a, copy=False)


def test_bfloat16_arrays():
    vals = np.array([1.0, -2.0, 0.5, 3.0, 256.0], np.float32)
    a = pyhccl.asarray(vals, dtype="bfloat16")
    assert a.hccl_dtype == pyhccl.BFLOAT16 and a.itemsize == 2
    assert repr(a).startswith("DeviceArray([") and "dtype=bfloat16" in repr(a)
    assert ("256" in repr(a)) and ("0.5" in repr(a))            # values, not bit patterns
    assert np.array_equal(pyhccl.bfloat16_to_float(a.get()), vals)
    bits = a.view("uint16")
    assert bits.dtype == np.uint16
    assert np.array_equal(bits.get(), pyhccl.float_to_bfloat16(vals))
    back = bits.view(pyhccl.bfloat16)
    assert back.hccl_dtype == pyhccl.BFLOAT16
    f = pyhccl.full(3, 1.5, dtype=pyhccl.BFLOAT16)
    assert np.array_equal(pyhccl.bfloat16_to_float(f.get()), [1.5, 1.5, 1.5])
    # uint16 input is taken as bit patterns
    raw = pyhccl.asarray(pyhccl.float_to_bfloat16(vals), dtype="bfloat16")
    assert np.array_equal(raw.get().view(np.uint16), pyhccl.float_to_bfloat16(vals))
    # bfloat16 data converted to another dtype keeps its values
    assert np.array_equal(pyhccl.asarray(a, dtype="float32").get(), vals)
    assert np.array_equal(pyhccl.zeros(5, "float64").set(a.get()).get(), vals)


def test_unsupported_array_dtypes():
    with pytest.raises(TypeError):
        pyhccl.zeros(3, "complex64")
    with pytest.raises(TypeError):
        pyhccl.asarray(np.array([True, False]))
    with pytest.raises(TypeError, match="no array representation"):
        pyhccl.zeros(3, pyhccl.HIF8)
    with pytest.raises(ValueError):
        pyhccl.zeros(-1)
    with pytest.raises(TypeError):
        pyhccl.zeros("abc")


def test_comparisons_are_refused_and_enums_print_their_names():
    """DeviceArray == 0 answered False (identity); it is refused, naming the host
    alternative. print(pyhccl.FLOAT32) printed 4."""
    a = pyhccl.zeros(3, "float32")
    for compare in (lambda: a == 0, lambda: a != 0, lambda: a < 1, lambda: a == a):
        with pytest.raises(TypeError, match=r"DeviceArray: comparison operators are not "
                           r"supported .*a.get\(\) == 0"):
            compare()
    assert len({a, a}) == 1                      # still hashable, by identity
    assert str(pyhccl.FLOAT32) == "DataType.FLOAT32" and str(pyhccl.SUM) == "ReduceOp.SUM"
    assert f"{pyhccl.FLOAT32}" == "4" and int(pyhccl.MAX) == 2
