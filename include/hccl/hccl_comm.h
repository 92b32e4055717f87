/*
 * HCCL communicator management. ABI-compatible with CANN's hccl/hccl_comm.h
 * (CANN 9, where libhcomm.so holds these; pyhccl exports all of them from
 * libhccl.so). Compiles as C99 and C++11.
 */
#ifndef PYHCCL_HCCL_HCCL_COMM_H_
#define PYHCCL_HCCL_HCCL_COMM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base_rt.h"
#include "hccl/hccl_types.h"

/* CANN declares these functions __attribute__((weak)) so libhccl.so can run
 * without libhcomm.so. pyhccl defines them all in libhccl.so, so the default
 * is empty; define it (e.g. to __attribute__((weak))) before including to
 * get CANN's behaviour. */
#ifndef HCOMM_WEAK_SYMBOL
#define HCOMM_WEAK_SYMBOL
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel placement reported by HcclConfigGetInfo (not the config encoding of
 * hcclOpExpansionMode). */
typedef enum HcclOpExpansionMode {
    HCCL_OP_EXPANSION_MODE_INVALID = -1,
    HCCL_OP_EXPANSION_MODE_AI_CPU = 0,
    HCCL_OP_EXPANSION_MODE_AIV = 1,
    HCCL_OP_EXPANSION_MODE_HOST = 2,
    HCCL_OP_EXPANSION_MODE_HOST_TS = 3,
    HCCL_OP_EXPANSION_MODE_CCU_MS = 4,
    HCCL_OP_EXPANSION_MODE_CCU_SCHED = 5,
    HCCL_OP_EXPANSION_AIV_ONLY = 6
} HcclOpExpansionMode;

/* What HcclConfigGetInfo reports. */
typedef enum HcclConfigType {
    HCCL_CONFIG_TYPE_INVALID = -1,
    HCCL_CONFIG_TYPE_OP_EXPANSION_MODE = 0,
    HCCL_CONFIG_TYPE_HCCL_ALGO = 1
} HcclConfigType;

/* ---- creation and destruction -------------------------------------------- */

/* Makes the rendezvous blob; call on the root rank only, after aclrtSetDevice. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);

/* Creates this rank's communicator of nRanks from the root's blob (collective, blocking). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                                                      uint32_t rank, HcclComm *comm);

/* As HcclCommInitRootInfo with a config from HcclCommConfigInit (NULL = none). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks,
                                                                            const HcclRootInfo *rootInfo,
                                                                            uint32_t rank,
                                                                            const HcclCommConfig *config,
                                                                            HcclComm *comm);

/* Creates a communicator from a rank-table file at path clusterInfo. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank,
                                                                         HcclComm *comm);

/* As HcclCommInitClusterInfo with a config. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo,
                                                                               uint32_t rank,
                                                                               HcclCommConfig *config,
                                                                               HcclComm *comm);

/* Creates a sub-communicator of rankNum ranks (rankIds) of *comm (collective over the members). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum,
                                                                         uint32_t *rankIds, uint64_t subCommId,
                                                                         uint32_t subCommRankId,
                                                                         HcclCommConfig *config,
                                                                         HcclComm *subComm);

/* Creates ndev communicators, one per device in devices[], in one process. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices,
                                                                 HcclComm *comms);

/* Destroys a communicator and frees its resources. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommDestroy(HcclComm comm);

/* ---- queries ------------------------------------------------------------- */

/* Number of ranks in comm. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize);

/* This process's rank in comm. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank);

/* Copies comm's name into commName (buffer of at least COMM_NAME_MAX_LENGTH bytes). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGetCommName(HcclComm comm, char *commName);

/* Looks up a live communicator of this process by name. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommGetHandleWithName(const char *commName, HcclComm *comm);

/* First asynchronous error seen by comm (HCCL_SUCCESS if none). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError);

/* Static description of an HcclResult. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL const char *HcclGetErrorString(HcclResult code);

/* Config capabilities (encoding undocumented by CANN; pyhccl returns HCCL_COMM_CONFIG_RESERVED). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL uint32_t HcclGetCommConfigCapability(void);

/* Copies what cfgType selects for comm into info (infoLen bytes). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclConfigGetInfo(HcclComm comm, HcclConfigType cfgType,
                                                                   uint32_t infoLen, void *info);

/* ---- state --------------------------------------------------------------- */

/* Suspends comm (used around fault recovery). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommSuspend(HcclComm comm);

/* Resumes a suspended comm. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommResume(HcclComm comm);

/* State of the communicator named commId. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommGetStatus(const char *commId, HcclCommStatus *status);

/* Registers cb(args) under regName, called around HcclCommDestroy / HcclCommResume. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommRegCommStateCallback(const char *regName,
                                                                              HcclCommStateCallback cb,
                                                                              void *args);

/* ---- process-global settings -------------------------------------------- */

/* Sets a process-global HCCL setting. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue);

/* Reads a process-global HCCL setting. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue);

/* ---- synchronisation and groups ----------------------------------------- */

/* Enqueues a barrier over comm on stream (NULL = default stream). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclBarrier(HcclComm comm, aclrtStream stream);

/* Starts a group: calls up to HcclGroupEnd are launched together (experimental). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGroupStart(void);

/* Ends a group and launches its calls. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGroupEnd(void);

/* Whether the calling thread is inside HcclGroupStart/End. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclGroupStatusGet(bool *isGroupEnabled);

/* ---- registered memory ---------------------------------------------------- */

/* Declares [baseVirPtr, +size) as comm's memory range. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size,
                                                                        size_t alignment, uint64_t flags);

/* Removes a range set by HcclCommSetMemoryRange. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr);

/* Makes physical memory handle (from offset) usable by comm at virPtr. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size,
                                                                            size_t offset,
                                                                            aclrtDrvMemHandle handle,
                                                                            uint64_t flags);

/* Undoes HcclCommActivateCommMemory. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr);

/* Registers [addr, +size) as a symmetric window of comm (collective). */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommSymWinRegister(HcclComm comm, void *addr, uint64_t size,
                                                                        HcclCommSymWindow *winHandle,
                                                                        uint32_t flag);

/* Deregisters a symmetric window. */
HCCL_API_VISIBILITY HCOMM_WEAK_SYMBOL HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle);

#ifdef __cplusplus
}
#endif

#endif /* PYHCCL_HCCL_HCCL_COMM_H_ */
