/* Second translation unit of the ABI test: includes the same headers again
 * (so linking proves they define no external symbols) and checks every public
 * prototype against the signature in docs/ABI.md. */
#include "abi_common.h"

/* ---- ACL init and device (docs/ABI.md 5.3) ------------------------------ */
ABI_SIG(aclError, aclInit, (const char *));
ABI_SIG(aclError, aclFinalize, (void));
ABI_SIG(aclError, aclFinalizeReference, (uint64_t *));
ABI_SIG(aclError, aclrtGetVersion, (int32_t *, int32_t *, int32_t *));
ABI_SIG(const char *, aclGetRecentErrMsg, (void));
ABI_SIG(size_t, aclDataTypeSize, (aclDataType));
ABI_SIG(aclError, aclrtSetDevice, (int32_t));
ABI_SIG(aclError, aclrtResetDevice, (int32_t));
ABI_SIG(aclError, aclrtGetDevice, (int32_t *));
ABI_SIG(aclError, aclrtGetDeviceCount, (uint32_t *));
ABI_SIG(const char *, aclrtGetSocName, (void));
ABI_SIG(aclError, aclrtGetRunMode, (aclrtRunMode *));
ABI_SIG(aclError, aclrtSynchronizeDevice, (void));
ABI_SIG(aclError, aclrtSetDeviceSatMode, (aclrtFloatOverflowMode));
/* context */
ABI_SIG(aclError, aclrtCreateContext, (aclrtContext *, int32_t));
ABI_SIG(aclError, aclrtDestroyContext, (aclrtContext));
ABI_SIG(aclError, aclrtSetCurrentContext, (aclrtContext));
ABI_SIG(aclError, aclrtGetCurrentContext, (aclrtContext *));
/* stream */
ABI_SIG(aclError, aclrtCreateStream, (aclrtStream *));
ABI_SIG(aclError, aclrtCreateStreamWithConfig, (aclrtStream *, uint32_t, uint32_t));
ABI_SIG(aclError, aclrtDestroyStream, (aclrtStream));
ABI_SIG(aclError, aclrtSynchronizeStream, (aclrtStream));
ABI_SIG(aclError, aclrtSynchronizeStreamWithTimeout, (aclrtStream, int32_t));
ABI_SIG(aclError, aclrtStreamQuery, (aclrtStream, aclrtStreamStatus *));
ABI_SIG(aclError, aclrtStreamWaitEvent, (aclrtStream, aclrtEvent));
ABI_SIG(aclError, aclrtSetStreamFailureMode, (aclrtStream, uint64_t));
/* event */
ABI_SIG(aclError, aclrtCreateEvent, (aclrtEvent *));
ABI_SIG(aclError, aclrtCreateEventWithFlag, (aclrtEvent *, uint32_t));
ABI_SIG(aclError, aclrtDestroyEvent, (aclrtEvent));
ABI_SIG(aclError, aclrtRecordEvent, (aclrtEvent, aclrtStream));
ABI_SIG(aclError, aclrtResetEvent, (aclrtEvent, aclrtStream));
ABI_SIG(aclError, aclrtQueryEvent, (aclrtEvent, aclrtEventStatus *));
ABI_SIG(aclError, aclrtQueryEventStatus, (aclrtEvent, aclrtEventRecordedStatus *));
ABI_SIG(aclError, aclrtSynchronizeEvent, (aclrtEvent));
ABI_SIG(aclError, aclrtSynchronizeEventWithTimeout, (aclrtEvent, int32_t));
ABI_SIG(aclError, aclrtEventElapsedTime, (float *, aclrtEvent, aclrtEvent));
/* memory */
ABI_SIG(aclError, aclrtMalloc, (void **, size_t, aclrtMemMallocPolicy));
ABI_SIG(aclError, aclrtFree, (void *));
ABI_SIG(aclError, aclrtMallocHost, (void **, size_t));
ABI_SIG(aclError, aclrtFreeHost, (void *));
ABI_SIG(aclError, aclrtMemset, (void *, size_t, int32_t, size_t));
ABI_SIG(aclError, aclrtMemsetAsync, (void *, size_t, int32_t, size_t, aclrtStream));
ABI_SIG(aclError, aclrtMemcpy, (void *, size_t, const void *, size_t, aclrtMemcpyKind));
ABI_SIG(aclError, aclrtMemcpyAsync, (void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream));
ABI_SIG(aclError, aclrtGetMemInfo, (aclrtMemAttr, size_t *, size_t *));
/* virtual memory (5.6) */
ABI_SIG(aclError, aclrtMemGetAllocationGranularity,
        (aclrtPhysicalMemProp *, aclrtMemGranularityOptions, size_t *));
ABI_SIG(aclError, aclrtReserveMemAddress, (void **, size_t, size_t, void *, uint64_t));
ABI_SIG(aclError, aclrtReleaseMemAddress, (void *));
ABI_SIG(aclError, aclrtMallocPhysical, (aclrtDrvMemHandle *, size_t, const aclrtPhysicalMemProp *, uint64_t));
ABI_SIG(aclError, aclrtFreePhysical, (aclrtDrvMemHandle));
ABI_SIG(aclError, aclrtMapMem, (void *, size_t, size_t, aclrtDrvMemHandle, uint64_t));
ABI_SIG(aclError, aclrtUnmapMem, (void *));
/* host calls */
ABI_SIG(aclError, aclrtLaunchCallback, (aclrtCallback, void *, aclrtCallbackBlockType, aclrtStream));
ABI_SIG(aclError, aclrtSubscribeReport, (uint64_t, aclrtStream));
ABI_SIG(aclError, aclrtUnSubscribeReport, (uint64_t, aclrtStream));
ABI_SIG(aclError, aclrtProcessReport, (int32_t));
ABI_SIG(aclError, aclrtLaunchHostFunc, (aclrtStream, aclrtHostFunc, void *));
/* profiling (5.5) */
ABI_SIG(aclError, aclprofInit, (const char *, size_t));
ABI_SIG(aclError, aclprofFinalize, (void));
ABI_SIG(aclprofConfig *, aclprofCreateConfig,
        (uint32_t *, uint32_t, aclprofAicoreMetrics, const aclprofAicoreEvents *, uint64_t));
ABI_SIG(aclError, aclprofDestroyConfig, (const aclprofConfig *));
ABI_SIG(aclError, aclprofStart, (const aclprofConfig *));
ABI_SIG(aclError, aclprofStop, (const aclprofConfig *));

/* ---- HCCL communicator management (docs/ABI.md 4.1) --------------------- */
ABI_SIG(HcclResult, HcclGetRootInfo, (HcclRootInfo *));
ABI_SIG(HcclResult, HcclCommInitRootInfo, (uint32_t, const HcclRootInfo *, uint32_t, HcclComm *));
ABI_SIG(HcclResult, HcclCommInitRootInfoConfig,
        (uint32_t, const HcclRootInfo *, uint32_t, const HcclCommConfig *, HcclComm *));
ABI_SIG(HcclResult, HcclCommInitClusterInfo, (const char *, uint32_t, HcclComm *));
ABI_SIG(HcclResult, HcclCommInitClusterInfoConfig, (const char *, uint32_t, HcclCommConfig *, HcclComm *));
ABI_SIG(HcclResult, HcclCreateSubCommConfig,
        (HcclComm *, uint32_t, uint32_t *, uint64_t, uint32_t, HcclCommConfig *, HcclComm *));
ABI_SIG(HcclResult, HcclCommInitAll, (uint32_t, int32_t *, HcclComm *));
ABI_SIG(HcclResult, HcclCommDestroy, (HcclComm));
ABI_SIG(HcclResult, HcclGetRankSize, (HcclComm, uint32_t *));
ABI_SIG(HcclResult, HcclGetRankId, (HcclComm, uint32_t *));
ABI_SIG(HcclResult, HcclGetCommName, (HcclComm, char *));
ABI_SIG(HcclResult, HcclCommGetHandleWithName, (const char *, HcclComm *));
ABI_SIG(HcclResult, HcclGetCommAsyncError, (HcclComm, HcclResult *));
ABI_SIG(const char *, HcclGetErrorString, (HcclResult));
ABI_SIG(uint32_t, HcclGetCommConfigCapability, (void));
ABI_SIG(HcclResult, HcclCommSuspend, (HcclComm));
ABI_SIG(HcclResult, HcclCommResume, (HcclComm));
ABI_SIG(HcclResult, HcclCommGetStatus, (const char *, HcclCommStatus *));
ABI_SIG(HcclResult, HcclCommRegCommStateCallback, (const char *, HcclCommStateCallback, void *));
ABI_SIG(HcclResult, HcclSetConfig, (HcclConfig, HcclConfigValue));
ABI_SIG(HcclResult, HcclGetConfig, (HcclConfig, HcclConfigValue *));
ABI_SIG(HcclResult, HcclConfigGetInfo, (HcclComm, HcclConfigType, uint32_t, void *));
ABI_SIG(HcclResult, HcclSetCommConfig, (HcclComm, HcclConfig, HcclConfigValue));
ABI_SIG(HcclResult, HcclGetCommConfig, (HcclComm, HcclConfig, HcclConfigValue *));
ABI_SIG(HcclResult, HcclBarrier, (HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclGroupStart, (void));
ABI_SIG(HcclResult, HcclGroupEnd, (void));
ABI_SIG(HcclResult, HcclGroupStatusGet, (bool *));
ABI_SIG(HcclResult, HcclCommSetMemoryRange, (HcclComm, void *, size_t, size_t, uint64_t));
ABI_SIG(HcclResult, HcclCommUnsetMemoryRange, (HcclComm, void *));
ABI_SIG(HcclResult, HcclCommActivateCommMemory, (HcclComm, void *, size_t, size_t, aclrtDrvMemHandle, uint64_t));
ABI_SIG(HcclResult, HcclCommDeactivateCommMemory, (HcclComm, void *));
ABI_SIG(HcclResult, HcclCommSymWinRegister, (HcclComm, void *, uint64_t, HcclCommSymWindow *, uint32_t));
ABI_SIG(HcclResult, HcclCommSymWinDeregister, (HcclCommSymWindow));

/* ---- HCCL collectives (docs/ABI.md 4.2) --------------------------------- */
ABI_SIG(HcclResult, HcclAllReduce,
        (void *, void *, uint64_t, HcclDataType, HcclReduceOp, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclBroadcast, (void *, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclAllGather, (void *, void *, uint64_t, HcclDataType, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclAllGatherV,
        (void *, uint64_t, void *, const void *, const void *, HcclDataType, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclReduceScatter,
        (void *, void *, uint64_t, HcclDataType, HcclReduceOp, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclReduceScatterV,
        (void *, const void *, const void *, void *, uint64_t, HcclDataType, HcclReduceOp, HcclComm,
         aclrtStream));
ABI_SIG(HcclResult, HcclReduce,
        (void *, void *, uint64_t, HcclDataType, HcclReduceOp, uint32_t, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclScatter, (void *, void *, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclAlltoAll,
        (const void *, uint64_t, HcclDataType, const void *, uint64_t, HcclDataType, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclAlltoAllV,
        (const void *, const void *, const void *, HcclDataType, const void *, const void *, const void *,
         HcclDataType, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclAlltoAllVC,
        (const void *, const void *, HcclDataType, const void *, HcclDataType, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclSend, (void *, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclRecv, (void *, uint64_t, HcclDataType, uint32_t, HcclComm, aclrtStream));
ABI_SIG(HcclResult, HcclBatchSendRecv, (HcclSendRecvItem *, uint32_t, HcclComm, aclrtStream));

size_t tu2_sizeof_comm_config(void)
{
    return sizeof(HcclCommConfig);
}

size_t tu2_offsetof_chan_sq_depth(void)
{
    return offsetof(HcclCommConfig, hcclChannelSqDepth);
}

uint32_t tu2_init_buffer_size(void)
{
    HcclCommConfig c;
    HcclCommConfigInit(&c);
    return c.hcclBufferSize;
}

int tu2_acl_rt_param_invalid(void)
{
    return ACL_ERROR_RT_PARAM_INVALID;
}

/* Every ABI_SIG above compiled, so every prototype matches. */
int tu2_check_signatures(void)
{
    return 1;
}
