# Device memory ownership and strided copies between host and device memory.
# Python never dereferences device memory: every transfer is an aclrtMemcpy.

cdef enum:
    _MAX_DIMS = 64


cdef class _Memory:
    """One aclrtMalloc allocation, shared by every view of it."""

    cdef void *ptr
    cdef size_t nbytes
    cdef int32_t device
    cdef int generation
    cdef int device_generation
    cdef object user            # the Stream of the last enqueued call that uses it, or None
    cdef uint64_t user_ticket   # that call's ticket on the stream

    def __dealloc__(self):
        cdef void *p = self.ptr
        self.ptr = NULL
        if p == NULL or not _initialized or self.generation != _generation:
            return
        if _device_generation.get(self.device, 0) != self.device_generation:
            return
        with nogil:
            aclrtFree(p)


cdef _Memory _alloc(size_t nbytes, str api):
    """Allocate at least one byte on the current device."""
    cdef _Memory mem = _Memory.__new__(_Memory)
    cdef void *p = NULL
    cdef size_t n = nbytes if nbytes > 0 else 1
    mem.device = _current_device()
    with nogil:
        CHKACL(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    mem.ptr = p
    mem.nbytes = nbytes
    mem.generation = _generation
    mem.device_generation = _device_generation.get(mem.device, 0)
    return mem


cdef int _strided_copy(char *dst, tuple dst_strides, char *src, tuple src_strides,
                       tuple shape, Py_ssize_t itemsize, aclrtMemcpyKind kind,
                       aclrtStream stream, bint use_stream) except -1:
    """Copy an n-d block element by element run, merging contiguous inner runs.

    Each contiguous run becomes one aclrtMemcpy (or aclrtMemcpyAsync on
    `stream` when `use_stream`).
    """
    cdef Py_ssize_t ndim = 0, k, run = itemsize, total
    cdef Py_ssize_t ext[_MAX_DIMS]
    cdef Py_ssize_t dst_st[_MAX_DIMS]
    cdef Py_ssize_t src_st[_MAX_DIMS]
    cdef Py_ssize_t idx[_MAX_DIMS]
    cdef Py_ssize_t doff = 0, soff = 0
    cdef aclError err = ACL_SUCCESS
    if len(shape) > _MAX_DIMS:
        raise ValueError(f"copy: more than {_MAX_DIMS} dimensions")
    for k in range(len(shape)):
        if shape[k] == 0:
            return 0
        if shape[k] == 1:
            continue
        ext[ndim] = shape[k]
        dst_st[ndim] = dst_strides[k]
        src_st[ndim] = src_strides[k]
        ndim += 1
    # merge contiguous innermost dimensions into one run
    while ndim > 0 and dst_st[ndim - 1] == run and src_st[ndim - 1] == run:
        run *= ext[ndim - 1]
        ndim -= 1
    total = 1
    for k in range(ndim):
        total *= ext[k]
        idx[k] = 0
    with nogil:
        while total > 0:
            if use_stream:
                err = aclrtMemcpyAsync(dst + doff, run, src + soff, run, kind, stream)
            else:
                err = aclrtMemcpy(dst + doff, run, src + soff, run, kind)
            if err != ACL_SUCCESS:
                break
            total -= 1
            k = ndim - 1
            while k >= 0:
                idx[k] += 1
                doff += dst_st[k]
                soff += src_st[k]
                if idx[k] < ext[k]:
                    break
                doff -= dst_st[k] * ext[k]
                soff -= src_st[k] * ext[k]
                idx[k] = 0
                k -= 1
    if use_stream:
        CHKACL(err, "aclrtMemcpyAsync")
    else:
        CHKACL(err, "aclrtMemcpy")
    return 0
