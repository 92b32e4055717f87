# Declarations of the ACL runtime C API ("acl/acl.h"), names unchanged.
# No logic here: see _core.pyx for the Python classes built on them. A CANN toolkit
# that lacks some of these names gets fallbacks: see the end of libhccl.pxd.

from libc.stdint cimport int32_t, uint16_t, uint32_t, uint64_t

cdef extern from "acl/acl.h" nogil:

    # ---- types ------------------------------------------------------------
    ctypedef int aclError
    ctypedef uint16_t aclFloat16
    ctypedef void *aclrtContext
    ctypedef void *aclrtStream
    ctypedef void *aclrtEvent
    ctypedef void *aclrtNotify
    ctypedef void *aclrtDrvMemHandle
    ctypedef void (*aclrtCallback)(void *userData)
    ctypedef void (*aclrtHostFunc)(void *args)

    # ---- versions ---------------------------------------------------------
    enum:
        ACL_MAJOR_VERSION
        ACL_MINOR_VERSION
        ACL_PATCH_VERSION

    # ---- aclError codes ---------------------------------------------------
    enum:
        ACL_SUCCESS
        ACL_ERROR_NONE
        ACL_ERROR_INVALID_PARAM
        ACL_ERROR_UNINITIALIZE
        ACL_ERROR_REPEAT_INITIALIZE
        ACL_ERROR_REPEAT_SUBSCRIBE
        ACL_ERROR_STREAM_NOT_SUBSCRIBE
        ACL_ERROR_THREAD_NOT_SUBSCRIBE
        ACL_ERROR_WAIT_CALLBACK_TIMEOUT
        ACL_ERROR_REPEAT_FINALIZE
        ACL_ERROR_PROF_ALREADY_RUN
        ACL_ERROR_PROF_NOT_RUN
        ACL_ERROR_PROF_REPEAT_SUBSCRIBE
        ACL_ERROR_PROF_API_CONFLICT
        ACL_ERROR_BAD_ALLOC
        ACL_ERROR_API_NOT_SUPPORT
        ACL_ERROR_INVALID_DEVICE
        ACL_ERROR_MEMORY_ADDRESS_UNALIGNED
        ACL_ERROR_RESOURCE_NOT_MATCH
        ACL_ERROR_INVALID_RESOURCE_HANDLE
        ACL_ERROR_FEATURE_UNSUPPORTED
        ACL_ERROR_PROF_MODULES_UNSUPPORTED
        ACL_ERROR_STORAGE_OVER_LIMIT
        ACL_ERROR_INTERNAL_ERROR
        ACL_ERROR_FAILURE
        ACL_ERROR_GE_FAILURE
        ACL_ERROR_RT_FAILURE
        ACL_ERROR_DRV_FAILURE
        ACL_ERROR_PROFILING_FAILURE

    # runtime codes (error_codes/rt_error_codes.h)
    enum:
        ACL_RT_SUCCESS
        ACL_ERROR_RT_PARAM_INVALID
        ACL_ERROR_RT_INVALID_DEVICEID
        ACL_ERROR_RT_CONTEXT_NULL
        ACL_ERROR_RT_STREAM_SUBSCRIBE
        ACL_ERROR_RT_THREAD_SUBSCRIBE
        ACL_ERROR_RT_STREAM_NO_CB_REG
        ACL_ERROR_RT_INVALID_HANDLE
        ACL_ERROR_RT_WAIT_TIMEOUT
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        ACL_ERROR_RT_MEMORY_ALLOCATION
        ACL_ERROR_RT_NO_DEVICE
        ACL_ERROR_RT_DEVICE_OOM
        ACL_ERROR_RT_INTERNAL_ERROR
        ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
        ACL_ERROR_RT_COMM_OP_RETRY_FAIL

    # ---- flags ------------------------------------------------------------
    enum:
        ACL_EVENT_SYNC
        ACL_EVENT_CAPTURE_STREAM_PROGRESS
        ACL_EVENT_TIME_LINE
        ACL_EVENT_DEVICE_USE_ONLY
        ACL_EVENT_EXTERNAL
        ACL_EVENT_IPC
        ACL_STREAM_FAST_LAUNCH
        ACL_STREAM_FAST_SYNC
        ACL_STREAM_PERSISTENT
        ACL_STREAM_HUGE
        ACL_STREAM_CPU_SCHEDULE
        ACL_STREAM_DEVICE_USE_ONLY
        ACL_MEM_TYPE_LOW_BAND_WIDTH
        ACL_MEM_TYPE_HIGH_BAND_WIDTH
        ACL_MEM_ACCESS_USER_SPACE_READONLY

    # ---- enums ------------------------------------------------------------
    ctypedef enum aclDataType:
        ACL_DT_UNDEFINED
        ACL_FLOAT
        ACL_FLOAT16
        ACL_INT8
        ACL_INT32
        ACL_UINT8
        ACL_INT16
        ACL_UINT16
        ACL_UINT32
        ACL_INT64
        ACL_UINT64
        ACL_DOUBLE
        ACL_BOOL
        ACL_STRING
        ACL_COMPLEX64
        ACL_COMPLEX128
        ACL_BF16
        ACL_INT4
        ACL_UINT1
        ACL_COMPLEX32
        ACL_HIFLOAT8
        ACL_FLOAT8_E5M2
        ACL_FLOAT8_E4M3FN
        ACL_FLOAT8_E8M0
        ACL_FLOAT6_E3M2
        ACL_FLOAT6_E2M3
        ACL_FLOAT4_E2M1
        ACL_FLOAT4_E1M2

    ctypedef enum aclrtRunMode:
        ACL_DEVICE
        ACL_HOST

    ctypedef enum aclrtMemcpyKind:
        ACL_MEMCPY_HOST_TO_HOST
        ACL_MEMCPY_HOST_TO_DEVICE
        ACL_MEMCPY_DEVICE_TO_HOST
        ACL_MEMCPY_DEVICE_TO_DEVICE
        ACL_MEMCPY_DEFAULT
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE
        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE
        ACL_MEMCPY_INTER_DEVICE_TO_DEVICE

    ctypedef enum aclrtMemMallocPolicy:
        ACL_MEM_MALLOC_HUGE_FIRST
        ACL_MEM_MALLOC_HUGE_ONLY
        ACL_MEM_MALLOC_NORMAL_ONLY
        ACL_MEM_MALLOC_HUGE_FIRST_P2P
        ACL_MEM_MALLOC_HUGE_ONLY_P2P
        ACL_MEM_MALLOC_NORMAL_ONLY_P2P
        ACL_MEM_MALLOC_HUGE1G_ONLY
        ACL_MEM_MALLOC_HUGE1G_ONLY_P2P

    ctypedef enum aclrtMemAttr:
        ACL_DDR_MEM
        ACL_HBM_MEM
        ACL_DDR_MEM_HUGE
        ACL_DDR_MEM_NORMAL
        ACL_HBM_MEM_HUGE
        ACL_HBM_MEM_NORMAL
        ACL_DDR_MEM_P2P_HUGE
        ACL_DDR_MEM_P2P_NORMAL
        ACL_HBM_MEM_P2P_HUGE
        ACL_HBM_MEM_P2P_NORMAL
        ACL_HBM_MEM_HUGE1G
        ACL_HBM_MEM_P2P_HUGE1G
        ACL_MEM_NORMAL
        ACL_MEM_HUGE
        ACL_MEM_HUGE1G
        ACL_MEM_P2P_NORMAL
        ACL_MEM_P2P_HUGE
        ACL_MEM_P2P_HUGE1G

    ctypedef enum aclrtEventStatus:
        ACL_EVENT_STATUS_COMPLETE
        ACL_EVENT_STATUS_NOT_READY
        ACL_EVENT_STATUS_RESERVED

    ctypedef enum aclrtEventRecordedStatus:
        ACL_EVENT_RECORDED_STATUS_NOT_READY
        ACL_EVENT_RECORDED_STATUS_COMPLETE

    ctypedef enum aclrtStreamStatus:
        ACL_STREAM_STATUS_COMPLETE
        ACL_STREAM_STATUS_NOT_READY
        ACL_STREAM_STATUS_RESERVED

    ctypedef enum aclrtCallbackBlockType:
        ACL_CALLBACK_NO_BLOCK
        ACL_CALLBACK_BLOCK

    ctypedef enum aclrtFloatOverflowMode:
        ACL_RT_OVERFLOW_MODE_SATURATION
        ACL_RT_OVERFLOW_MODE_INFNAN

    ctypedef enum aclrtMemHandleType:
        ACL_MEM_HANDLE_TYPE_NONE

    ctypedef enum aclrtMemAllocationType:
        ACL_MEM_ALLOCATION_TYPE_PINNED

    ctypedef enum aclrtMemLocationType:
        ACL_MEM_LOCATION_TYPE_HOST
        ACL_MEM_LOCATION_TYPE_DEVICE

    ctypedef enum aclrtMemGranularityOptions:
        ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM
        ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED

    ctypedef struct aclrtMemLocation:
        uint32_t id
        aclrtMemLocationType type

    ctypedef struct aclrtPhysicalMemProp:
        aclrtMemHandleType handleType
        aclrtMemAllocationType allocationType
        aclrtMemAttr memAttr
        aclrtMemLocation location
        uint64_t reserve

    # ---- init ---------------------------------------------------------------
    aclError aclInit(const char *configPath)
    aclError aclFinalize()
    aclError aclFinalizeReference(uint64_t *refCount)
    aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                             int32_t *patchVersion)
    const char *aclGetRecentErrMsg()
    size_t aclDataTypeSize(aclDataType dataType)

    # ---- device -------------------------------------------------------------
    aclError aclrtSetDevice(int32_t deviceId)
    aclError aclrtResetDevice(int32_t deviceId)
    aclError aclrtGetDevice(int32_t *deviceId)
    aclError aclrtGetDeviceCount(uint32_t *count)
    const char *aclrtGetSocName()
    aclError aclrtGetRunMode(aclrtRunMode *runMode)
    aclError aclrtSynchronizeDevice()
    aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)

    # ---- context ------------------------------------------------------------
    aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
    aclError aclrtDestroyContext(aclrtContext context)
    aclError aclrtSetCurrentContext(aclrtContext context)
    aclError aclrtGetCurrentContext(aclrtContext *context)

    # ---- stream -------------------------------------------------------------
    aclError aclrtCreateStream(aclrtStream *stream)
    aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                         uint32_t flag)
    aclError aclrtDestroyStream(aclrtStream stream)
    aclError aclrtSynchronizeStream(aclrtStream stream)
    aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
    aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
    aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
    aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)

    # ---- event --------------------------------------------------------------
    aclError aclrtCreateEvent(aclrtEvent *event)
    aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
    aclError aclrtDestroyEvent(aclrtEvent event)
    aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
    aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
    aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
    aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
    aclError aclrtSynchronizeEvent(aclrtEvent event)
    aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
    aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)

    # ---- memory -------------------------------------------------------------
    aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
    aclError aclrtFree(void *devPtr)
    aclError aclrtMallocHost(void **hostPtr, size_t size)
    aclError aclrtFreeHost(void *hostPtr)
    aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
    aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                              aclrtStream stream)
    aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                         aclrtMemcpyKind kind)
    aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                              aclrtMemcpyKind kind, aclrtStream stream)
    aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)

    # ---- host calls ---------------------------------------------------------
    aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
                                 aclrtCallbackBlockType blockType, aclrtStream stream)
    aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
    aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
    aclError aclrtProcessReport(int32_t timeout)
    aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)

    # ---- virtual memory -----------------------------------------------------
    aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                              aclrtMemGranularityOptions option,
                                              size_t *granularity)
    aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                    void *expectPtr, uint64_t flags)
    aclError aclrtReleaseMemAddress(void *virPtr)
    aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                                 const aclrtPhysicalMemProp *prop, uint64_t flags)
    aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
    aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
                         aclrtDrvMemHandle handle, uint64_t flags)
    aclError aclrtUnmapMem(void *virPtr)
