/*
 * pyhccl extensions that CANN's HCCL does not have. Code that must also build
 * against a real CANN toolkit tests PYHCCL_HOST_RUNTIME before using them.
 */
#ifndef PYHCCL_HCCL_HCCL_HOST_H_
#define PYHCCL_HCCL_HCCL_HOST_H_

#include <stdint.h>

#include "acl/acl_base.h"
#include "hccl/hccl_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined when building against pyhccl's CPU host runtime. */
#define PYHCCL_HOST_RUNTIME 1

/* Where a communicator's ranks run. Ranks are on one host when they can share
 * memory: the same host name, boot id and network namespace. Hosts are
 * numbered from 0 in the order of their lowest rank. */
typedef struct {
    uint32_t nHosts;    /* hosts the communicator spans */
    uint32_t hostId;    /* this rank's host */
    uint32_t localRank; /* this rank's index among the ranks of its host */
    uint32_t localSize; /* ranks on this rank's host */
} PyhcclTopology;

/* Fills *topo, and hostOfRank[r] (when not NULL; rankCount must then be the
 * communicator's rank count) with the host of every rank r. */
HCCL_API_VISIBILITY HcclResult PyhcclCommGetTopology(HcclComm comm, PyhcclTopology *topo, uint32_t *hostOfRank,
                                 uint32_t rankCount);

/* The name of host hostId (its host name, "/tag" added when PYHCCL_HOST_TAG
 * told ranks apart), NUL-terminated in name[0..nameLen). */
HCCL_API_VISIBILITY HcclResult PyhcclCommGetHostName(HcclComm comm, uint32_t hostId, char *name, uint32_t nameLen);

/* How this rank reaches rank `peer`: "shm" (shared memory, same host), "tcp"
 * (another host, or PYHCCL_TRANSPORT=tcp) or "self". */
HCCL_API_VISIBILITY HcclResult PyhcclCommGetTransport(HcclComm comm, uint32_t peer, char *name, uint32_t nameLen);

/* One operation of a communicator, as its flight recorder kept it. */
typedef struct {
    uint64_t seq;           /* collective number on the communicator (0: send/recv) */
    char opName[32];        /* "HcclAllReduce", ... */
    uint64_t count;
    int32_t dataType;
    int32_t root;
    int32_t reduceOp;
    int32_t state;          /* 0 queued, 1 running, 2 done, 3 failed */
    double enqueueUs;       /* monotonic clock (CLOCK_MONOTONIC), microseconds */
    double startUs;         /* 0 until it starts */
    double endUs;           /* 0 until it ends */
    char algorithm[16];     /* "board", "flat", "hier", "ring", "direct", "chain", ... ("" before it ran) */
} PyhcclOpRecord;

/* The last operations of the communicator (up to 64), oldest first: fills
 * records[0..*count), *count <= capacity. Every rank also logs them when an
 * operation fails. */
HCCL_API_VISIBILITY HcclResult PyhcclCommGetFlightRecord(HcclComm comm, PyhcclOpRecord *records,
                                                         uint32_t capacity, uint32_t *count);

/* Why the first failed HCCL operation of a stream failed. */
typedef struct {
    int32_t code;       /* HcclResult */
    char opName[32];    /* "HcclAllReduce", ... */
    uint64_t seq;       /* its collective number (0: send/recv, or it never ran) */
    int32_t rank;       /* the rank at fault when known (the peer that died, differed,
                           timed out or reported the failure), else -1 */
    char message[512];  /* what aclGetRecentErrMsg said for it */
} PyhcclOpError;

/* After aclrtSynchronizeStream(stream) failed: whether the stream's first
 * failed task was an HCCL operation (*found = 1, *info filled) or not
 * (*found = 0). The record is forgotten once taken. */
HCCL_API_VISIBILITY HcclResult PyhcclStreamTakeOpError(aclrtStream stream, PyhcclOpError *info,
                                                       int32_t *found);

/* Makes every communicator set-up (HcclCommInitRootInfo*) in progress in this
 * process give up within about 100 ms with HCCL_E_UNAVAIL, and tells the
 * other ranks, whose set-up then fails as well (for Ctrl-C handling: call
 * it from another thread or a signal-handling loop). */
HCCL_API_VISIBILITY HcclResult PyhcclCancelSetups(void);

/* Aborts the communicator, like NCCL's ncclCommAbort: returns at once; every
 * pending and later operation of it on this rank fails at once with
 * HCCL_E_UNAVAIL, and its peers' pending operations fail within about a second
 * with HCCL_E_REMOTE naming this rank. HcclCommDestroy then returns at once.
 * Survivors can build a new communicator among themselves. */
HCCL_API_VISIBILITY HcclResult PyhcclCommAbort(HcclComm comm);

/* HcclCommDestroy with a deadline: waits at most timeoutMs (>= 0) for the
 * communicator's enqueued operations; any still in flight then are aborted
 * (as by PyhcclCommAbort: they fail at once here, their peers learn that this
 * rank left) and the call returns HCCL_E_TIMEOUT with a message listing
 * them. The communicator is destroyed either way. */
HCCL_API_VISIBILITY HcclResult PyhcclCommDestroyTimeout(HcclComm comm, int32_t timeoutMs);

/* Gather, Scatter's mirror image (CANN has only the command code
 * HCCL_CMD_GATHER): every rank sends sendCount elements of sendBuf; the root
 * receives nRanks x sendCount in recvBuf, rank r's at r x sendCount. recvBuf
 * is read on the root only (NULL elsewhere is fine); in place when sendBuf is
 * recvBuf + root x sendCount on the root. */
HCCL_API_VISIBILITY HcclResult PyhcclGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
                                            HcclDataType dataType, uint32_t root, HcclComm comm,
                                            aclrtStream stream);

/* Ranks started by hand, with no MPI (docs/LAUNCH.md): the rendezvous that
 * acltdtCreateComm uses, for HcclCommInitRootInfo. Every rank calls
 * PyhcclRendezvousOpen with the same group name (1 to 127 bytes) and nRanks
 * and its own rank, then HcclCommInitRootInfo(nRanks, rootInfo, rank, &comm).
 * Rank 0 makes the root info (HcclGetRootInfo) and opens the group; the other
 * ranks wait for it, at most HCCL_CONNECT_TIMEOUT seconds, and receive the
 * root info from it. Where they meet:
 *   - MASTER_ADDR and MASTER_PORT set (torch's variables): rank 0 listens on
 *     TCP port MASTER_PORT (all addresses), the others dial MASTER_ADDR;
 *   - otherwise, on this host: an abstract unix socket named after the user
 *     and the group, owned by rank 0 (gone with its process); only processes
 *     of the same user are answered.
 * A group stays open until rank 0 closes its handle: meanwhile a second job
 * opening the same group gets HCCL_E_UNAVAIL with a message naming the
 * process that has it. Close the handle on every rank after the
 * communicator is destroyed, or when HcclCommInitRootInfo failed. */
typedef struct PyhcclRendezvousImpl *PyhcclRendezvous;

HCCL_API_VISIBILITY HcclResult PyhcclRendezvousOpen(const char *group, uint32_t nRanks, uint32_t rank,
                                                    HcclRootInfo *rootInfo,
                                                    PyhcclRendezvous *rendezvous);

/* Closes the rendezvous (rank 0: the group; NULL is fine). */
HCCL_API_VISIBILITY HcclResult PyhcclRendezvousClose(PyhcclRendezvous rendezvous);

#ifdef __cplusplus
}
#endif

#endif /* PYHCCL_HCCL_HCCL_HOST_H_ */
