/*
 * The acltdt communicator API from C99, one process per rank, no MPI
 * (tests/c/test_c_tdt.py starts them):
 *
 *   tdt_check RANK WORLD GROUP MODE [HOLD_MS]
 *
 * MODE "flow": every acltdt collective with checked results, then each
 * argument error; "hold": create, wait HOLD_MS, destroy; "create": create and
 * destroy; "rdv": no acltdt at all, PyhcclRendezvousOpen + HcclCommInitRootInfo
 * + HcclAllReduce (the same rendezvous for HCCL programs); "bench": round
 * trips of acltdtCommAllReduce and of HcclAllReduce on the same communicator,
 * interleaved, for the cost comparison of docs/LAUNCH.md. A failed set-up
 * prints "CREATE_FAIL <code> <message>" and exits 3; any other failure prints
 * "FAIL ..." and exits 1; success prints "OK rank R".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "hccl/hccl.h"
#include "hccl/hccl_host.h"

static int g_rank;

#define CHECK(expr)                                                                          \
    do {                                                                                     \
        aclError e_ = (expr);                                                                \
        if (e_ != ACL_SUCCESS) {                                                             \
            const char *m_ = aclGetRecentErrMsg();                                           \
            printf("FAIL rank %d: %s = %d (%s)\n", g_rank, #expr, e_, m_ ? m_ : "");          \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

/* A call that must fail with `code` and a message containing `word`. */
#define EXPECT_ERR(expr, code, word)                                                         \
    do {                                                                                     \
        aclError e_ = (expr);                                                                \
        const char *m_ = aclGetRecentErrMsg();                                               \
        if (e_ != (code) || m_ == NULL || strstr(m_, (word)) == NULL) {                      \
            printf("FAIL rank %d: %s = %d (%s), wanted %d and \"%s\"\n", g_rank, #expr, e_,   \
                   m_ ? m_ : "", (int)(code), (word));                                       \
            return 1;                                                                        \
        }                                                                                    \
        printf("misuse rank %d: %s\n", g_rank, m_);                                          \
    } while (0)

static int near(double a, double b) { return a - b < 1e-3 && b - a < 1e-3; }

static int flow(acltdtComm comm, aclrtStream stream, int rank, int world) {
    enum { N = 256 };
    float host[N];
    void *dev = NULL;
    int i, r;
    /* The article's AllReduce: element i of rank r is r * 0.1 + i. */
    for (i = 0; i < N; ++i) host[i] = (float)rank * 0.1f + (float)i;
    CHECK(aclrtMalloc(&dev, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dev, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(acltdtCommAllReduce(comm, dev, sizeof(host), ACL_FLOAT, ACL_TDT_COMM_REDUCE_SUM, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(host, sizeof(host), dev, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    double base = 0;
    for (r = 0; r < world; ++r) base += r * 0.1;
    for (i = 0; i < N; ++i)
        if (!near(host[i], base + (double)i * world)) {
            printf("FAIL rank %d: allreduce[%d] = %g, want %g\n", rank, i, host[i], base + (double)i * world);
            return 1;
        }
    printf("RESULT rank %d: %g %g %g %g %g\n", rank, host[0], host[1], host[2], host[3], host[4]);

    /* MAX over int32, on the communicator's stream (NULL). */
    int32_t iv[3] = {rank, -rank, 7};
    CHECK(acltdtCommAllReduce(comm, iv, sizeof(iv), ACL_INT32, ACL_TDT_COMM_REDUCE_MAX, NULL));
    CHECK(aclrtSynchronizeStream(stream));
    if (iv[0] != world - 1 || iv[1] != 0 || iv[2] != 7) {
        printf("FAIL rank %d: max allreduce gave %d %d %d\n", rank, iv[0], iv[1], iv[2]);
        return 1;
    }
    /* Broadcast from the last rank. */
    int64_t b[4];
    for (i = 0; i < 4; ++i) b[i] = rank == world - 1 ? 1000 + i : -1;
    CHECK(acltdtCommBroadcast(comm, b, sizeof(b), ACL_INT64, world - 1, stream));
    CHECK(aclrtSynchronizeStream(stream));
    for (i = 0; i < 4; ++i)
        if (b[i] != 1000 + i) {
            printf("FAIL rank %d: broadcast[%d] = %lld\n", rank, i, (long long)b[i]);
            return 1;
        }
    /* AllGather of two doubles per rank. */
    double mine[2] = {rank, rank + 0.5}, all[2 * 64];
    if (world > 64) return 0;
    CHECK(acltdtCommAllGather(comm, mine, all, sizeof(mine), ACL_DOUBLE, stream));
    CHECK(aclrtSynchronizeStream(stream));
    for (r = 0; r < world; ++r)
        if (all[2 * r] != r || all[2 * r + 1] != r + 0.5) {
            printf("FAIL rank %d: allgather block %d = %g %g\n", rank, r, all[2 * r], all[2 * r + 1]);
            return 1;
        }
    /* ReduceScatter (sum) of uint16: block k of rank r holds r + k. */
    uint16_t send[64], got = 0;
    for (r = 0; r < world; ++r) send[r] = (uint16_t)(rank + r);
    CHECK(acltdtCommReduceScatter(comm, send, &got, sizeof(got), ACL_UINT16, ACL_TDT_COMM_REDUCE_SUM, stream));
    CHECK(aclrtSynchronizeStream(stream));
    if (got != (uint16_t)(world * (world - 1) / 2 + world * rank)) {
        printf("FAIL rank %d: reducescatter gave %u\n", rank, got);
        return 1;
    }
    /* The HcclComm underneath is a working one. */
    void *hccl = NULL;
    uint32_t size = 0;
    int32_t id = -1, ws = -1;
    CHECK(acltdtCommGetHcclComm(comm, &hccl));
    CHECK(acltdtCommGetRankId(comm, &id));
    CHECK(acltdtCommGetWorldSize(comm, &ws));
    if (HcclGetRankSize(hccl, &size) != HCCL_SUCCESS || size != (uint32_t)world || id != rank || ws != world) {
        printf("FAIL rank %d: getters gave size %u id %d world %d\n", rank, size, id, ws);
        return 1;
    }

    /* Argument errors: each fails before anything is enqueued, on every rank alike. */
    EXPECT_ERR(acltdtCommAllReduce(comm, dev, sizeof(host) - 1, ACL_FLOAT, ACL_TDT_COMM_REDUCE_SUM, stream),
               ACL_ERROR_INVALID_PARAM, "not a multiple of the element size");
    EXPECT_ERR(acltdtCommAllGather(comm, mine, all, 3, ACL_DOUBLE, stream), ACL_ERROR_INVALID_PARAM, "sendBytes (3)");
    EXPECT_ERR(acltdtCommAllReduce(comm, dev, sizeof(host), ACL_BOOL, ACL_TDT_COMM_REDUCE_SUM, stream),
               ACL_ERROR_INVALID_PARAM, "dataType (12)");
    EXPECT_ERR(acltdtCommAllReduce(comm, dev, sizeof(host), ACL_FLOAT, (acltdtCommReduceOp)9, stream),
               ACL_ERROR_INVALID_PARAM, "acltdtCommAllReduce");
    EXPECT_ERR(acltdtCommBroadcast(comm, b, sizeof(b), ACL_INT64, world, stream), ACL_ERROR_INVALID_PARAM,
               "root");
    EXPECT_ERR(acltdtCommAllReduce(NULL, dev, sizeof(host), ACL_FLOAT, ACL_TDT_COMM_REDUCE_SUM, stream),
               ACL_ERROR_INVALID_PARAM, "comm is a null pointer");
    EXPECT_ERR(acltdtCommAllReduce(comm, NULL, sizeof(host), ACL_FLOAT, ACL_TDT_COMM_REDUCE_SUM, stream),
               ACL_ERROR_INVALID_PARAM, "acltdtCommAllReduce: HcclAllReduce");
    CHECK(aclrtFree(dev));
    return 0;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Microseconds per round trip (call + synchronize), best of 5 rounds of `iters`, for
 * acltdtCommAllReduce and HcclAllReduce alternating round by round. */
static int bench(acltdtComm comm, aclrtStream stream, int rank) {
    static const size_t sizes[] = {8, 65536, 4u << 20};
    void *hccl = NULL, *buf = NULL;
    CHECK(acltdtCommGetHcclComm(comm, &hccl));
    CHECK(aclrtMalloc(&buf, 4u << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(buf, 4u << 20, 0, 4u << 20));
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        size_t bytes = sizes[s];
        int iters = bytes <= 65536 ? 2000 : 50;
        double best[2] = {1e30, 1e30};
        for (int round = -2; round < 10; ++round) {  /* rounds -2, -1: warm-up, not counted */
            int which = (round + 2) % 2;
            double t0 = now_us();
            for (int i = 0; i < iters; ++i) {
                if (which == 0)
                    CHECK(acltdtCommAllReduce(comm, buf, bytes, ACL_FLOAT, ACL_TDT_COMM_REDUCE_SUM, stream));
                else
                    CHECK(HcclAllReduce(buf, buf, bytes / 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, hccl, stream)
                              == HCCL_SUCCESS ? ACL_SUCCESS : ACL_ERROR_FAILURE);
                CHECK(aclrtSynchronizeStream(stream));
            }
            double us = (now_us() - t0) / iters;
            if (round >= 0 && us < best[which]) best[which] = us;
        }
        if (rank == 0)
            printf("BENCH bytes=%zu acltdtCommAllReduce_us=%.3f HcclAllReduce_us=%.3f\n", bytes, best[0], best[1]);
    }
    CHECK(aclrtFree(buf));
    return 0;
}

/* The rendezvous from plain HCCL: sums rank + 1 over the ranks. */
static int rdv(const char *group, int rank, int world, aclrtStream stream) {
    HcclRootInfo root;
    PyhcclRendezvous r = NULL;
    HcclComm comm = NULL;
    HcclResult h = PyhcclRendezvousOpen(group, (uint32_t)world, (uint32_t)rank, &root, &r);
    if (h == HCCL_SUCCESS) {
        h = HcclCommInitRootInfo((uint32_t)world, &root, (uint32_t)rank, &comm);
        if (h != HCCL_SUCCESS) PyhcclRendezvousClose(r);
    }
    if (h != HCCL_SUCCESS) {
        const char *m = aclGetRecentErrMsg();
        printf("CREATE_FAIL %d %s\n", (int)h, m ? m : "");
        return 3;
    }
    printf("CREATED rank %d\n", rank);
    float v = (float)(rank + 1);
    CHECK(HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream) == HCCL_SUCCESS
              ? ACL_SUCCESS : ACL_ERROR_FAILURE);
    CHECK(aclrtSynchronizeStream(stream));
    if (!near(v, world * (world + 1) / 2.0)) {
        printf("FAIL rank %d: HcclAllReduce gave %g\n", rank, v);
        return 1;
    }
    printf("RESULT rank %d: %g\n", rank, v);
    CHECK(HcclCommDestroy(comm) == HCCL_SUCCESS ? ACL_SUCCESS : ACL_ERROR_FAILURE);
    CHECK(PyhcclRendezvousClose(r) == HCCL_SUCCESS ? ACL_SUCCESS : ACL_ERROR_FAILURE);
    printf("OK rank %d\n", rank);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s RANK WORLD GROUP flow|hold|create|rdv|bench [HOLD_MS]\n", argv[0]);
        return 2;
    }
    int rank = atoi(argv[1]), world = atoi(argv[2]);
    const char *group = argv[3], *mode = argv[4];
    int hold_ms = argc > 5 ? atoi(argv[5]) : 0;
    g_rank = rank;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(rank >= 0 ? rank % 8 : 0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    if (strcmp(mode, "rdv") == 0) return rdv(group, rank, world, stream);
    acltdtComm comm = NULL;
    aclError e = acltdtCreateComm(&comm, world, rank, group, stream);
    if (e != ACL_SUCCESS) {
        const char *m = aclGetRecentErrMsg();
        printf("CREATE_FAIL %d %s\n", e, m ? m : "");
        fflush(stdout);
        return 3;
    }
    printf("CREATED rank %d\n", rank);
    fflush(stdout);
    if (strcmp(mode, "flow") == 0 && flow(comm, stream, rank, world) != 0) return 1;
    if (strcmp(mode, "bench") == 0 && bench(comm, stream, rank) != 0) return 1;
    if (strcmp(mode, "hold") == 0) {
        struct timespec ts = {hold_ms / 1000, (long)(hold_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    CHECK(acltdtDestroyComm(comm));
    EXPECT_ERR(acltdtDestroyComm(comm), ACL_ERROR_INVALID_PARAM, "not a live acltdtComm");
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(rank % 8));
    CHECK(aclFinalize());
    printf("OK rank %d\n", rank);
    return 0;
}
