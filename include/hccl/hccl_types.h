/*
 * HCCL types and constants. ABI-compatible with CANN's hccl/hccl_types.h
 * (HcclCommConfig version 11). Unlike CANN's header this one compiles as C99
 * as well as C++11: constants are macros with suffixes, the config-value union
 * has a typedef and HcclCommConfigInit is static inline.
 */
#ifndef PYHCCL_HCCL_HCCL_TYPES_H_
#define PYHCCL_HCCL_HCCL_TYPES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Put in front of every exported HCCL function. The libraries are built with
 * -fvisibility=hidden, so the default exports them; define it before
 * including to override (e.g. empty). */
#ifndef HCCL_API_VISIBILITY
#if defined(_MSC_VER)
#define HCCL_API_VISIBILITY
#else
#define HCCL_API_VISIBILITY __attribute__((visibility("default")))
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants ----------------------------------------------------------- */

#define HCCL_ROOT_INFO_BYTES                 4108u /* bytes of HcclRootInfo */
#define COMM_NAME_MAX_LENGTH                 128u  /* hcclCommName, with NUL */
#define BUFFER_NAME_MAX_LENGTH               128u  /* hcclBufferName, with NUL */
#define UDI_MAX_LENGTH                       128u  /* hcclUdi, with NUL */
#define HCCL_COMM_ALGO_MAX_LENGTH            1600u /* hcclAlgo, with NUL */
#define HCCL_COMM_RETRY_ENABLE_MAX_LENGTH    50u   /* hcclRetryEnable, with NUL */
#define HCCL_COMM_RETRY_PARAMS_MAX_LENGTH    128u  /* hcclRetryParams, with NUL */
#define HCCL_COMM_CONFIG_INFO_BYTES          24u   /* header of HcclCommConfig */
#define HCCL_COMM_CONFIG_MAGIC_WORD          0xf0f0f0f0u
#define HCCL_COMM_CONFIG_VERSION             11u
#define HCCL_COMM_DEFAULT_BUFFSIZE           200u  /* MB */
#define HCCL_COMM_DEFAULT_DETERMINISTIC      0u
#define HCCL_COMM_DEFAULT_OP_EXPANSION_MODE  0u
#define HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET        0xffffffffu
#define HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET   0xffffffffu
#define HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET   0xffffffffu
#define HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET   0xffffffffu
#define HCCL_COMM_QOS_CONFIG_NOT_SET             0xffffffffu
#define HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET        0xffffffffu
#define HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET     (-1)  /* int32_t */
#define HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE     16ull /* uint64_t, GB */

/* ---- handles ------------------------------------------------------------- */

typedef void *HcclComm;
typedef void *HcclConn;
typedef void *HcclCommSymWindow;

/* ---- enums --------------------------------------------------------------- */

/* Return code of every HCCL call. Never rely on HCCL_E_RESERVED. */
typedef enum HcclResult {
    HCCL_SUCCESS = 0,
    HCCL_E_PARA = 1,
    HCCL_E_PTR = 2,
    HCCL_E_MEMORY = 3,
    HCCL_E_INTERNAL = 4,
    HCCL_E_NOT_SUPPORT = 5,
    HCCL_E_NOT_FOUND = 6,
    HCCL_E_UNAVAIL = 7,
    HCCL_E_SYSCALL = 8,
    HCCL_E_TIMEOUT = 9,
    HCCL_E_OPEN_FILE_FAILURE = 10,
    HCCL_E_TCP_CONNECT = 11,
    HCCL_E_ROCE_CONNECT = 12,
    HCCL_E_TCP_TRANSFER = 13,
    HCCL_E_ROCE_TRANSFER = 14,
    HCCL_E_RUNTIME = 15,
    HCCL_E_DRV = 16,
    HCCL_E_PROFILING = 17,
    HCCL_E_CCE = 18,
    HCCL_E_NETWORK = 19,
    HCCL_E_AGAIN = 20,
    HCCL_E_REMOTE = 21,
    HCCL_E_SUSPENDING = 22,
    HCCL_E_OPRETRY_FAIL = 23,
    HCCL_E_OOM = 24,
    HCCL_E_IN_STATUS = 1041,
    HCCL_E_RESERVED
} HcclResult;

/* Element type of a collective (numbers differ from aclDataType). */
typedef enum HcclDataType {
    HCCL_DATA_TYPE_INT8 = 0,
    HCCL_DATA_TYPE_INT16 = 1,
    HCCL_DATA_TYPE_INT32 = 2,
    HCCL_DATA_TYPE_FP16 = 3,
    HCCL_DATA_TYPE_FP32 = 4,
    HCCL_DATA_TYPE_INT64 = 5,
    HCCL_DATA_TYPE_UINT64 = 6,
    HCCL_DATA_TYPE_UINT8 = 7,
    HCCL_DATA_TYPE_UINT16 = 8,
    HCCL_DATA_TYPE_UINT32 = 9,
    HCCL_DATA_TYPE_FP64 = 10,
    HCCL_DATA_TYPE_BFP16 = 11,
    HCCL_DATA_TYPE_INT128 = 12,
    HCCL_DATA_TYPE_HIF8 = 14,
    HCCL_DATA_TYPE_FP8E4M3 = 15,
    HCCL_DATA_TYPE_FP8E5M2 = 16,
    HCCL_DATA_TYPE_FP8E8M0 = 17,
    HCCL_DATA_TYPE_RESERVED = 255
} HcclDataType;

/* Reduction operator. There is no AVG. */
typedef enum HcclReduceOp {
    HCCL_REDUCE_SUM = 0,
    HCCL_REDUCE_PROD = 1,
    HCCL_REDUCE_MAX = 2,
    HCCL_REDUCE_MIN = 3,
    HCCL_REDUCE_RESERVED = 255
} HcclReduceOp;

/* Process-global settings (HcclSetConfig / HcclGetConfig). */
typedef enum HcclConfig {
    HCCL_DETERMINISTIC = 0, /* 0 off, 1 on, 2 strict ordering */
    HCCL_CONFIG_RESERVED
} HcclConfig;

/* Value of an HcclConfig setting; passed by value (ABI = int32_t). */
typedef union HcclConfigValue {
    int32_t value;
} HcclConfigValue;

/* Communicator-config features (HcclGetCommConfigCapability). */
typedef enum HcclCommConfigCapability {
    HCCL_COMM_CONFIG_BUFFER_SIZE = 0,
    HCCL_COMM_CONFIG_DETERMINISTIC = 1,
    HCCL_COMM_CONFIG_COMM_NAME = 2,
    HCCL_COMM_CONFIG_OP_EXPANSION_MODE = 3,
    HCCL_COMM_CONFIG_SUPPORT_INIT_BY_ENV = 4,
    HCCL_COMM_CONFIG_WORLD_RANKID = 5,
    HCCL_COMM_CONFIG_JOBID = 6,
    HCCL_COMM_CONFIG_ACLGRAPH_ZEROCOPY_ENABLE = 7,
    HCCL_COMM_CONFIG_EXEC_TIMEOUT = 8,
    HCCL_COMM_CONFIG_ALGO = 9,
    HCCL_COMM_CONFIG_RETRY = 10,
    HCCL_COMM_CONFIG_BUFFER_NAME = 11,
    HCCL_COMM_CONFIG_RESERVED = 12
} HcclCommConfigCapability;

/* State of a communicator (HcclCommGetStatus). */
typedef enum HcclCommStatus {
    HCCL_COMM_STATUS_READY = 0,
    HCCL_COMM_STATUS_SUSPENDING = 1,
    HCCL_COMM_STATUS_INVALID = 254,
    HCCL_COMM_STATUS_RESERVED = 255
} HcclCommStatus;

/* Phase reported to an HcclCommStateCallback. */
typedef enum HcclCommStatePhase {
    HCCL_COMM_STATE_PHASE_INVALID = -1,
    HCCL_COMM_STATE_PHASE_DESTROY_PRE = 0,
    HCCL_COMM_STATE_PHASE_DESTROY_POST = 1,
    HCCL_COMM_STATE_PHASE_RESUME_PRE = 2,
    HCCL_COMM_STATE_PHASE_RESUME_POST = 3
} HcclCommStatePhase;

/* Called around HcclCommDestroy / HcclCommResume. */
typedef HcclResult (*HcclCommStateCallback)(HcclComm comm, HcclCommStatePhase state, void *args);

/* Direction of an HcclSendRecvItem. */
typedef enum HcclSendRecvType {
    HCCL_SEND = 0,
    HCCL_RECV = 1,
    HCCL_SEND_RECV_RESERVED = 2
} HcclSendRecvType;

/* ---- structs ------------------------------------------------------------- */

/* Opaque rendezvous blob: made by HcclGetRootInfo on the root, shipped byte
 * for byte to every rank. */
typedef struct HcclRootInfoDef {
    char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

/* One entry of HcclBatchSendRecv (count in elements). */
typedef struct HcclSendRecvItemDef {
    HcclSendRecvType sendRecvType;
    void *buf;
    uint64_t count;
    HcclDataType dataType;
    uint32_t remoteRank;
} HcclSendRecvItem;

/* Communicator config, version 11. Versioned and append-only: reserved[]
 * holds {size_t size; uint32_t magicWord; uint32_t version; uint64_t reserved}.
 * Always initialise with HcclCommConfigInit before setting fields. */
typedef struct HcclCommConfigDef {
    char reserved[HCCL_COMM_CONFIG_INFO_BYTES];                    /* v1 @0 */
    uint32_t hcclBufferSize;                                       /* v1 @24, MB */
    uint32_t hcclDeterministic;                                    /* v1 @28 */
    char hcclCommName[COMM_NAME_MAX_LENGTH];                       /* v2 @32 */
    char hcclUdi[UDI_MAX_LENGTH];                                  /* v3 @160 */
    uint32_t hcclOpExpansionMode;                                  /* v5 @288 */
    uint32_t hcclRdmaTrafficClass;                                 /* v5 @292 */
    uint32_t hcclRdmaServiceLevel;                                 /* v5 @296 */
    uint32_t hcclWorldRankID;                                      /* v6 @300 */
    uint64_t hcclJobID;                                            /* v6 @304 */
    uint8_t aclGraphZeroCopyEnable;                                /* v8 @312 */
    int32_t hcclExecTimeOut;                                       /* v9 @316 */
    char hcclAlgo[HCCL_COMM_ALGO_MAX_LENGTH];                      /* v9 @320 */
    char hcclRetryEnable[HCCL_COMM_RETRY_ENABLE_MAX_LENGTH];       /* v9 @1920 */
    char hcclRetryParams[HCCL_COMM_RETRY_PARAMS_MAX_LENGTH];       /* v9 @1970 */
    char hcclBufferName[BUFFER_NAME_MAX_LENGTH];                   /* v8 @2098 */
    uint32_t hcclQos;                                              /* v10 @2228 */
    uint64_t hcclSymWinMaxMemSizePerRank;                          /* v11 @2232, GB */
    uint32_t hcclChannelSqDepth;                                   /* v11 @2240 */
} HcclCommConfig;

/* Zeroes *config, writes the version-11 header and sets every field to its
 * "not set" default. Header-only (no library symbol). */
static inline void HcclCommConfigInit(HcclCommConfig *config)
{
    size_t size = sizeof(HcclCommConfig);
    uint32_t magic = HCCL_COMM_CONFIG_MAGIC_WORD;
    uint32_t version = HCCL_COMM_CONFIG_VERSION;
    if (config == NULL) {
        return;
    }
    memset(config, 0, sizeof(*config));
    memcpy(config->reserved + 0, &size, sizeof(size));
    memcpy(config->reserved + 8, &magic, sizeof(magic));
    memcpy(config->reserved + 12, &version, sizeof(version));
    config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config->hcclWorldRankID = 0;
    config->hcclJobID = 0;
    config->aclGraphZeroCopyEnable = 0;
    config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
    config->hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
    config->hcclChannelSqDepth = HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET;
}

#ifdef __cplusplus
}
#endif

#endif /* PYHCCL_HCCL_HCCL_TYPES_H_ */
