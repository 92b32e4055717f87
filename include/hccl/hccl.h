/*
 * HCCL collectives. ABI-compatible with CANN's hccl/hccl.h; includes the
 * types, the communicator API and the ACL runtime. Compiles as C99 and C++11.
 * Counts are in elements; every call is enqueued on stream (NULL = default
 * stream of the current context) and returns before it completes.
 */
#ifndef PYHCCL_HCCL_HCCL_H_
#define PYHCCL_HCCL_HCCL_H_

#include <stdint.h>

#include "acl/acl.h"
#include "hccl/hccl_types.h"
#include "hccl/hccl_comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* recvBuf = op over all ranks of sendBuf (count elements). */
HCCL_API_VISIBILITY HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                             HcclReduceOp op, HcclComm comm, aclrtStream stream);

/* Copies root's buf (count elements) to every rank, in place. */
HCCL_API_VISIBILITY HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root,
                                             HcclComm comm, aclrtStream stream);

/* recvBuf = every rank's sendBuf (sendCount elements each), in rank order. */
HCCL_API_VISIBILITY HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
                                             HcclDataType dataType, HcclComm comm, aclrtStream stream);

/* AllGather with per-rank counts and displacements (uint64_t arrays of nRanks). */
HCCL_API_VISIBILITY HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf,
                                              const void *recvCounts, const void *recvDispls,
                                              HcclDataType dataType, HcclComm comm, aclrtStream stream);

/* Reduces sendBuf (nRanks * recvCount) and gives rank r block r in recvBuf. */
HCCL_API_VISIBILITY HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                                                 HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                                 aclrtStream stream);

/* ReduceScatter with per-rank counts and displacements (uint64_t arrays of nRanks). */
HCCL_API_VISIBILITY HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls,
                                                  void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                                  HcclReduceOp op, HcclComm comm, aclrtStream stream);

/* Like AllReduce, with the result only at root. */
HCCL_API_VISIBILITY HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                          HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream);

/* Sends block r (recvCount elements) of root's sendBuf to rank r. */
HCCL_API_VISIBILITY HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                           uint32_t root, HcclComm comm, aclrtStream stream);

/* Exchanges sendCount elements with every peer (recvBuf is written despite const). */
HCCL_API_VISIBILITY HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                                            const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                                            HcclComm comm, aclrtStream stream);

/* AlltoAll with per-peer counts and displacements (uint64_t arrays of nRanks). */
HCCL_API_VISIBILITY HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                                             HcclDataType sendType, const void *recvBuf, const void *recvCounts,
                                             const void *rdispls, HcclDataType recvType, HcclComm comm,
                                             aclrtStream stream);

/* AlltoAll from an nRanks x nRanks uint64_t matrix of send counts (row = sender). */
HCCL_API_VISIBILITY HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix,
                                              HcclDataType sendType, const void *recvBuf, HcclDataType recvType,
                                              HcclComm comm, aclrtStream stream);

/* Sends count elements to destRank (matched by an HcclRecv there). */
HCCL_API_VISIBILITY HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                                        HcclComm comm, aclrtStream stream);

/* Receives count elements from srcRank. */
HCCL_API_VISIBILITY HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                                        HcclComm comm, aclrtStream stream);

/* Runs itemNum sends and receives together. */
HCCL_API_VISIBILITY HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                                 aclrtStream stream);

#ifndef OPEN_BUILD_PROJECT
/* Sets a setting of one communicator (older CANN hccl.h only; not declared
 * when OPEN_BUILD_PROJECT is defined). */
HCCL_API_VISIBILITY HcclResult HcclSetCommConfig(HcclComm comm, HcclConfig config, HcclConfigValue configValue);

/* Reads a setting of one communicator (older CANN hccl.h only; not declared
 * when OPEN_BUILD_PROJECT is defined). */
HCCL_API_VISIBILITY HcclResult HcclGetCommConfig(HcclComm comm, HcclConfig config, HcclConfigValue *configValue);
#endif

#ifdef __cplusplus
}
#endif

/* pyhccl's host runtime: its own extensions (Pyhccl*), and PYHCCL_HOST_RUNTIME. */
#include "hccl/hccl_host.h"

#endif /* PYHCCL_HCCL_HCCL_H_ */
