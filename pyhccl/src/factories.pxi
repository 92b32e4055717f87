# Factories of DeviceArray: empty, zeros, ones, full, asarray, array, *_like.

def empty(shape, dtype=np.float64):
    """Return a new uninitialised DeviceArray on the current device."""
    return _new_array(shape, dtype, "empty")


def zeros(shape, dtype=np.float64):
    """Return a new DeviceArray filled with zeros."""
    return _new_array(shape, dtype, "zeros").fill(0)


def ones(shape, dtype=np.float64):
    """Return a new DeviceArray filled with ones."""
    return _new_array(shape, dtype, "ones").fill(1)


def full(shape, fill_value, dtype=None):
    """Return a new DeviceArray filled with `fill_value` (dtype inferred when None)."""
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    return _new_array(shape, dtype, "full").fill(fill_value)


def asarray(obj, dtype=None, stream=None):
    """Return `obj` as a DeviceArray: itself if already one, else a device copy.

    Args:
        obj: a DeviceArray, or host data numpy can read (arrays, lists,
            buffer-protocol and DLPack CPU objects).
        dtype: element type (default: that of `obj`).
        stream: None: synchronous copy; a Stream: enqueued on it.
    """
    cdef DeviceArray src
    if isinstance(obj, DeviceArray):
        src = <DeviceArray>obj
        if dtype is None or _as_datatype(dtype, "asarray") == src._hdt:
            return obj
        obj = src.get()
    host = _host_asarray(obj)
    if dtype is None:
        dtype = host.dtype
    dt, hdt = _array_dtype(dtype, "asarray")
    out = _empty(host.shape, dt, hdt, "asarray")
    out.set(host, stream)
    return out


def array(obj, dtype=None, copy=True, stream=None):
    """Return a DeviceArray copy of `obj` (a DeviceArray or host data).

    With copy=False a DeviceArray of the right dtype is returned as is.
    """
    if isinstance(obj, DeviceArray) and copy:
        if dtype is None or _as_datatype(dtype, "array") == (<DeviceArray>obj)._hdt:
            return obj.copy(stream)
    return asarray(obj, dtype, stream)


def empty_like(a, dtype=None, shape=None):
    """Return a new uninitialised DeviceArray with the shape and dtype of `a`."""
    return DeviceArray(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None):
    """Return a new DeviceArray of zeros with the shape and dtype of `a`."""
    return empty_like(a, dtype, shape).fill(0)


def ones_like(a, dtype=None, shape=None):
    """Return a new DeviceArray of ones with the shape and dtype of `a`."""
    return empty_like(a, dtype, shape).fill(1)


def full_like(a, fill_value, dtype=None, shape=None):
    """Return a new DeviceArray filled with `fill_value`, shaped like `a`."""
    return empty_like(a, dtype, shape).fill(fill_value)
