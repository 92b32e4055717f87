# DLPack export of DeviceArray (legacy "dltensor" and versioned
# "dltensor_versioned" capsules). Struct layouts follow the DLPack spec.

cdef extern from *:
    """
    #include <stdint.h>
    typedef struct { int32_t device_type; int32_t device_id; } pyhccl_DLDevice;
    typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } pyhccl_DLDataType;
    typedef struct {
        void *data;
        pyhccl_DLDevice device;
        int32_t ndim;
        pyhccl_DLDataType dtype;
        int64_t *shape;
        int64_t *strides;
        uint64_t byte_offset;
    } pyhccl_DLTensor;
    typedef struct pyhccl_DLManagedTensor {
        pyhccl_DLTensor dl_tensor;
        void *manager_ctx;
        void (*deleter)(struct pyhccl_DLManagedTensor *self);
    } pyhccl_DLManagedTensor;
    typedef struct { uint32_t major; uint32_t minor; } pyhccl_DLPackVersion;
    typedef struct pyhccl_DLManagedTensorVersioned {
        pyhccl_DLPackVersion version;
        void *manager_ctx;
        void (*deleter)(struct pyhccl_DLManagedTensorVersioned *self);
        uint64_t flags;
        pyhccl_DLTensor dl_tensor;
    } pyhccl_DLManagedTensorVersioned;
    """
    ctypedef struct pyhccl_DLDevice:
        int32_t device_type
        int32_t device_id
    ctypedef struct pyhccl_DLDataType:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef struct pyhccl_DLTensor:
        void *data
        pyhccl_DLDevice device
        int32_t ndim
        pyhccl_DLDataType dtype
        int64_t *shape
        int64_t *strides
        uint64_t byte_offset
    ctypedef struct pyhccl_DLManagedTensor:
        pyhccl_DLTensor dl_tensor
        void *manager_ctx
        void (*deleter)(pyhccl_DLManagedTensor *) noexcept
    ctypedef struct pyhccl_DLPackVersion:
        uint32_t major
        uint32_t minor
    ctypedef struct pyhccl_DLManagedTensorVersioned:
        pyhccl_DLPackVersion version
        void *manager_ctx
        void (*deleter)(pyhccl_DLManagedTensorVersioned *) noexcept
        uint64_t flags
        pyhccl_DLTensor dl_tensor


cdef void _dl_release(void *manager_ctx) noexcept with gil:
    Py_DECREF(<object>manager_ctx)


cdef void _dl_deleter(pyhccl_DLManagedTensor *t) noexcept nogil:
    if t != NULL:
        _dl_release(t.manager_ctx)
        free(t)


cdef void _dl_deleter_versioned(pyhccl_DLManagedTensorVersioned *t) noexcept nogil:
    if t != NULL:
        _dl_release(t.manager_ctx)
        free(t)


cdef void _dl_capsule_destructor(object capsule) noexcept:
    cdef pyhccl_DLManagedTensor *t
    if PyCapsule_IsValid(capsule, b"dltensor"):
        t = <pyhccl_DLManagedTensor *>PyCapsule_GetPointer(capsule, b"dltensor")
        if t != NULL and t.deleter != NULL:
            t.deleter(t)


cdef void _dl_capsule_destructor_versioned(object capsule) noexcept:
    cdef pyhccl_DLManagedTensorVersioned *t
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        t = <pyhccl_DLManagedTensorVersioned *>PyCapsule_GetPointer(
            capsule, b"dltensor_versioned")
        if t != NULL and t.deleter != NULL:
            t.deleter(t)


cdef int _dl_fill(pyhccl_DLTensor *t, DeviceArray a, int64_t *dims) except -1:
    cdef int ndim = len(a._shape)
    cdef int k
    cdef uint8_t code
    kind = a._dtype.kind
    if a._hdt in _DL_EXTRA_CODES:
        code = _DL_EXTRA_CODES[a._hdt]    # kDLBfloat, kDLFloat8_*
    elif kind == "i":
        code = 0          # kDLInt
    elif kind == "u":
        code = 1          # kDLUInt
    elif kind == "f":
        code = 2          # kDLFloat
    else:
        raise BufferError(f"__dlpack__: dtype {_dtype_name(a._dtype)} has no DLPack type")
    t.data = a._mem.ptr
    t.byte_offset = a._offset
    dev = a.__dlpack_device__()
    t.device.device_type = dev[0]
    t.device.device_id = dev[1]
    t.ndim = ndim
    t.dtype.code = code
    t.dtype.bits = <uint8_t>(a._itemsize * 8)
    t.dtype.lanes = 1
    t.shape = dims
    t.strides = dims + ndim
    for k in range(ndim):
        dims[k] = a._shape[k]
        dims[ndim + k] = a._strides[k] // a._itemsize
    return 0


cdef object _dlpack_export(DeviceArray a, bint versioned):
    cdef int ndim = len(a._shape)
    cdef size_t dims_bytes = sizeof(int64_t) * 2 * (ndim if ndim > 0 else 1)
    cdef pyhccl_DLManagedTensor *mt
    cdef pyhccl_DLManagedTensorVersioned *vt
    cdef void *block
    if versioned:
        block = malloc(sizeof(pyhccl_DLManagedTensorVersioned) + dims_bytes)
        if block == NULL:
            raise MemoryError()
        vt = <pyhccl_DLManagedTensorVersioned *>block
        try:
            _dl_fill(&vt.dl_tensor, a, <int64_t *>(vt + 1))
        except BaseException:
            free(block)
            raise
        vt.version.major = 1
        vt.version.minor = 0
        vt.flags = 0
        vt.manager_ctx = <void *>a
        vt.deleter = _dl_deleter_versioned
        Py_INCREF(a)
        return PyCapsule_New(block, b"dltensor_versioned", _dl_capsule_destructor_versioned)
    block = malloc(sizeof(pyhccl_DLManagedTensor) + dims_bytes)
    if block == NULL:
        raise MemoryError()
    mt = <pyhccl_DLManagedTensor *>block
    try:
        _dl_fill(&mt.dl_tensor, a, <int64_t *>(mt + 1))
    except BaseException:
        free(block)
        raise
    mt.manager_ctx = <void *>a
    mt.deleter = _dl_deleter
    Py_INCREF(a)
    return PyCapsule_New(block, b"dltensor", _dl_capsule_destructor)


# ---- DLPack import: host (CPU) tensors of other frameworks ------------------
#
# numpy.from_dlpack handles the common types; bfloat16 and float8 (which numpy
# lacks) come through this importer as arrays of pyhccl's dtypes for them.

from cpython.pycapsule cimport PyCapsule_SetName

# DLPack type code -> HCCL type of the float types numpy has no dtype for
_DL_EXTRA_TYPES = {(4, 16): HCCL_DATA_TYPE_BFP16, (10, 8): HCCL_DATA_TYPE_FP8E4M3,
                   (12, 8): HCCL_DATA_TYPE_FP8E5M2, (14, 8): HCCL_DATA_TYPE_FP8E8M0}
_DL_EXTRA_CODES = {hdt: key[0] for key, hdt in _DL_EXTRA_TYPES.items()}
_DL_READ_ONLY = 1


cdef class _DLOwner:
    """Owns an imported DLPack tensor; numpy arrays over it keep it alive."""

    cdef void *_managed
    cdef bint _versioned
    cdef public dict __array_interface__

    def __dealloc__(self):
        cdef pyhccl_DLManagedTensor *mt
        cdef pyhccl_DLManagedTensorVersioned *vt
        if self._managed == NULL:
            return
        if self._versioned:
            vt = <pyhccl_DLManagedTensorVersioned *>self._managed
            if vt.deleter != NULL:
                vt.deleter(vt)
        else:
            mt = <pyhccl_DLManagedTensor *>self._managed
            if mt.deleter != NULL:
                mt.deleter(mt)
        self._managed = NULL


cdef object _dlpack_import(object obj, str api, str argname):
    """A numpy array viewing `obj`'s DLPack CPU tensor (of any type pyhccl knows)."""
    cdef pyhccl_DLTensor *t
    cdef _DLOwner owner = _DLOwner.__new__(_DLOwner)
    cdef bint readonly = False
    cdef int k
    try:
        capsule = obj.__dlpack__(max_version=(1, 0))
    except TypeError:
        capsule = obj.__dlpack__()        # a producer older than DLPack 1.0
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        owner._managed = PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        owner._versioned = True
        PyCapsule_SetName(capsule, b"used_dltensor_versioned")
        t = &(<pyhccl_DLManagedTensorVersioned *>owner._managed).dl_tensor
        readonly = ((<pyhccl_DLManagedTensorVersioned *>owner._managed).flags
                    & _DL_READ_ONLY) != 0
    elif PyCapsule_IsValid(capsule, b"dltensor"):
        owner._managed = PyCapsule_GetPointer(capsule, b"dltensor")
        PyCapsule_SetName(capsule, b"used_dltensor")
        t = &(<pyhccl_DLManagedTensor *>owner._managed).dl_tensor
    else:
        raise BufferError(f"{api}: {argname}.__dlpack__() returned no DLPack capsule")
    if t.device.device_type not in (1, 3):            # kDLCPU, kDLCUDAHost
        raise BufferError(f"{api}: {argname} is on DLPack device type "
                          f"{t.device.device_type}, not in host memory")
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _DL_EXTRA_TYPES:
        raise BufferError(f"{api}: {argname} has DLPack type (code {t.dtype.code}, "
                          f"{t.dtype.bits} bits, {t.dtype.lanes} lanes), which HCCL "
                          "does not support")
    hdt = _DL_EXTRA_TYPES[key]
    isz = t.dtype.bits // 8
    shape = tuple(t.shape[k] for k in range(t.ndim))
    strides = None if t.strides == NULL else tuple(t.strides[k] * isz for k in range(t.ndim))
    owner.__array_interface__ = {
        "version": 3, "shape": shape, "strides": strides, "typestr": f"|u{isz}",
        "data": (<uintptr_t>t.data + t.byte_offset, readonly)}
    return np.asarray(owner).view(_extra_dtype(hdt))


cdef object _from_dlpack(object obj, str api, str argname):
    """numpy view of a DLPack host tensor, raising BufferError naming the call."""
    try:
        return np.from_dlpack(obj)
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
        first = exc
    try:
        return _dlpack_import(obj, api, argname)
    except BufferError as exc:
        if str(exc).startswith(f"{api}: "):
            raise
    except Exception:
        pass
    raise BufferError(f"{api}: {argname} cannot be read through DLPack as host "
                      f"memory: {first}") from None
