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
    cdef object layout         # None: C order; else (shape, strides in elements)


cdef _Buf _as_buf(object obj, str api, str argname, bint writable, object dtype,
                  int32_t device, bint any_order=False):
    """Resolve a buffer argument, raising TypeError/ValueError/BufferError.

    `dtype` (not None) reinterprets the bytes as that HCCL type (e.g.
    BFLOAT16 on a uint16 array). `device` is the communicator's device.
    `any_order`: accept any dense layout (Fortran order, transposes), for
    element-wise collectives where memory order does not matter.
    """
    cdef _Buf b = _Buf.__new__(_Buf)
    cdef DeviceArray a
    cdef cnp.ndarray arr
    cdef Py_ssize_t isz
    cdef int hdt
    b.obj = obj
    if isinstance(obj, DeviceArray):
        a = <DeviceArray>obj
        if not (a._contig or (any_order and _is_dense(a._shape, a._strides, a._itemsize))):
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
        b.layout = None if a._contig else _layout(a._shape, a._strides, a._itemsize)
    else:
        if obj is None:
            raise TypeError(f"{api}: {argname} must be a DeviceArray or a host array, not None")
        if not PYHCCL_HOST_RUNTIME:
            raise TypeError(f"{api}: {argname} must be a DeviceArray, not "
                            f"{type(obj).__name__}")
        if isinstance(obj, cnp.ndarray):
            arr = <cnp.ndarray>obj
        elif isinstance(obj, np.generic):
            # a numpy scalar is immutable: np.asarray() would copy it, and a result
            # written into the copy would be lost without a word
            if writable:
                raise BufferError(f"{api}: {argname} is a numpy scalar, which is immutable; "
                                  "pass a 0-d array (np.array(x)) to receive the result")
            arr = np.asarray(obj)
        elif PyObject_CheckBuffer(obj):
            # through a memoryview: the object's own memory and read-only flag, never
            # a copy (np.asarray(bytes) would make a 'S<n>' copy)
            arr = np.asarray(memoryview(obj))
        elif hasattr(obj, "__dlpack__"):
            arr = _from_dlpack(obj, api, argname)
        else:
            raise TypeError(f"{api}: {argname} must be a DeviceArray or a host array "
                            f"(buffer protocol or DLPack), not {type(obj).__name__}")
        if cnp.PyArray_IS_C_CONTIGUOUS(arr):
            b.layout = None
        elif any_order and _is_dense((<object>arr).shape, (<object>arr).strides,
                                     arr.itemsize):
            b.layout = _layout((<object>arr).shape, (<object>arr).strides, arr.itemsize)
        else:
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


cdef bint _is_dense(tuple shape, tuple strides, Py_ssize_t itemsize):
    """True if the elements fill one gap-free block starting at element 0, in any axis order."""
    cdef Py_ssize_t expect = itemsize
    dims = []
    for k in range(len(shape)):
        if shape[k] == 0:
            return True
        if shape[k] != 1:
            if strides[k] <= 0:
                return False
            dims.append((strides[k], shape[k]))
    for st, n in sorted(dims):
        if st != expect:
            return False
        expect *= n
    return True


cdef object _layout(tuple shape, tuple strides, Py_ssize_t itemsize):
    return (shape, tuple(s // itemsize for s in strides))


cdef int _check_same_layout(_Buf a, _Buf b, str api, str an, str bn) except -1:
    """Element-wise collectives pair elements by memory position: the orders must agree."""
    if a.layout is None and b.layout is None:
        return 0
    la = a.layout if a.layout is not None else "C order"
    lb = b.layout if b.layout is not None else "C order"
    if la != lb:
        raise ValueError(f"{api}: {an} and {bn} have different memory layouts "
                         f"({_layout_name(a.layout)} and {_layout_name(b.layout)}); "
                         "elements are paired by memory position, so use the same order")
    return 0


cdef str _layout_name(object layout):
    if layout is None:
        return "C order"
    shape, strides = layout
    return f"shape {shape}, strides {strides} elements"


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
