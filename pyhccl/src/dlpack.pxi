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
    if a._hdt == HCCL_DATA_TYPE_BFP16:
        code = 4          # kDLBfloat
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
