# What host code sees of a DeviceArray (src/devarray.pxi): host values converted
# to its dtype, and the host-access rule: a host read or write of its memory
# waits for the enqueued calls that use it.


cdef str _dtype_name(object dt):
    cdef int hdt = _extra_hdt(dt)
    return _EXTRA_NAMES[hdt] if hdt >= 0 else str(dt)


cdef object _host_as(object value, object dt, int hdt):
    """`value` as a numpy array of dtype `dt` (bfloat16: rounded bit patterns)."""
    a = value if isinstance(value, np.ndarray) else _host_asarray(value)
    cdef int src = _extra_hdt(a.dtype)
    if src == hdt:
        return a.view(dt) if a.dtype != dt else a
    if src >= 0 and _is_tagged(a.dtype):
        if src != HCCL_DATA_TYPE_BFP16:
            raise TypeError(f"cannot convert {_EXTRA_NAMES[src]} bit patterns to "
                            f"{_dtype_name(dt)} without ml_dtypes")
        a = bfloat16_to_float(a)        # bit patterns -> values, not integers
    if hdt in _EXTRA_NAMES and a.dtype.kind == "u" and a.dtype.itemsize == dt.itemsize:
        return a.view(dt)                # unsigned ints of the same size: bit patterns
    if _is_tagged(dt):
        if (hdt != HCCL_DATA_TYPE_BFP16 and hdt != HCCL_DATA_TYPE_FP8E8M0
                and a.dtype.kind in "biuf" and not a.any()):
            return np.zeros(a.shape, dt)    # +0.0 is all zero bits (e4m3fn, e5m2)
        if hdt != HCCL_DATA_TYPE_BFP16:
            raise TypeError(f"converting {a.dtype} values to {_EXTRA_NAMES[hdt]} needs "
                            f"ml_dtypes; pass uint8 bit patterns instead")
        return float_to_bfloat16(a).view(dt)
    return a.astype(dt, copy=False)


cdef object _host_asarray(object obj):
    """A numpy array for a host object (array-like, buffer or DLPack CPU object)."""
    if isinstance(obj, np.ndarray):
        return obj
    if (not PyObject_CheckBuffer(obj) and hasattr(obj, "__dlpack__")
            and not hasattr(obj, "__array_interface__")):
        try:
            return _from_dlpack(obj, "asarray", "obj")
        except BufferError:
            if not hasattr(obj, "__array__"):
                raise
    return np.asarray(obj)


cdef int _note_users(Stream s, object objects) except -1:
    """Mark the memory of every DeviceArray among `objects` as used by the call just
    kept alive on `s`, so host access waits for it (DeviceArray._wait_users)."""
    cdef _Memory m
    if isinstance(objects, DeviceArray):
        m = (<DeviceArray>objects)._mem
        m.user = s
        m.user_ticket = s._enqueued
    elif type(objects) is tuple or type(objects) is list:
        for o in objects:
            if isinstance(o, DeviceArray):
                m = (<DeviceArray>o)._mem
                m.user = s
                m.user_ticket = s._enqueued
    return 0


cdef int _wait_users(_Memory m) except -1:
    """Host access rule: wait for the last enqueued call that uses `m`, on whatever
    stream, and raise its failure. Free when nothing is pending."""
    cdef Stream s
    if m.user is None:
        return 0
    s = <Stream>m.user
    s._prune()
    if s._completed < m.user_ticket and not s._destroyed:
        s.synchronize()
    m.user = None
    return 0


cdef int _sync_current() except -1:
    """Wait for the current stream, so a synchronous copy is ordered after it."""
    cdef Stream s = _resolve_stream(None, "synchronize")
    s.synchronize()
    return 0
