# Shapes, strides and basic indexing of DeviceArray (src/devarray.pxi).


cdef tuple _norm_shape(object shape, str api, bint allow_neg1=False):
    """Shape tuple from an int or a sequence of ints."""
    cdef list dims = []
    cdef Py_ssize_t unknown = -1
    try:
        seq = (operator.index(shape),)
    except TypeError:
        try:
            seq = tuple(shape)
        except TypeError:
            raise TypeError(f"{api}: shape must be an int or a sequence of ints, "
                            f"not {type(shape).__name__}") from None
    for d in seq:
        try:
            n = operator.index(d)
        except TypeError:
            raise TypeError(f"{api}: shape entries must be ints, not {type(d).__name__}") from None
        if n < 0:
            if allow_neg1 and n == -1 and unknown < 0:
                unknown = len(dims)
            else:
                raise ValueError(f"{api}: negative dimension {n} in shape {tuple(seq)}")
        dims.append(n)
    if len(dims) > _MAX_DIMS:
        raise ValueError(f"{api}: more than {_MAX_DIMS} dimensions")
    return tuple(dims)


cdef tuple _c_strides(tuple shape, Py_ssize_t itemsize):
    cdef list strides = [0] * len(shape)
    cdef Py_ssize_t acc = itemsize
    cdef Py_ssize_t k
    for k in range(len(shape) - 1, -1, -1):
        strides[k] = acc
        acc *= max(<Py_ssize_t>shape[k], 1)
    return tuple(strides)


cdef bint _is_c_contig(tuple shape, tuple strides, Py_ssize_t itemsize):
    cdef Py_ssize_t expect = itemsize
    cdef Py_ssize_t k
    for k in range(len(shape)):
        if shape[k] == 0:
            return True
    for k in range(len(shape) - 1, -1, -1):
        if shape[k] != 1:
            if strides[k] != expect:
                return False
            expect *= shape[k]
    return True


cdef Py_ssize_t _prod(tuple shape):
    cdef Py_ssize_t n = 1
    for d in shape:
        n *= <Py_ssize_t>d
    return n



cdef DeviceArray _indexed(DeviceArray a, object key):
    """a[key]: a view for ints, slices, Ellipsis and None (numpy's basic indexing)."""
    cdef Py_ssize_t offset = a._offset
    cdef Py_ssize_t dim = 0, n, st, i, start, stop, step, length
    cdef list shape = [], strides = []
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = 0
    n_real = 0
    for k in key:
        if k is Ellipsis:
            n_ell += 1
        elif k is not None:
            n_real += 1
    if n_ell > 1:
        raise IndexError("DeviceArray: an index can only have a single ellipsis ('...')")
    if n_real > len(a._shape):
        raise IndexError(f"DeviceArray: too many indices: array is {len(a._shape)}-"
                         f"dimensional, but {n_real} were indexed")
    fill = (slice(None),) * (len(a._shape) - n_real)
    if n_ell:
        pos = key.index(Ellipsis)
        key = key[:pos] + fill + key[pos + 1:]
    else:
        key = key + fill
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n = a._shape[dim]
        st = a._strides[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length > 0:
                offset += start * st
            shape.append(length)
            strides.append(st * step)
        else:
            if isinstance(k, (bool, np.bool_)):
                raise IndexError("DeviceArray: boolean indices are not supported")
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError("DeviceArray: only integers, slices, Ellipsis and None "
                                 f"are valid indices, not {type(k).__name__}") from None
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"DeviceArray: index {k} is out of bounds for axis "
                                 f"{dim} with size {n}")
            offset += i * st
        dim += 1
    return _new_view(a._mem, offset, tuple(shape), tuple(strides), a._dtype, a._hdt)
