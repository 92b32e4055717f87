# DeviceArray: a numpy-like n-d view of device memory (aclrtMalloc), and the
# factories that make one.

# Arrays up to this many elements show their values in repr() (numpy summarises
# from 1000 elements on; a device array also has to be copied first).
_REPR_MAX = 1000


cdef DeviceArray _new_view(_Memory mem, Py_ssize_t offset, tuple shape, tuple strides,
                           object dt, int hdt):
    cdef DeviceArray a = DeviceArray.__new__(DeviceArray)
    a._set_view(mem, offset, shape, strides, dt, hdt)
    return a


cdef DeviceArray _empty(tuple shape, object dt, int hdt, str api):
    total = dt.itemsize                # Python ints: the product must not wrap
    for d in shape:
        total *= d
    if total > sys.maxsize:
        raise ValueError(f"{api}: shape {shape} of {_dtype_name(dt)} is too large "
                         f"({total} bytes)")
    cdef Py_ssize_t n = total
    cdef _Memory mem = _alloc(n, api)
    return _new_view(mem, 0, shape, _c_strides(shape, dt.itemsize), dt, hdt)


cdef DeviceArray _new_array(object shape, object dtype, str api):
    """A new uninitialised array, its arguments' errors naming `api`."""
    dt, hdt = _array_dtype(dtype, api)
    return _empty(_norm_shape(shape, api), dt, hdt, api)


cdef class DeviceArray:
    """An n-d array in device memory (aclrtMalloc), numpy-like.

    DeviceArray(shape, dtype=numpy.float64) allocates an uninitialised array on
    the current device; see also empty(), zeros(), full(), asarray(). Basic
    indexing (ints, slices with steps, Ellipsis, None) returns views sharing
    the memory, which lives as long as any view of it.

    Synchronous transfers (get(), set(), fill(), copy() without `stream`) first
    wait for the current stream; with `stream=` they are enqueued on it and
    return at once (the result is valid after the stream is synchronised).
    """

    cdef _Memory _mem
    cdef Py_ssize_t _offset        # bytes from _mem.ptr to element 0
    cdef tuple _shape
    cdef tuple _strides            # bytes
    cdef object _dtype             # numpy dtype
    cdef int _hdt                  # HcclDataType
    cdef Py_ssize_t _itemsize
    cdef Py_ssize_t _size
    cdef bint _contig
    cdef object __weakref__

    def __init__(self, shape, dtype=np.float64):
        cdef DeviceArray tmp = _new_array(shape, dtype, "DeviceArray")
        self._set_view(tmp._mem, 0, tmp._shape, tmp._strides, tmp._dtype, tmp._hdt)

    cdef int _set_view(self, _Memory mem, Py_ssize_t offset, tuple shape, tuple strides,
                       object dt, int hdt) except -1:
        self._mem = mem
        self._offset = offset
        self._shape = shape
        self._strides = strides
        self._dtype = dt
        self._hdt = hdt
        self._itemsize = dt.itemsize
        self._size = _prod(shape)
        self._contig = _is_c_contig(shape, strides, self._itemsize)
        return 0

    # ---- attributes ------------------------------------------------------

    @property
    def shape(self):
        """Tuple of dimensions."""
        return self._shape

    @property
    def dtype(self):
        """numpy dtype of the elements.

        numpy has no bfloat16 or float8 types: for those this is ml_dtypes'
        dtype when ml_dtypes is installed, otherwise an unsigned integer
        dtype of the same size (uint16 for bfloat16) whose values are the bit
        patterns; hccl_dtype then still says BFLOAT16, and repr() says so.
        """
        return self._dtype

    @property
    def hccl_dtype(self):
        """DataType of the elements, as passed to HCCL."""
        return DataType(self._hdt)

    @property
    def size(self):
        """Number of elements."""
        return self._size

    @property
    def nbytes(self):
        """Bytes of the elements (size * itemsize)."""
        return self._size * self._itemsize

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self._shape)

    @property
    def itemsize(self):
        """Bytes per element."""
        return self._itemsize

    @property
    def strides(self):
        """Bytes to step in each dimension."""
        return self._strides

    @property
    def ptr(self):
        """Device address of element 0, as an int."""
        return <uintptr_t>self._mem.ptr + self._offset

    @property
    def device(self):
        """Device id the memory belongs to."""
        return self._mem.device

    @property
    def is_contiguous(self):
        """True if the elements are C-contiguous."""
        return self._contig

    # No element-wise arithmetic runs on the device, so a comparison cannot give an
    # array as numpy's would; refuse it rather than answer False (object identity).
    def __richcmp__(self, other, int op):
        raise TypeError("DeviceArray: comparison operators are not supported (no device "
                        "arithmetic); compare on the host, e.g. a.get() == 0, or use `is`")

    def __hash__(self):
        return object.__hash__(self)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self._shape[0]

    def __repr__(self):
        """Values like numpy's repr for arrays of up to _REPR_MAX elements, else the shape.

        Showing values copies the array to the host after waiting for the
        current stream.
        """
        name = _dtype_name(self._dtype)
        if _is_tagged(self._dtype):
            name += (f" (numpy dtype {self._dtype.name}: bit patterns; install ml_dtypes "
                     "for a numpy dtype of it)")
        tail = f"dtype={name}, device={self._mem.device}"
        if self._size <= _REPR_MAX and (self._hdt == HCCL_DATA_TYPE_BFP16
                                        or not _is_tagged(self._dtype)):
            try:
                values = self.get()
                if _is_tagged(self._dtype):
                    values = bfloat16_to_float(values).reshape(self._shape)
                body = np.array2string(values, separator=", ", prefix="DeviceArray(")
                if self._size == 0:
                    body = f"[], shape={self._shape}"
                return f"DeviceArray({body}, {tail})"
            except Exception:          # e.g. a failed stream: still say what it is
                pass
        return f"DeviceArray(shape={self._shape}, {tail})"

    # ---- views -----------------------------------------------------------

    def __getitem__(self, key):
        return _indexed(self, key)

    def __setitem__(self, key, value):
        cdef DeviceArray view = self[key]
        if isinstance(value, DeviceArray):
            view.copy_from(value)
        elif np.ndim(value) == 0 and not isinstance(value, np.ndarray):
            view.fill(value)
        else:
            view.set(value)

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d DeviceArray")
        for i in range(self._shape[0]):
            yield self[i]

    def reshape(self, *shape):
        """Return a view with a new shape (one dimension may be -1); contiguous arrays only.

        Raises:
            ValueError: the sizes differ or the array is not contiguous.
        """
        cdef Py_ssize_t known = 1, k
        if len(shape) == 1:
            shape = shape[0]
        cdef tuple shp = _norm_shape(shape, "reshape", True)
        cdef list dims = list(shp)
        for k in range(len(dims)):
            if dims[k] != -1:
                known *= dims[k]
        if -1 in dims:
            if known == 0 or self._size % known:
                raise ValueError(f"reshape: cannot reshape array of size {self._size} "
                                 f"into shape {shp}")
            dims[dims.index(-1)] = self._size // known
        elif known != self._size:
            raise ValueError(f"reshape: cannot reshape array of size {self._size} "
                             f"into shape {shp}")
        if not self._contig:
            raise ValueError("reshape: the array is not contiguous; copy() it first")
        shp = tuple(dims)
        return _new_view(self._mem, self._offset, shp, _c_strides(shp, self._itemsize),
                         self._dtype, self._hdt)

    def ravel(self):
        """Return a 1-d view (contiguous arrays) or a contiguous 1-d copy."""
        if self._contig:
            return self.reshape(-1)
        return self.copy().reshape(-1)

    def view(self, dtype):
        """Return a view of the same memory with another dtype.

        With a different itemsize the array must be contiguous; the last
        dimension is rescaled. Useful to see bfloat16 data as uint16 and back.
        """
        dt, hdt = _array_dtype(dtype, "view")
        if dt.itemsize == self._itemsize:
            return _new_view(self._mem, self._offset, self._shape, self._strides, dt, hdt)
        if not self._contig:
            raise ValueError("view: changing the itemsize needs a contiguous array")
        shape = self._shape if self._shape else (1,)
        last = shape[-1] * self._itemsize
        if last % dt.itemsize:
            raise ValueError(f"view: the last dimension ({last} bytes) is not a multiple "
                             f"of {dt.itemsize}")
        shp = shape[:-1] + (last // dt.itemsize,)
        return _new_view(self._mem, self._offset, shp, _c_strides(shp, dt.itemsize), dt, hdt)

    @property
    def T(self):
        """The transposed view (axes reversed)."""
        return _new_view(self._mem, self._offset, self._shape[::-1], self._strides[::-1],
                         self._dtype, self._hdt)

    # ---- transfers ---------------------------------------------------------

    cdef int _to_host(self, object out, object stream, str api) except -1:
        cdef Stream s
        cdef char *dst = <char *><uintptr_t>out.__array_interface__["data"][0]
        cdef char *src = <char *>self._mem.ptr + self._offset
        if stream is None:
            _wait_users(self._mem)
            _sync_current()
            _strided_copy(dst, out.strides, src, self._strides, self._shape,
                          self._itemsize, ACL_MEMCPY_DEVICE_TO_HOST, NULL, False)
        else:
            s = _resolve_stream(stream, api)
            _strided_copy(dst, out.strides, src, self._strides, self._shape,
                          self._itemsize, ACL_MEMCPY_DEVICE_TO_HOST, s._handle, True)
            s._keepalive((self, out))
        return 0

    cdef int _from_host(self, object host, object stream, str api) except -1:
        cdef Stream s
        cdef char *src = <char *><uintptr_t>host.__array_interface__["data"][0]
        cdef char *dst = <char *>self._mem.ptr + self._offset
        if stream is None:
            _wait_users(self._mem)
            _sync_current()
            _strided_copy(dst, self._strides, src, host.strides, self._shape,
                          self._itemsize, ACL_MEMCPY_HOST_TO_DEVICE, NULL, False)
        else:
            s = _resolve_stream(stream, api)
            _strided_copy(dst, self._strides, src, host.strides, self._shape,
                          self._itemsize, ACL_MEMCPY_HOST_TO_DEVICE, s._handle, True)
            s._keepalive((self, host))
        return 0

    cdef int _from_device(self, DeviceArray src, object stream, str api) except -1:
        cdef Stream s
        cdef char *sp = <char *>src._mem.ptr + src._offset
        cdef char *dp = <char *>self._mem.ptr + self._offset
        if src._shape != self._shape:
            raise ValueError(f"{api}: shapes {src._shape} and {self._shape} differ")
        if src._hdt != self._hdt:
            raise TypeError(f"{api}: dtypes {_dtype_name(src._dtype)} and "
                            f"{_dtype_name(self._dtype)} differ")
        if stream is None:
            _wait_users(self._mem)
            _wait_users(src._mem)
            _sync_current()
            _strided_copy(dp, self._strides, sp, src._strides, self._shape,
                          self._itemsize, ACL_MEMCPY_DEVICE_TO_DEVICE, NULL, False)
        else:
            s = _resolve_stream(stream, api)
            _strided_copy(dp, self._strides, sp, src._strides, self._shape,
                          self._itemsize, ACL_MEMCPY_DEVICE_TO_DEVICE, s._handle, True)
            s._keepalive((self, src))
        return 0

    def get(self, stream=None):
        """Copy the array to a new numpy array and return it.

        Args:
            stream: None: wait for the current stream and for the enqueued
                calls that use this array on any stream (raising a failed
                one's error), then copy synchronously. A Stream: enqueue the
                copy on it and return at once; the result is valid after
                stream.synchronize().

        Returns:
            numpy.ndarray of the same shape and dtype (C-contiguous).
        """
        out = np.empty(self._shape, dtype=self._dtype)
        self._to_host(out, stream, "get")
        return out

    def to_numpy(self, stream=None):
        """Copy the array to a new numpy array and return it (same as get())."""
        return self.get(stream)

    def set(self, value, stream=None):
        """Copy host data into the array (host to device).

        Args:
            value: array-like broadcastable to the array's shape; converted to
                its dtype (floats are rounded to bfloat16 for bfloat16 arrays;
                uint16 input is taken as bfloat16 bit patterns).
            stream: None: wait for the current stream, then copy synchronously.
                A Stream: enqueue the copy and return at once.

        Returns:
            self.
        """
        host = _host_as(value, self._dtype, self._hdt)
        if host.shape != self._shape:
            try:
                host = np.broadcast_to(host, self._shape)
            except ValueError:
                raise ValueError(f"set: value of shape {host.shape} does not fit an array "
                                 f"of shape {self._shape}") from None
        if not host.flags.c_contiguous:
            host = np.ascontiguousarray(host)
        self._from_host(host, stream, "set")
        return self

    def fill(self, value, stream=None):
        """Set every element to the scalar `value`.

        Byte patterns (0, or values whose bytes are all equal) use aclrtMemset;
        other values are copied from a host buffer.

        Args:
            value: a scalar, converted to the array's dtype.
            stream: None: synchronous; a Stream: enqueued on it.

        Returns:
            self.
        """
        cdef Stream s
        cdef int byte
        cdef size_t n = self._size * self._itemsize
        cdef void *p = <char *>self._mem.ptr + self._offset
        if np.ndim(value) != 0:
            raise ValueError("fill: value must be a scalar")
        one = _host_as(np.asarray(value).reshape(1), self._dtype, self._hdt)
        raw = one.view(np.uint8)
        if self._size == 0:
            return self
        if self._contig and bool((raw == raw[0]).all()):
            byte = raw[0]
            if stream is None:
                _wait_users(self._mem)
                _sync_current()
                with nogil:
                    CHKACL(aclrtMemset(p, n, byte, n), "aclrtMemset")
            else:
                s = _resolve_stream(stream, "fill")
                with nogil:
                    CHKACL(aclrtMemsetAsync(p, n, byte, n, s._handle), "aclrtMemsetAsync")
                s._keepalive(self)
            return self
        host = np.ascontiguousarray(np.broadcast_to(one.reshape(()), self._shape))
        self._from_host(host, stream, "fill")
        return self

    def copy(self, stream=None):
        """Return a C-contiguous device copy (device to device).

        Args:
            stream: None: synchronous; a Stream: enqueued on it.
        """
        cdef DeviceArray out = _empty(self._shape, self._dtype, self._hdt, "copy")
        out._from_device(self, stream, "copy")
        return out

    def copy_to(self, dst, stream=None):
        """Copy this array into `dst` (a DeviceArray or a writable host array).

        Shapes must match; dtypes must match for a DeviceArray.

        Returns:
            dst.
        """
        if isinstance(dst, DeviceArray):
            (<DeviceArray>dst)._from_device(self, stream, "copy_to")
            return dst
        host = _host_asarray(dst)
        if not host.flags.writeable:
            raise ValueError("copy_to: dst is read-only")
        if host.shape != self._shape:
            raise ValueError(f"copy_to: shapes {self._shape} and {host.shape} differ")
        if _numpy_to_hccl(host.dtype) != self._hdt:
            raise TypeError(f"copy_to: dtypes {_dtype_name(self._dtype)} and "
                            f"{_dtype_name(host.dtype)} differ")
        self._to_host(host, stream, "copy_to")
        return dst

    def copy_from(self, src, stream=None):
        """Copy `src` (a DeviceArray of the same shape and dtype, or host data) into this array.

        Returns:
            self.
        """
        if isinstance(src, DeviceArray):
            self._from_device(<DeviceArray>src, stream, "copy_from")
            return self
        return self.set(src, stream)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("DeviceArray: converting to numpy needs a copy "
                             "(numpy.from_dlpack(a) shares memory on the host runtime)")
        out = self.get()
        if dtype is not None:
            out = out.astype(dtype, copy=False)
        return out

    # ---- DLPack ------------------------------------------------------------

    def __dlpack_device__(self):
        """Return the DLPack device (kDLCPU, 0) on the host runtime, (kDLExtDev, id) on CANN."""
        if PYHCCL_HOST_RUNTIME:
            return (1, 0)
        return (12, self._mem.device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export the array as a DLPack capsule (zero copy unless copy=True).

        On the host runtime device memory is host memory, so
        numpy.from_dlpack(a) views it without a copy. The export first waits
        for the enqueued calls that use the array (host reads are ordered
        after pending device writes); work enqueued after the export is the
        consumer's to synchronise.
        """
        if stream is not None and stream != -1:
            raise BufferError("__dlpack__: stream must be None on the host runtime")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"__dlpack__: cannot export to device {tuple(dl_device)}")
        if copy:
            return self.copy().__dlpack__(max_version=max_version)
        _wait_users(self._mem)       # the consumer reads at once: order it after our writers
        versioned = max_version is not None and max_version[0] >= 1
        return _dlpack_export(self, versioned)
