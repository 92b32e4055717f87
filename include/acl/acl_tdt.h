/*
 * The acltdt communicator API: a pyhccl extension. CANN has no such functions.
 *
 * CANN's own acl/acl_tdt.h is the tensor data tunnel (acltdtChannelHandle,
 * acltdtCreateChannel, acltdtSendTensor, ...), which pyhccl does not provide.
 * This header declares instead the communicator calls of a widely read
 * article on HCCL (acltdtCreateComm, acltdtCommAllReduce, ...), so that its
 * program builds and runs as printed. None of its names is one of CANN's
 * tunnel names. Code that must also build against a real CANN toolkit tests
 * PYHCCL_HOST_RUNTIME (hccl/hccl_host.h) before using it, or uses HCCL itself.
 *
 * Each call maps onto HCCL: an acltdtComm wraps one HcclComm (made with
 * HcclCommInitRootInfo) and acltdtCommAllReduce is HcclAllReduce on it, on the
 * same streams, algorithms and buffers (no extra copy). Sizes are in bytes; a
 * size that is not a multiple of the element size is an error.
 *
 * acltdtCreateComm finds the other ranks by the group name (docs/LAUNCH.md):
 * on one host with nothing set, rank 0 opens the group for this user and the
 * other ranks meet it there, started in any order within
 * HCCL_CONNECT_TIMEOUT; across hosts rank 0 listens on MASTER_ADDR:MASTER_PORT
 * (torch's variables). PyhcclRendezvousOpen (hccl/hccl_host.h) is the same
 * mechanism for HcclCommInitRootInfo.
 *
 * Errors are aclError codes (ACL_ERROR_INVALID_PARAM for bad arguments,
 * ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_BAD_ALLOC, else ACL_ERROR_FAILURE);
 * aclGetRecentErrMsg names the call, the argument and, for HCCL failures,
 * the HCCL code. Compiles as C99 and C++11. Link -lacl_tdt (or -lhccl).
 */
#ifndef PYHCCL_ACL_ACL_TDT_H_
#define PYHCCL_ACL_ACL_TDT_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A communicator of worldSize ranks (opaque). */
typedef struct acltdtCommImpl *acltdtComm;

/* Reduction operators: HCCL's, with the same values as HcclReduceOp. */
typedef enum acltdtCommReduceOp {
    ACL_TDT_COMM_REDUCE_SUM = 0,
    ACL_TDT_COMM_REDUCE_PROD = 1,
    ACL_TDT_COMM_REDUCE_MAX = 2,
    ACL_TDT_COMM_REDUCE_MIN = 3
} acltdtCommReduceOp;

/* Creates rank rankId (0 <= rankId < worldSize) of the communicator named
 * group (1 to 127 bytes): waits until all worldSize ranks have called it,
 * at most HCCL_CONNECT_TIMEOUT seconds (default 120). stream (NULL: the
 * default stream) becomes the communicator's stream: the collectives below use
 * it when given a NULL stream. Call after aclrtSetDevice. */
ACL_FUNC_VISIBILITY aclError acltdtCreateComm(acltdtComm *comm, int32_t worldSize, int32_t rankId,
                                              const char *group, aclrtStream stream);

/* Waits for the communicator's queued operations, then frees it (rank 0 also
 * closes the group, so its name can be used again). NULL is an error. */
ACL_FUNC_VISIBILITY aclError acltdtDestroyComm(acltdtComm comm);

/* AllReduce in place over buf (bytes bytes of dataType) on every rank.
 * Asynchronous: synchronize the stream before reading buf. */
ACL_FUNC_VISIBILITY aclError acltdtCommAllReduce(acltdtComm comm, void *buf, size_t bytes,
                                                 aclDataType dataType, acltdtCommReduceOp op,
                                                 aclrtStream stream);

/* Broadcast of buf (bytes bytes) from rank root to every rank. */
ACL_FUNC_VISIBILITY aclError acltdtCommBroadcast(acltdtComm comm, void *buf, size_t bytes,
                                                 aclDataType dataType, int32_t root,
                                                 aclrtStream stream);

/* AllGather: every rank sends sendBytes bytes; recvBuf receives
 * worldSize * sendBytes bytes in rank order. */
ACL_FUNC_VISIBILITY aclError acltdtCommAllGather(acltdtComm comm, void *sendBuf, void *recvBuf,
                                                 size_t sendBytes, aclDataType dataType,
                                                 aclrtStream stream);

/* ReduceScatter: sendBuf holds worldSize * recvBytes bytes; rank r receives
 * the reduction of every rank's block r (recvBytes bytes). */
ACL_FUNC_VISIBILITY aclError acltdtCommReduceScatter(acltdtComm comm, void *sendBuf,
                                                     void *recvBuf, size_t recvBytes,
                                                     aclDataType dataType, acltdtCommReduceOp op,
                                                     aclrtStream stream);

/* This rank's id and the communicator's size. */
ACL_FUNC_VISIBILITY aclError acltdtCommGetRankId(acltdtComm comm, int32_t *rankId);
ACL_FUNC_VISIBILITY aclError acltdtCommGetWorldSize(acltdtComm comm, int32_t *worldSize);

/* The HcclComm underneath (a void *), for every other HCCL call; it stays
 * owned by comm and ends with acltdtDestroyComm. */
ACL_FUNC_VISIBILITY aclError acltdtCommGetHcclComm(acltdtComm comm, void **hcclComm);

#ifdef __cplusplus
}
#endif

#endif /* PYHCCL_ACL_ACL_TDT_H_ */
