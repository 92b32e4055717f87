# Buffers of collectives: a DeviceArray or (on the host runtime) a host array,
# resolved in one place into pointer, element count and HCCL data type.

cdef class _Buf:
    """A collective's view of one buffer argument."""

    cdef void *ptr
    cdef uint64_t count        # elements of `hdt`
    cdef int hdt
    cdef Py_ssize_t nbytes
    cdef bint readonly
    cdef object obj            # what the caller passed (returned as the result)
    cdef object keep           # what keeps the memory alive


cdef _Buf _as_buf(object obj, str api, str argname, bint writable, object dtype,
                  int32_t device):
    """Resolve a buffer argument, raising TypeError/ValueError/BufferError.

    `dtype` (not None) reinterprets the bytes as that HCCL type (e.g.
    BFLOAT16 on a uint16 array). `device` is the communicator's device.
    """
    cdef _Buf b = _Buf.__new__(_Buf)
    cdef DeviceArray a
    cdef cnp.ndarray arr
    cdef Py_ssize_t isz
    cdef int hdt
    b.obj = obj
    if isinstance(obj, DeviceArray):
        a = <DeviceArray>obj
        if not a._contig:
            raise BufferError(f"{api}: {argname} is not contiguous")
        if a._mem.device != device:
            raise ValueError(f"{api}: {argname} is on device {a._mem.device}, "
                             f"the communicator on device {device}")
        b.ptr = <char *>a._mem.ptr + a._offset
        b.nbytes = a._size * a._itemsize
        b.hdt = a._hdt
        b.count = a._size
        b.readonly = False
        b.keep = a
    else:
        if obj is None:
            raise TypeError(f"{api}: {argname} must be a DeviceArray or a host array, not None")
        if not PYHCCL_HOST_RUNTIME:
            raise TypeError(f"{api}: {argname} must be a DeviceArray, not "
                            f"{type(obj).__name__}")
        if isinstance(obj, cnp.ndarray):
            arr = <cnp.ndarray>obj
        elif PyObject_CheckBuffer(obj):
            arr = np.asarray(obj)
        elif hasattr(obj, "__dlpack__"):
            try:
                arr = np.from_dlpack(obj)
            except (BufferError, TypeError, ValueError, RuntimeError) as exc:
                raise BufferError(f"{api}: {argname} cannot be read through DLPack "
                                  f"as host memory: {exc}") from None
        else:
            raise TypeError(f"{api}: {argname} must be a DeviceArray or a host array "
                            f"(buffer protocol or DLPack), not {type(obj).__name__}")
        if not cnp.PyArray_IS_C_CONTIGUOUS(arr):
            raise BufferError(f"{api}: {argname} is not contiguous")
        b.ptr = cnp.PyArray_DATA(arr)
        b.nbytes = cnp.PyArray_NBYTES(arr)
        b.readonly = not cnp.PyArray_ISWRITEABLE(arr)
        b.keep = arr
        hdt = _numpy_to_hccl(arr.dtype)
        if hdt < 0 and dtype is None:
            raise TypeError(f"{api}: {argname} has dtype {arr.dtype}, which HCCL does "
                            "not support")
        b.hdt = hdt
        b.count = cnp.PyArray_SIZE(arr)
    if dtype is not None:
        hdt = _as_datatype(dtype, api)
        isz = _DT_ITEMSIZE[hdt]
        if b.nbytes % isz:
            raise ValueError(f"{api}: {argname} has {b.nbytes} bytes, not a whole number "
                             f"of {DataType(hdt).name} elements")
        b.hdt = hdt
        b.count = b.nbytes // isz
    if writable and b.readonly:
        raise BufferError(f"{api}: {argname} is read-only")
    return b


cdef str _dt_name(int hdt):
    try:
        return DataType(hdt).name.lower()
    except ValueError:
        return str(hdt)


cdef int _check_same_dtype(_Buf a, _Buf b, str api, str an, str bn) except -1:
    if a.hdt != b.hdt:
        raise TypeError(f"{api}: {an} dtype {_dt_name(a.hdt)} does not match "
                        f"{bn} dtype {_dt_name(b.hdt)}")
    return 0


cdef int _check_no_overlap(_Buf a, _Buf b, str api, Py_ssize_t allowed_offset) except -1:
    """Reject partly overlapping buffers; identical ones are in place.

    `allowed_offset` >= 0 also accepts `a` starting that many bytes into `b`
    (the in-place layout of all_gather / reduce_scatter).
    """
    cdef uintptr_t pa = <uintptr_t>a.ptr, pb = <uintptr_t>b.ptr
    if a.nbytes == 0 or b.nbytes == 0 or pa == pb:
        return 0
    if allowed_offset >= 0 and pa == pb + allowed_offset:
        return 0
    if pa < pb + b.nbytes and pb < pa + a.nbytes:
        raise ValueError(f"{api}: sendbuf and recvbuf overlap without being in place")
    return 0
