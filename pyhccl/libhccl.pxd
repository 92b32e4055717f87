# Declarations of the HCCL C API ("hccl/hccl.h"), names unchanged.
# No logic here: see _core.pyx for the Python classes built on them.

from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from pyhccl.libacl cimport aclrtStream, aclrtDrvMemHandle

cdef extern from "hccl/hccl.h" nogil:

    # ---- constants ----------------------------------------------------------
    enum:
        HCCL_ROOT_INFO_BYTES
        COMM_NAME_MAX_LENGTH
        BUFFER_NAME_MAX_LENGTH
        UDI_MAX_LENGTH
        HCCL_COMM_ALGO_MAX_LENGTH
        HCCL_COMM_RETRY_ENABLE_MAX_LENGTH
        HCCL_COMM_RETRY_PARAMS_MAX_LENGTH
        HCCL_COMM_CONFIG_INFO_BYTES
        HCCL_COMM_CONFIG_MAGIC_WORD
        HCCL_COMM_CONFIG_VERSION
        HCCL_COMM_DEFAULT_BUFFSIZE
        HCCL_COMM_DEFAULT_DETERMINISTIC
        HCCL_COMM_DEFAULT_OP_EXPANSION_MODE
        HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET
        HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET
        HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET
        HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET
        HCCL_COMM_QOS_CONFIG_NOT_SET
        HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET
        HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET
        HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE

    # ---- handles ------------------------------------------------------------
    ctypedef bint c_bool "bool"
    ctypedef void *HcclComm
    ctypedef void *HcclConn
    ctypedef void *HcclCommSymWindow

    # ---- enums --------------------------------------------------------------
    ctypedef enum HcclResult:
        HCCL_SUCCESS
        HCCL_E_PARA
        HCCL_E_PTR
        HCCL_E_MEMORY
        HCCL_E_INTERNAL
        HCCL_E_NOT_SUPPORT
        HCCL_E_NOT_FOUND
        HCCL_E_UNAVAIL
        HCCL_E_SYSCALL
        HCCL_E_TIMEOUT
        HCCL_E_OPEN_FILE_FAILURE
        HCCL_E_TCP_CONNECT
        HCCL_E_ROCE_CONNECT
        HCCL_E_TCP_TRANSFER
        HCCL_E_ROCE_TRANSFER
        HCCL_E_RUNTIME
        HCCL_E_DRV
        HCCL_E_PROFILING
        HCCL_E_CCE
        HCCL_E_NETWORK
        HCCL_E_AGAIN
        HCCL_E_REMOTE
        HCCL_E_SUSPENDING
        HCCL_E_OPRETRY_FAIL
        HCCL_E_OOM
        HCCL_E_IN_STATUS

    ctypedef enum HcclDataType:
        HCCL_DATA_TYPE_INT8
        HCCL_DATA_TYPE_INT16
        HCCL_DATA_TYPE_INT32
        HCCL_DATA_TYPE_FP16
        HCCL_DATA_TYPE_FP32
        HCCL_DATA_TYPE_INT64
        HCCL_DATA_TYPE_UINT64
        HCCL_DATA_TYPE_UINT8
        HCCL_DATA_TYPE_UINT16
        HCCL_DATA_TYPE_UINT32
        HCCL_DATA_TYPE_FP64
        HCCL_DATA_TYPE_BFP16
        HCCL_DATA_TYPE_INT128
        HCCL_DATA_TYPE_HIF8
        HCCL_DATA_TYPE_FP8E4M3
        HCCL_DATA_TYPE_FP8E5M2
        HCCL_DATA_TYPE_FP8E8M0
        HCCL_DATA_TYPE_RESERVED

    ctypedef enum HcclReduceOp:
        HCCL_REDUCE_SUM
        HCCL_REDUCE_PROD
        HCCL_REDUCE_MAX
        HCCL_REDUCE_MIN
        HCCL_REDUCE_RESERVED

    ctypedef enum HcclSendRecvType:
        HCCL_SEND
        HCCL_RECV
        HCCL_SEND_RECV_RESERVED

    ctypedef enum HcclConfig:
        HCCL_DETERMINISTIC
        HCCL_CONFIG_RESERVED

    ctypedef enum HcclCommConfigCapability:
        HCCL_COMM_CONFIG_BUFFER_SIZE
        HCCL_COMM_CONFIG_DETERMINISTIC
        HCCL_COMM_CONFIG_COMM_NAME
        HCCL_COMM_CONFIG_OP_EXPANSION_MODE
        HCCL_COMM_CONFIG_SUPPORT_INIT_BY_ENV
        HCCL_COMM_CONFIG_WORLD_RANKID
        HCCL_COMM_CONFIG_JOBID
        HCCL_COMM_CONFIG_ACLGRAPH_ZEROCOPY_ENABLE
        HCCL_COMM_CONFIG_EXEC_TIMEOUT
        HCCL_COMM_CONFIG_ALGO
        HCCL_COMM_CONFIG_RETRY
        HCCL_COMM_CONFIG_BUFFER_NAME
        HCCL_COMM_CONFIG_RESERVED

    ctypedef enum HcclCommStatus:
        HCCL_COMM_STATUS_READY
        HCCL_COMM_STATUS_SUSPENDING
        HCCL_COMM_STATUS_INVALID
        HCCL_COMM_STATUS_RESERVED

    ctypedef enum HcclCommStatePhase:
        HCCL_COMM_STATE_PHASE_INVALID
        HCCL_COMM_STATE_PHASE_DESTROY_PRE
        HCCL_COMM_STATE_PHASE_DESTROY_POST
        HCCL_COMM_STATE_PHASE_RESUME_PRE
        HCCL_COMM_STATE_PHASE_RESUME_POST

    ctypedef HcclResult (*HcclCommStateCallback)(HcclComm comm, HcclCommStatePhase state,
                                                 void *args)

    # ---- structs ------------------------------------------------------------
    ctypedef struct HcclRootInfo:
        char internal[4108]

    ctypedef struct HcclSendRecvItem:
        HcclSendRecvType sendRecvType
        void *buf
        uint64_t count
        HcclDataType dataType
        uint32_t remoteRank

    ctypedef union HcclConfigValue:
        int32_t value

    ctypedef struct HcclCommConfig:
        char reserved[24]
        uint32_t hcclBufferSize
        uint32_t hcclDeterministic
        char hcclCommName[128]
        char hcclUdi[128]
        uint32_t hcclOpExpansionMode
        uint32_t hcclRdmaTrafficClass
        uint32_t hcclRdmaServiceLevel
        uint32_t hcclWorldRankID
        uint64_t hcclJobID
        uint8_t aclGraphZeroCopyEnable
        int32_t hcclExecTimeOut
        char hcclAlgo[1600]
        char hcclRetryEnable[50]
        char hcclRetryParams[128]
        char hcclBufferName[128]
        uint32_t hcclQos
        uint64_t hcclSymWinMaxMemSizePerRank
        uint32_t hcclChannelSqDepth

    # ---- communicator management -------------------------------------------
    void HcclCommConfigInit(HcclCommConfig *config)
    uint32_t HcclGetCommConfigCapability()
    HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
    HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                    uint32_t rank, HcclComm *comm)
    HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                          uint32_t rank, const HcclCommConfig *config,
                                          HcclComm *comm)
    HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank,
                                       HcclComm *comm)
    HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                             HcclCommConfig *config, HcclComm *comm)
    HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                       uint64_t subCommId, uint32_t subCommRankId,
                                       HcclCommConfig *config, HcclComm *subComm)
    HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms)
    HcclResult HcclCommDestroy(HcclComm comm)
    HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)
    HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)
    HcclResult HcclGetCommName(HcclComm comm, char *commName)
    HcclResult HcclCommGetHandleWithName(const char *commName, HcclComm *comm)
    HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError)
    const char *HcclGetErrorString(HcclResult code)
    HcclResult HcclCommSuspend(HcclComm comm)
    HcclResult HcclCommResume(HcclComm comm)
    HcclResult HcclCommGetStatus(const char *commId, HcclCommStatus *status)
    HcclResult HcclCommRegCommStateCallback(const char *regName, HcclCommStateCallback cb,
                                            void *args)
    HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue)
    HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue)
    HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)
    HcclResult HcclGroupStart()
    HcclResult HcclGroupEnd()
    HcclResult HcclGroupStatusGet(c_bool *isGroupEnabled)

    # ---- registered memory --------------------------------------------------
    HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size,
                                      size_t alignment, uint64_t flags)
    HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr)
    HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size,
                                          size_t offset, aclrtDrvMemHandle handle,
                                          uint64_t flags)
    HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr)
    HcclResult HcclCommSymWinRegister(HcclComm comm, void *addr, uint64_t size,
                                      HcclCommSymWindow *winHandle, uint32_t flag)
    HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle)

    # ---- collectives --------------------------------------------------------
    HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count,
                             HcclDataType dataType, HcclReduceOp op,
                             HcclComm comm, aclrtStream stream)
    HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType,
                             uint32_t root, HcclComm comm, aclrtStream stream)
    HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
                             HcclDataType dataType, HcclComm comm, aclrtStream stream)
    HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf,
                              const void *recvCounts, const void *recvDispls,
                              HcclDataType dataType, HcclComm comm, aclrtStream stream)
    HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                                 HcclDataType dataType, HcclReduceOp op,
                                 HcclComm comm, aclrtStream stream)
    HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts,
                                  const void *sendDispls, void *recvBuf,
                                  uint64_t recvCount, HcclDataType dataType,
                                  HcclReduceOp op, HcclComm comm, aclrtStream stream)
    HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count,
                          HcclDataType dataType, HcclReduceOp op, uint32_t root,
                          HcclComm comm, aclrtStream stream)
    HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                           HcclDataType dataType, uint32_t root,
                           HcclComm comm, aclrtStream stream)
    HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                            const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                            HcclComm comm, aclrtStream stream)
    HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts,
                             const void *sdispls, HcclDataType sendType,
                             const void *recvBuf, const void *recvCounts,
                             const void *rdispls, HcclDataType recvType,
                             HcclComm comm, aclrtStream stream)
    HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix,
                              HcclDataType sendType, const void *recvBuf,
                              HcclDataType recvType, HcclComm comm, aclrtStream stream)
    HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType,
                        uint32_t destRank, HcclComm comm, aclrtStream stream)
    HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType,
                        uint32_t srcRank, HcclComm comm, aclrtStream stream)
    HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum,
                                 HcclComm comm, aclrtStream stream)

# ---- pyhccl's own extensions (include/hccl/hccl_host.h) ---------------------
# The host runtime's hccl/hccl.h includes them; a CANN toolkit has none of
# them, so a CANN build gets the fallbacks of pyhccl_cann_config.h (the types,
# and functions returning HCCL_E_NOT_SUPPORT) instead.
cdef extern from "hccl/hccl.h" nogil:
    ctypedef struct PyhcclTopology:
        uint32_t nHosts
        uint32_t hostId
        uint32_t localRank
        uint32_t localSize
    ctypedef struct PyhcclOpRecord:
        uint64_t seq
        char opName[32]
        uint64_t count
        int32_t dataType
        int32_t root
        int32_t reduceOp
        int32_t state
        double enqueueUs
        double startUs
        double endUs
        char algorithm[16]
    ctypedef struct PyhcclOpError:
        int32_t code
        char opName[32]
        uint64_t seq
        int32_t rank
        char message[512]

    HcclResult PyhcclCommGetTopology(HcclComm comm, PyhcclTopology *topo, uint32_t *hostOfRank,
                                     uint32_t rankCount)
    HcclResult PyhcclCommGetHostName(HcclComm comm, uint32_t hostId, char *name, uint32_t nameLen)
    HcclResult PyhcclCommGetTransport(HcclComm comm, uint32_t peer, char *name, uint32_t nameLen)
    HcclResult PyhcclCommGetFlightRecord(HcclComm comm, PyhcclOpRecord *records, uint32_t capacity,
                                         uint32_t *count)
    HcclResult PyhcclStreamTakeOpError(aclrtStream stream, PyhcclOpError *info, int32_t *found)
    HcclResult PyhcclCancelSetups()
    HcclResult PyhcclCommAbort(HcclComm comm)
    HcclResult PyhcclCommDestroyTimeout(HcclComm comm, int32_t timeoutMs)
    HcclResult PyhcclGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
                            HcclDataType dataType, uint32_t root, HcclComm comm,
                            aclrtStream stream)
    ctypedef void *PyhcclRendezvous
    HcclResult PyhcclRendezvousOpen(const char *group, uint32_t nRanks, uint32_t rank,
                                    HcclRootInfo *rootInfo, PyhcclRendezvous *rendezvous)
    HcclResult PyhcclRendezvousClose(PyhcclRendezvous rendezvous)

# ---- what an older CANN toolkit lacks ----------------------------------------
# For a build against a toolkit (PYHCCL_CANN), conf/cann_config.py writes one
# PYHCCL_HAVE_<name> flag per name above that the toolkit's headers declare, and a
# fallback for each one they lack (values of include/, functions that return "not
# supported"), as mpi4py does for MPI versions. The host runtime declares them all.
cdef extern from *:
    """
    #ifdef PYHCCL_CANN
    #include "pyhccl_cann_config.h"
    #endif
    """
