/*
 * Multi-process check of libhccl's communicators and collectives, without MPI.
 *
 *   hccl_check MODE RANK NRANKS ROOTFILE [ARGS]
 *   hccl_check --list           the names of the modes (the table kModes, at the end)
 *
 * Rank 0 writes HcclGetRootInfo's blob to ROOTFILE (ROOTFILE.b for a second
 * communicator); the other ranks poll for it. Modes:
 *   suite [host|device]   every collective x dtypes x ops x counts, in place and
 *                         not, on two communicators at once; argument errors
 *   initfail              set-up fails on every rank with one message (a fault
 *                         set in the environment of one rank)
 *   timeout [cfg]         the last rank never calls the collective: the others
 *                         must fail within seconds (HCCL_EXEC_TIMEOUT=2, or
 *                         with "cfg" the config's hcclExecTimeOut = 2)
 *   kill [COUNT host|device]  the last rank SIGKILLs itself mid-collective: the
 *                         others must fail, not hang
 *   abort                 rank 0 aborts (PyhcclCommAbort) while the others wait
 *   sigstop               the last rank stops itself mid-collective (SIGCONT by
 *                         the driver): no rank succeeds on abandoned buffers
 *   late                  the last rank comes after the others timed out
 *   mismatch WHAT         rank 0 calls something else (another count, root,
 *                         dtype, op...): all ranks must fail fast
 *   mismatch_v KIND HOW   KIND allgatherv|reducescatterv: rank 0 passes other
 *                         counts (HOW "other", or "zero": all 0): HCCL_E_PARA
 *                         on every rank, fast
 *   config DET            HcclGetConfig reads HCCL_DETERMINISTIC (DET expected);
 *                         HcclSetConfig is the default of later communicators
 *   perf BYTES ITERS [host|device]  time of a float32 sum AllReduce
 *   inline WHAT           small operations that may run on the calling thread:
 *                         "crossed" two communicators called in opposite orders
 *                         on two streams, joined by an event; "late" rank 0
 *                         calls only after the others' calls have returned;
 *                         "done" (with PYHCCL_INLINE_US=1000000) the op
 *                         has completed when the call returns
 *   p2pring WHAT COUNT    a ring of HcclSend then HcclRecv of COUNT floats:
 *                         "ring" without a group is a deadlock above the
 *                         channel size: every rank fails within seconds saying
 *                         so; "timeout" the same where it cannot be seen (other
 *                         hosts): the timeout names group(); "group" inside
 *                         HcclGroupStart/End delivers; "late" rank 0 receives
 *                         first, 1 s late: no deadlock, everything arrives
 *   order WHAT COUNT      two communicators (order_a, order_b), an AllReduce of
 *                         COUNT floats on each, both enqueued on one stream:
 *                         "opposite" rank 0 calls a then b, the others b then
 *                         a: every rank fails within seconds naming both;
 *                         "off" the same with PYHCCL_ORDER_CHECK=0: it times out
 *                         (HCCL_EXEC_TIMEOUT); "same" every rank a then b: it works
 * Each rank prints "rank R: PASS ..." and exits 0 when all went well.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hccl/hccl_host.h"
#include "rank_check.h"

static int g_device_mem;

/* name NULL: HcclCommInitRootInfo; else a config with that name, and
 * buffer_mb / exec_timeout when not 0. Checks its rank and size. */
static HcclComm make_comm(const char *path, const char *name, uint32_t buffer_mb,
                          int32_t exec_timeout) {
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  if (name != NULL) snprintf(cfg.hcclCommName, sizeof(cfg.hcclCommName), "%s", name);
  if (buffer_mb) cfg.hcclBufferSize = buffer_mb;
  if (exec_timeout) cfg.hcclExecTimeOut = exec_timeout;
  HcclComm comm = init_comm(path, name != NULL ? &cfg : NULL);
  uint32_t size = 0, rank = 99;
  HCCL_OK(HcclGetRankSize(comm, &size));
  HCCL_OK(HcclGetRankId(comm, &rank));
  CHECK(size == (uint32_t)g_n && rank == (uint32_t)g_rank, "rank %u size %u", rank, size);
  return comm;
}

/* ---- typed values ------------------------------------------------------- */

static const HcclDataType kTypes[] = {
    HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_INT16,  HCCL_DATA_TYPE_INT32,  HCCL_DATA_TYPE_INT64,
    HCCL_DATA_TYPE_UINT8,  HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64,
    HCCL_DATA_TYPE_FP16,   HCCL_DATA_TYPE_FP32,   HCCL_DATA_TYPE_FP64,   HCCL_DATA_TYPE_BFP16};
#define NTYPES (sizeof(kTypes) / sizeof(kTypes[0]))
static const char *kOpNames[] = {"sum", "prod", "max", "min"};

static size_t esize(HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    default: return 8;
  }
}

static int is_unsigned(HcclDataType t) {
  return t == HCCL_DATA_TYPE_UINT8 || t == HCCL_DATA_TYPE_UINT16 || t == HCCL_DATA_TYPE_UINT32 ||
         t == HCCL_DATA_TYPE_UINT64;
}

/* Small integers only, so every sum/product below is exact in every type. */
static uint16_t f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (f == 0) return (uint16_t)sign;
  return (uint16_t)(sign | ((uint32_t)exp << 10) | (mant >> 13));
}
static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
  if (exp == 0 && mant == 0) x = sign;
  else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static void store(HcclDataType t, void *p, size_t i, double v) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case HCCL_DATA_TYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case HCCL_DATA_TYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case HCCL_DATA_TYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case HCCL_DATA_TYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case HCCL_DATA_TYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case HCCL_DATA_TYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case HCCL_DATA_TYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case HCCL_DATA_TYPE_FP16: ((uint16_t *)p)[i] = f2h((float)v); break;
    case HCCL_DATA_TYPE_FP32: ((float *)p)[i] = (float)v; break;
    case HCCL_DATA_TYPE_FP64: ((double *)p)[i] = v; break;
    case HCCL_DATA_TYPE_BFP16: {
      float f = (float)v;
      uint32_t x;
      memcpy(&x, &f, 4);
      ((uint16_t *)p)[i] = (uint16_t)(x >> 16);
      break;
    }
    default: break;
  }
}

static double load(HcclDataType t, const void *p, size_t i) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: return ((const int8_t *)p)[i];
    case HCCL_DATA_TYPE_INT16: return ((const int16_t *)p)[i];
    case HCCL_DATA_TYPE_INT32: return ((const int32_t *)p)[i];
    case HCCL_DATA_TYPE_INT64: return (double)((const int64_t *)p)[i];
    case HCCL_DATA_TYPE_UINT8: return ((const uint8_t *)p)[i];
    case HCCL_DATA_TYPE_UINT16: return ((const uint16_t *)p)[i];
    case HCCL_DATA_TYPE_UINT32: return ((const uint32_t *)p)[i];
    case HCCL_DATA_TYPE_UINT64: return (double)((const uint64_t *)p)[i];
    case HCCL_DATA_TYPE_FP16: return h2f(((const uint16_t *)p)[i]);
    case HCCL_DATA_TYPE_FP32: return ((const float *)p)[i];
    case HCCL_DATA_TYPE_FP64: return ((const double *)p)[i];
    case HCCL_DATA_TYPE_BFP16: {
      uint32_t x = (uint32_t)((const uint16_t *)p)[i] << 16;
      float f;
      memcpy(&f, &x, 4);
      return f;
    }
    default: return NAN;
  }
}

/* Input of `rank` at element i for reductions with op (or plain data: op -1). */
static double gen(int op, HcclDataType t, int rank, size_t i) {
  if (op == HCCL_REDUCE_PROD) return (double)(1 + (i + rank) % 2);
  long v = (long)((i * 7 + (size_t)rank * 13 + 3) % 11);
  return is_unsigned(t) ? (double)v : (double)(v - 5);
}

static double fold(int op, double a, double b) {
  switch (op) {
    case HCCL_REDUCE_SUM: return a + b;
    case HCCL_REDUCE_PROD: return a * b;
    case HCCL_REDUCE_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}

static double expect_reduced(int op, HcclDataType t, size_t i) {
  double acc = gen(op, t, 0, i);
  for (int r = 1; r < g_n; ++r) acc = fold(op, acc, gen(op, t, r, i));
  return acc;
}

/* The reduction kernels (reduce.h) handle every op for types 0..11. */
static int reducible(HcclDataType t, int op) {
  (void)t;
  (void)op;
  return 1;
}

static void *alloc(size_t bytes) {
  void *p = NULL;
  if (bytes == 0) bytes = 64;
  if (g_device_mem) ACL_OK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  else p = malloc(bytes);
  if (!p) exit(3);
  memset(p, 0xee, bytes);
  return p;
}
static void release(void *p) {
  if (g_device_mem) aclrtFree(p);
  else free(p);
}

static int compare(const char *what, HcclDataType t, const void *buf, size_t i0, size_t count,
                   double (*want)(size_t, void *), void *ctx) {
  size_t bad = 0, first = (size_t)-1;
  for (size_t i = 0; i < count; ++i) {
    double got = load(t, buf, i0 + i), exp = want(i, ctx);
    if (!(got == exp)) {
      if (bad++ == 0) first = i;
    }
  }
  CHECK(bad == 0, "%s: %zu of %zu wrong, first at %zu: got %g want %g", what, bad, count, first,
        bad ? load(t, buf, i0 + first) : 0.0, bad ? want(first, ctx) : 0.0);
  return bad == 0;
}

struct Want {
  int op;
  HcclDataType t;
  int rank;
  size_t base;
};
static double want_reduced(size_t i, void *c) {
  struct Want *w = c;
  return expect_reduced(w->op, w->t, w->base + i);
}
static double want_plain(size_t i, void *c) {
  struct Want *w = c;
  return gen(-1, w->t, w->rank, w->base + i);
}

/* ---- collectives ------------------------------------------------------- */

static void sync_ok(aclrtStream s, const char *what) {
  aclError e = aclrtSynchronizeStream(s);
  CHECK(e == ACL_SUCCESS, "%s: synchronize -> %d (%s)", what, (int)e, aclGetRecentErrMsg());
}

/* How the operations enqueued on `s` since t0 ended: the stream's error, the
 * message it left, the communicator's async error; printed as one line. */
struct Outcome {
  aclError e;
  HcclResult async;
  double took;
  char msg[2048];
};
static struct Outcome outcome(HcclComm comm, aclrtStream s, double t0, const char *what) {
  struct Outcome o;
  o.e = aclrtSynchronizeStream(s);
  o.took = now_s() - t0;
  const char *m = aclGetRecentErrMsg();
  snprintf(o.msg, sizeof(o.msg), "%s", m ? m : "");
  o.async = HCCL_SUCCESS;
  HCCL_OK(HcclGetCommAsyncError(comm, &o.async));
  printf("rank %d: %s: aclError %d, async error %d after %.2f s: %s\n", g_rank, what, (int)o.e,
         (int)o.async, o.took, o.msg);
  return o;
}

static void t_allreduce(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count,
                        int in_place) {
  size_t es = esize(t);
  char what[128];
  snprintf(what, sizeof(what), "AllReduce t=%d op=%s count=%zu inplace=%d", (int)t,
           kOpNames[op], count, in_place);
  char *send = alloc(count * es), *recv = in_place ? send : alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclAllReduce(send, recv, count, t, (HcclReduceOp)op, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, 0};
  compare(what, t, recv, 0, count, want_reduced, &w);
  if (!in_place) release(recv);
  release(send);
}

static void t_reduce(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count, int root,
                     int in_place) {
  size_t es = esize(t);
  char what[128];
  snprintf(what, sizeof(what), "Reduce t=%d op=%s count=%zu root=%d", (int)t, kOpNames[op], count,
           root);
  char *send = alloc(count * es), *recv = in_place ? send : alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclReduce(send, g_rank == root ? recv : NULL, count, t, (HcclReduceOp)op, root, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, 0};
  if (g_rank == root) compare(what, t, recv, 0, count, want_reduced, &w);
  if (!in_place) release(recv);
  release(send);
}

static void t_broadcast(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root) {
  char what[96];
  snprintf(what, sizeof(what), "Broadcast t=%d count=%zu root=%d", (int)t, count, root);
  char *buf = alloc(count * esize(t));
  for (size_t i = 0; i < count; ++i) store(t, buf, i, g_rank == root ? gen(-1, t, root, i) : 99);
  HCCL_OK(HcclBroadcast(buf, count, t, root, comm, s));
  sync_ok(s, what);
  struct Want w = {-1, t, root, 0};
  compare(what, t, buf, 0, count, want_plain, &w);
  release(buf);
}

static void t_allgather(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int in_place) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "AllGather t=%d count=%zu inplace=%d", (int)t, count, in_place);
  char *recv = alloc(count * es * g_n);
  char *send = in_place ? recv + g_rank * count * es : alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(HcclAllGather(send, recv, count, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p, 0};
    compare(what, t, recv, p * count, count, want_plain, &w);
  }
  if (!in_place) release(send);
  release(recv);
}

static void t_reducescatter(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count,
                            int in_place) {
  size_t es = esize(t);
  char what[128];
  snprintf(what, sizeof(what), "ReduceScatter t=%d op=%s count=%zu inplace=%d", (int)t,
           kOpNames[op], count, in_place);
  char *send = alloc(count * es * g_n);
  char *recv = in_place ? send + g_rank * count * es : alloc(count * es);
  for (size_t i = 0; i < count * g_n; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclReduceScatter(send, recv, count, t, (HcclReduceOp)op, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, g_rank * count};
  compare(what, t, recv, 0, count, want_reduced, &w);
  if (!in_place) release(recv);
  release(send);
}

static void t_scatter(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "Scatter t=%d count=%zu root=%d", (int)t, count, root);
  char *send = alloc(count * es * g_n), *recv = alloc(count * es);
  for (size_t i = 0; i < count * g_n; ++i) store(t, send, i, gen(-1, t, root, i));
  HCCL_OK(HcclScatter(send, recv, count, t, root, comm, s));
  sync_ok(s, what);
  struct Want w = {-1, t, root, g_rank * count};
  compare(what, t, recv, 0, count, want_plain, &w);
  release(send);
  release(recv);
}

/* Gather, Scatter's mirror image: rank p's block lands at p * count on the root only,
 * whose recvBuf is the only one (NULL elsewhere); in place, the root's sendBuf is its block. */
static void t_gather(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root, int in_place) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "Gather t=%d count=%zu root=%d inplace=%d", (int)t, count, root, in_place);
  const int at_root = g_rank == root, own = !(at_root && in_place);
  char *recv = at_root ? alloc(count * es * g_n) : NULL;
  char *send = own ? alloc(count * es) : recv + root * count * es;
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(PyhcclGather(send, recv, count, t, root, comm, s));
  sync_ok(s, what);
  for (int p = 0; at_root && p < g_n; ++p) {
    struct Want w = {-1, t, p, 0};
    compare(what, t, recv, p * count, count, want_plain, &w);
  }
  if (own) release(send);
  if (recv) release(recv);
}

/* AlltoAll: rank p sends block q = gen(p, q*count + i); rank q gets block p from p. */
static void t_alltoall(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int in_place) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "AlltoAll t=%d count=%zu inplace=%d", (int)t, count, in_place);
  char *send = alloc(count * es * g_n), *recv = in_place ? send : alloc(count * es * g_n);
  for (size_t i = 0; i < count * g_n; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(HcclAlltoAll(send, count, t, recv, count, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p, g_rank * count};
    compare(what, t, recv, p * count, count, want_plain, &w);
  }
  if (!in_place) release(recv);
  release(send);
}

/* V variants: rank p's block for q has (p + 2 q) % 5 * base elements. */
static uint64_t vcount(int p, int q, size_t base) { return (uint64_t)((p + 2 * q) % 5) * base; }

static void t_alltoallv(HcclComm comm, aclrtStream s, HcclDataType t, size_t base) {
  size_t es = esize(t);
  uint64_t sc[64], sd[64], rc[64], rd[64], stot = 0, rtot = 0;
  char what[96];
  snprintf(what, sizeof(what), "AlltoAllV t=%d base=%zu", (int)t, base);
  for (int q = 0; q < g_n; ++q) {
    sc[q] = vcount(g_rank, q, base);
    sd[q] = stot + 3;  /* gaps between blocks */
    stot += sc[q] + 3;
    rc[q] = vcount(q, g_rank, base);
    rd[q] = rtot + 1;
    rtot += rc[q] + 1;
  }
  char *send = alloc(stot * es), *recv = alloc(rtot * es);
  for (int q = 0; q < g_n; ++q)
    for (size_t i = 0; i < sc[q]; ++i) store(t, send, sd[q] + i, gen(-1, t, g_rank * 64 + q, i));
  HCCL_OK(HcclAlltoAllV(send, sc, sd, t, recv, rc, rd, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p * 64 + g_rank, 0};
    compare(what, t, recv, rd[p], rc[p], want_plain, &w);
  }
  release(send);
  release(recv);
}

static void t_allgatherv(HcclComm comm, aclrtStream s, HcclDataType t, size_t base) {
  size_t es = esize(t);
  uint64_t rc[64], rd[64], tot = 0;
  char what[96];
  snprintf(what, sizeof(what), "AllGatherV t=%d base=%zu", (int)t, base);
  for (int p = 0; p < g_n; ++p) {
    rc[p] = vcount(p, 1, base);
    rd[p] = tot + 2;
    tot += rc[p] + 2;
  }
  char *recv = alloc(tot * es), *send = alloc(rc[g_rank] * es);
  for (size_t i = 0; i < rc[g_rank]; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(HcclAllGatherV(send, rc[g_rank], recv, rc, rd, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p, 0};
    compare(what, t, recv, rd[p], rc[p], want_plain, &w);
  }
  release(send);
  release(recv);
}

static void t_reducescatterv(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t base) {
  size_t es = esize(t);
  uint64_t sc[64], sd[64], tot = 0;
  char what[96];
  snprintf(what, sizeof(what), "ReduceScatterV t=%d op=%s base=%zu", (int)t, kOpNames[op], base);
  for (int q = 0; q < g_n; ++q) {
    sc[q] = vcount(0, q, base) + 1;
    sd[q] = tot;
    tot += sc[q];
  }
  char *send = alloc(tot * es), *recv = alloc(sc[g_rank] * es);
  for (size_t i = 0; i < tot; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclReduceScatterV(send, sc, sd, recv, sc[g_rank], t, (HcclReduceOp)op, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, sd[g_rank]};
  compare(what, t, recv, 0, sc[g_rank], want_reduced, &w);
  release(send);
  release(recv);
}

/* Ring exchange: send to rank+1, receive from rank-1, as a batch and as a group. */
static void t_sendrecv(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int grouped) {
  size_t es = esize(t);
  int to = (g_rank + 1) % g_n, from = (g_rank + g_n - 1) % g_n;
  char what[96];
  snprintf(what, sizeof(what), "SendRecv t=%d count=%zu grouped=%d", (int)t, count, grouped);
  char *send = alloc(count * es), *recv = alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  if (grouped) {
    HCCL_OK(HcclGroupStart());
    HCCL_OK(HcclSend(send, count, t, to, comm, s));
    HCCL_OK(HcclRecv(recv, count, t, from, comm, s));
    HCCL_OK(HcclGroupEnd());
  } else {
    HcclSendRecvItem items[2] = {{HCCL_SEND, send, count, t, (uint32_t)to},
                                 {HCCL_RECV, recv, count, t, (uint32_t)from}};
    HCCL_OK(HcclBatchSendRecv(items, 2, comm, s));
  }
  sync_ok(s, what);
  struct Want w = {-1, t, from, 0};
  compare(what, t, recv, 0, count, want_plain, &w);
  release(send);
  release(recv);
}

/* ---- determinism ------------------------------------------------------- */

static uint64_t fnv(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Fractional inputs, so rounding depends on the order of the fold: on one
 * host every path must give exactly ((x0 + x1) + x2) + ... in rank order
 * (across hosts, or on a ring, the order is fixed by the job shape instead:
 * CHECK_FOLD_ORDER=any), every rank the same bits (compared through an
 * AllGather of hashes), and a second run the same bits as the first. */
static void t_determinism(HcclComm comm, aclrtStream s, HcclDataType t, size_t count) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "determinism t=%d count=%zu", (int)t, count);
  char *buf = alloc(count * es), *ref = malloc(count * es + 8);
  for (size_t i = 0; i < count; ++i) {
    double acc = 0;
    float facc = 0;
    for (int r = 0; r < g_n; ++r) {
      double v = (double)((i * 37 + (size_t)r * 101) % 1000) * 0.0013 + r * 0.3337;
      if (r == g_rank) store(t, buf, i, v);
      float fv = (float)v;
      facc = r == 0 ? fv : facc + fv;
      acc = r == 0 ? v : acc + v;
    }
    if (t == HCCL_DATA_TYPE_FP32) ((float *)ref)[i] = facc;
    if (t == HCCL_DATA_TYPE_FP64) ((double *)ref)[i] = acc;
  }
  char *again = alloc(count * es);
  memcpy(again, buf, count * es);
  HCCL_OK(HcclAllReduce(buf, buf, count, t, HCCL_REDUCE_SUM, comm, s));
  HCCL_OK(HcclAllReduce(again, again, count, t, HCCL_REDUCE_SUM, comm, s));
  sync_ok(s, what);
  CHECK(memcmp(buf, again, count * es) == 0, "%s: a second run gave other bits", what);
  const char *order = getenv("CHECK_FOLD_ORDER");
  int rank_order = order == NULL || strcmp(order, "any") != 0;
  if (rank_order && (t == HCCL_DATA_TYPE_FP32 || t == HCCL_DATA_TYPE_FP64))
    CHECK(memcmp(buf, ref, count * es) == 0, "%s: not the rank-order fold", what);
  release(again);
  uint64_t *hashes = alloc(8 * g_n), *mine = alloc(8);
  *mine = fnv(buf, count * es);
  HCCL_OK(HcclAllGather(mine, hashes, 1, HCCL_DATA_TYPE_UINT64, comm, s));
  sync_ok(s, what);
  for (int r = 0; r < g_n; ++r) CHECK(hashes[r] == *mine, "%s: rank %d has other bits", what, r);
  release(hashes);
  release(mine);
  release(buf);
  free(ref);
}

/* ---- argument errors ---------------------------------------------------- */

static void expect_err(HcclResult got, HcclResult want, const char *call, const char *word) {
  const char *msg = aclGetRecentErrMsg();
  CHECK(got == want, "%s returned %d, want %d (%s)", call, (int)got, (int)want, msg ? msg : "");
  CHECK(msg && strstr(msg, call), "%s: message \"%s\" does not name the call", call, msg ? msg : "");
  if (word) CHECK(msg && strstr(msg, word), "%s: message \"%s\" lacks \"%s\"", call, msg ? msg : "", word);
}

/* A grouped op whose stream is destroyed before HcclGroupEnd: a clean error
 * naming HcclGroupEnd and the stream, and the (private) comm is failed. */
static void t_group_stream_destroyed(void) {
  HcclRootInfo ri;
  HcclComm c1 = NULL;
  HCCL_OK(HcclGetRootInfo(&ri));
  HCCL_OK(HcclCommInitRootInfo(1, &ri, 0, &c1));
  float a[8] = {0}, b[8];
  aclrtStream tmp;
  ACL_OK(aclrtCreateStream(&tmp));
  HCCL_OK(HcclGroupStart());
  HCCL_OK(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c1, tmp));
  HCCL_OK(HcclSend(a, 8, HCCL_DATA_TYPE_FP32, 0, c1, tmp));
  HCCL_OK(HcclRecv(b, 8, HCCL_DATA_TYPE_FP32, 0, c1, tmp));
  ACL_OK(aclrtDestroyStream(tmp));
  expect_err(HcclGroupEnd(), HCCL_E_PARA, "HcclGroupEnd", "is not a live stream");
  char want[64];
  snprintf(want, sizeof(want), "%p", (void *)tmp);
  const char *msg = aclGetRecentErrMsg();
  CHECK(msg && strstr(msg, want), "HcclGroupEnd message \"%s\" does not name stream %s",
        msg ? msg : "", want);
  HcclResult ae = HCCL_SUCCESS;
  HCCL_OK(HcclGetCommAsyncError(c1, &ae));
  CHECK(ae == HCCL_E_PARA, "comm of the failed group: async error %d", (int)ae);
  bool active = true;
  HCCL_OK(HcclGroupStatusGet(&active));
  CHECK(active == 0, "group still active after a failed HcclGroupEnd");
  HCCL_OK(HcclCommDestroy(c1));
}

/* The NULL (default) stream on a thread with no device set. */
struct NullStreamArg {
  HcclComm comm;
  HcclResult r;
  char msg[512];
};
static void *null_stream_thread(void *p) {
  struct NullStreamArg *arg = (struct NullStreamArg *)p;
  float a[8] = {0}, b[8];
  arg->r = HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, arg->comm, NULL);
  const char *m = aclGetRecentErrMsg();
  snprintf(arg->msg, sizeof(arg->msg), "%s", m ? m : "");
  return NULL;
}
static void t_null_stream_no_device(HcclComm comm) {
  struct NullStreamArg arg;
  memset(&arg, 0, sizeof(arg));
  arg.comm = comm;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, null_stream_thread, &arg) == 0, "pthread_create");
  pthread_join(th, NULL);
  CHECK(arg.r == HCCL_E_PARA, "NULL stream, no device: returned %d (%s)", (int)arg.r, arg.msg);
  CHECK(strstr(arg.msg, "HcclAllReduce") && strstr(arg.msg, "stream is NULL") &&
            strstr(arg.msg, "aclrtSetDevice"),
        "NULL stream, no device: message \"%s\"", arg.msg);
}

static void t_errors(HcclComm comm, aclrtStream s) {
  float a[8], b[8];
  uint32_t u;
  expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, NULL, s), HCCL_E_PTR,
             "HcclAllReduce", "comm");
  expect_err(HcclAllReduce(NULL, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s), HCCL_E_PTR,
             "HcclAllReduce", "sendBuf");
  expect_err(HcclAllReduce(a, b, 8, (HcclDataType)99, HCCL_REDUCE_SUM, comm, s), HCCL_E_PARA,
             "HcclAllReduce", "dataType");
  expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM, comm, s),
             HCCL_E_NOT_SUPPORT, "HcclAllReduce", "dataType");
  expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, (HcclReduceOp)7, comm, s), HCCL_E_PARA,
             "HcclAllReduce", "op");
  expect_err(HcclAllReduce(a, a + 1, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s),
             HCCL_E_PARA, "HcclAllReduce", "overlap");
  expect_err(HcclBroadcast(a, 8, HCCL_DATA_TYPE_FP32, (uint32_t)g_n, comm, s), HCCL_E_PARA,
             "HcclBroadcast", "root");
  expect_err(HcclSend(a, 8, HCCL_DATA_TYPE_FP32, (uint32_t)g_n + 3, comm, s), HCCL_E_PARA,
             "HcclSend", "destRank");
  /* Gather: every rank its own root where only the root's recvBuf is checked. */
  float g[16];
  expect_err(PyhcclGather(a, b, 2, HCCL_DATA_TYPE_FP32, (uint32_t)g_n, comm, s), HCCL_E_PARA,
             "PyhcclGather", "root");
  expect_err(PyhcclGather(NULL, b, 2, HCCL_DATA_TYPE_FP32, 0, comm, s), HCCL_E_PTR, "PyhcclGather",
             "sendBuf");
  expect_err(PyhcclGather(a, NULL, 2, HCCL_DATA_TYPE_FP32, (uint32_t)g_rank, comm, s), HCCL_E_PTR,
             "PyhcclGather", "recvBuf");
  expect_err(PyhcclGather(g + 2 * g_rank + 1, g, 2, HCCL_DATA_TYPE_FP32, (uint32_t)g_rank, comm, s),
             HCCL_E_PARA, "PyhcclGather", "root * sendCount");
  expect_err(HcclAlltoAll(a, 1, HCCL_DATA_TYPE_FP32, b, 2, HCCL_DATA_TYPE_FP32, comm, s),
             HCCL_E_PARA, "HcclAlltoAll", "recvCount");
  expect_err(HcclGetRankSize(comm, NULL), HCCL_E_PTR, "HcclGetRankSize", "rankSize");
  expect_err(HcclGetRankSize((HcclComm)(uintptr_t)0x1234, &u), HCCL_E_PARA, "HcclGetRankSize",
             "comm");
  HcclComm none = NULL;
  expect_err(HcclCommInitClusterInfo("/nonexistent/rank_table.json", 0, &none),
             HCCL_E_OPEN_FILE_FAILURE, "HcclCommInitClusterInfo", "cannot read the rank table");
  expect_err(HcclGroupEnd(), HCCL_E_PARA, "HcclGroupEnd", NULL);
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  memset(cfg.reserved + 8, 0, 4); /* bad magic */
  HcclRootInfo ri;
  memset(&ri, 0, sizeof(ri));
  HcclComm c2;
  expect_err(HcclCommInitRootInfoConfig(1, &ri, 0, &cfg, &c2), HCCL_E_PARA,
             "HcclCommInitRootInfoConfig", "magic");
  HcclCommConfigInit(&cfg); /* a good config, a bad root info: named after the Config call */
  expect_err(HcclCommInitRootInfoConfig(1, &ri, 0, &cfg, &c2), HCCL_E_PARA,
             "HcclCommInitRootInfoConfig", "rootInfo");
  t_group_stream_destroyed();
  t_null_stream_no_device(comm);
  CHECK(strlen(HcclGetErrorString(HCCL_E_TIMEOUT)) > 0, "error string");
  CHECK(HcclGetCommConfigCapability() == HCCL_COMM_CONFIG_RESERVED, "capability");
  HcclConfigValue v = {1};
  HCCL_OK(HcclSetConfig(HCCL_DETERMINISTIC, v));
  v.value = -5;
  HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &v));
  CHECK(v.value == 1, "HcclGetConfig deterministic = %d", v.value);
  uint32_t ndev = 0;
  ACL_OK(aclrtGetDeviceCount(&ndev));
  if (ndev >= 2) { /* a stream of another device is refused */
    aclrtStream other;
    ACL_OK(aclrtSetDevice(1));
    ACL_OK(aclrtCreateStream(&other));
    expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, other),
               HCCL_E_PARA, "HcclAllReduce", "stream belongs to device 1, communicator to device 0");
    ACL_OK(aclrtDestroyStream(other));
    ACL_OK(aclrtSetDevice(0));
  }
  HcclResult ae = HCCL_E_INTERNAL;
  HCCL_OK(HcclGetCommAsyncError(comm, &ae));
  CHECK(ae == HCCL_SUCCESS, "async error %d on a healthy comm", (int)ae);
}

/* ---- modes ---------------------------------------------------------------- */

/* ---- topology (pyhccl extension) --------------------------------------- */

/* Consistent with itself, with the transports, and with CHECK_HOSTS (the
 * number of hosts the test laid out) when set. */
static void t_topology(HcclComm comm) {
  PyhcclTopology t;
  uint32_t host_of[64];
  HCCL_OK(PyhcclCommGetTopology(comm, &t, host_of, (uint32_t)g_n));
  const char *want = getenv("CHECK_HOSTS");
  CHECK(want == NULL || t.nHosts == (uint32_t)atoi(want), "topology: %u hosts, want %s", t.nHosts, want);
  CHECK(host_of[g_rank] == t.hostId, "topology: host of own rank");
  uint32_t local = 0, below = 0;
  for (int r = 0; r < g_n; ++r) {
    char kind[8];
    HCCL_OK(PyhcclCommGetTransport(comm, (uint32_t)r, kind, sizeof(kind)));
    const char *expect = r == g_rank ? "self" : host_of[r] == t.hostId ? "shm" : "tcp";
    if (getenv("PYHCCL_TRANSPORT") != NULL && r != g_rank) expect = "tcp";
    CHECK(strcmp(kind, expect) == 0, "transport to rank %d is %s, want %s", r, kind, expect);
    if (host_of[r] == t.hostId) {
      ++local;
      if (r < g_rank) ++below;
    }
  }
  CHECK(t.localSize == local && t.localRank == below, "topology: local %u/%u, want %u/%u",
        t.localRank, t.localSize, below, local);
  char name[256];
  HCCL_OK(PyhcclCommGetHostName(comm, t.hostId, name, sizeof(name)));
  CHECK(name[0] != '\0', "host name empty");
  expect_err(PyhcclCommGetHostName(comm, t.nHosts, name, sizeof(name)), HCCL_E_PARA,
             "PyhcclCommGetHostName", "hostId");
  expect_err(PyhcclCommGetHostName(comm, t.hostId, name, 1), HCCL_E_PARA,
             "PyhcclCommGetHostName", "nameLen");
  expect_err(PyhcclCommGetTopology(comm, &t, host_of, (uint32_t)g_n + 1), HCCL_E_PARA,
             "PyhcclCommGetTopology", "rankCount");
  expect_err(PyhcclCommGetTopology(comm, NULL, NULL, 0), HCCL_E_PTR, "PyhcclCommGetTopology", "topo");
  expect_err(PyhcclCommGetTransport(comm, (uint32_t)g_n, name, sizeof(name)), HCCL_E_PARA,
             "PyhcclCommGetTransport", "peer");
}

static void run_suite(HcclComm comm, aclrtStream s, int big) {
  t_topology(comm);
  static const size_t counts[] = {0, 1, 7, 1000};
  size_t nc = sizeof(counts) / sizeof(counts[0]);
  for (size_t ti = 0; ti < NTYPES; ++ti) {
    HcclDataType t = kTypes[ti];
    for (size_t ci = 0; ci < nc; ++ci) {
      size_t c = counts[ci];
      for (int op = 0; op < 4; ++op) {
        if (!reducible(t, op)) continue;
        t_allreduce(comm, s, t, op, c, (int)(ci & 1));
        t_reducescatter(comm, s, t, op, c, (int)((ci >> 1) & 1));
        t_reduce(comm, s, t, op, c, (int)(ci % g_n), 0);
      }
      t_broadcast(comm, s, t, c, (int)(ci % g_n));
      t_allgather(comm, s, t, c, (int)(ci & 1));
      t_scatter(comm, s, t, c, g_n - 1);
      t_gather(comm, s, t, c, (int)(ci % g_n), (int)((ci >> 1) & 1));
      t_alltoall(comm, s, t, c, (int)(ci & 1));
      t_sendrecv(comm, s, t, c, (int)(ci & 1));
    }
    t_alltoallv(comm, s, t, 3);
    t_allgatherv(comm, s, t, 5);
    if (reducible(t, 0)) t_reducescatterv(comm, s, t, (int)(ti % 4), 4);
  }
  HCCL_OK(HcclBarrier(comm, s));
  sync_ok(s, "Barrier");
  static const HcclDataType ftypes[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP64,
                                        HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16};
  for (int k = 0; k < 4; ++k) {
    t_determinism(comm, s, ftypes[k], 1000);   /* latency path */
    t_determinism(comm, s, ftypes[k], 100003); /* chunked, or single copy */
  }
  if (!big) return;
  const size_t n = 1000003;
  t_allreduce(comm, s, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, n, 0);
  t_allreduce(comm, s, HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, n, 1);
  t_allreduce(comm, s, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, n, 0);
  t_allreduce(comm, s, HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, n, 1);
  t_allreduce(comm, s, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_MIN, n, 0);
  t_reduce(comm, s, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_SUM, n, g_n - 1, 1);
  t_reducescatter(comm, s, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, n, 0);
  t_reducescatter(comm, s, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_MIN, n, 1);
  t_broadcast(comm, s, HCCL_DATA_TYPE_INT64, n, g_n - 1);
  t_allgather(comm, s, HCCL_DATA_TYPE_FP32, n, 1);
  t_allgather(comm, s, HCCL_DATA_TYPE_UINT8, n, 0);
  t_scatter(comm, s, HCCL_DATA_TYPE_FP16, n, 0);
  t_gather(comm, s, HCCL_DATA_TYPE_INT32, n, g_n - 1, 1);
  t_alltoall(comm, s, HCCL_DATA_TYPE_FP32, n / 3, 1);
  t_alltoall(comm, s, HCCL_DATA_TYPE_INT16, n / 5, 0);
  t_alltoallv(comm, s, HCCL_DATA_TYPE_INT32, 100003);
  t_allgatherv(comm, s, HCCL_DATA_TYPE_UINT16, 200001);
  t_reducescatterv(comm, s, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, 200001);
  t_sendrecv(comm, s, HCCL_DATA_TYPE_FP64, n, 1);
  t_sendrecv(comm, s, HCCL_DATA_TYPE_INT8, n, 0);
}

/* Two communicators at once: interleaved ops on both, on two streams. */
static void run_two_comms(HcclComm a, HcclComm b, aclrtStream sa, aclrtStream sb) {
  const size_t n = 300001;
  float *x = alloc(n * 4), *y = alloc(n * 4);
  for (int it = 0; it < 3; ++it) {
    for (size_t i = 0; i < n; ++i) {
      x[i] = (float)gen(0, HCCL_DATA_TYPE_FP32, g_rank, i);
      y[i] = (float)gen(0, HCCL_DATA_TYPE_FP32, g_rank, i + 1);
    }
    HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
    HCCL_OK(HcclAllReduce(y, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
    sync_ok(sa, "two comms a");
    sync_ok(sb, "two comms b");
    struct Want wa = {0, HCCL_DATA_TYPE_FP32, 0, 0}, wb = {0, HCCL_DATA_TYPE_FP32, 0, 1};
    compare("two comms a", HCCL_DATA_TYPE_FP32, x, 0, n, want_reduced, &wa);
    compare("two comms b", HCCL_DATA_TYPE_FP32, y, 0, n, want_reduced, &wb);
  }
  char na[128] = "", nb[128] = "";
  HCCL_OK(HcclGetCommName(a, na));
  HCCL_OK(HcclGetCommName(b, nb));
  CHECK(strcmp(na, "check_a") == 0 && strcmp(nb, "check_b") == 0, "names %s %s", na, nb);
  HcclComm found = NULL;
  HCCL_OK(HcclCommGetHandleWithName("check_b", &found));
  CHECK(found == b, "HcclCommGetHandleWithName");
  release(x);
  release(y);
}

static void *suicide(void *arg) {
  usleep((useconds_t)(intptr_t)arg);
  raise(SIGKILL);
  return NULL;
}

/* The last rank dies (kill) or stays away (timeout); the others must get an error. */
static int run_failure(HcclComm comm, aclrtStream s, int kill_mode, size_t n) {
  float *x = alloc(n * 4);
  for (size_t i = 0; i < n; ++i) x[i] = 1.0f;
  int victim = g_n - 1;
  if (g_rank == victim && !kill_mode) {
    sleep(6);
    HCCL_OK(HcclCommDestroy(comm));
    release(x);
    printf("rank %d: PASS stayed away\n", g_rank);
    return 0;
  }
  if (g_rank == victim) {  /* CHECK_KILL_DELAY_US: when (stress runs pick it at random) */
    const char *d = getenv("CHECK_KILL_DELAY_US");
    pthread_t th;
    pthread_create(&th, NULL, suicide, (void *)(intptr_t)(d ? atol(d) : 300000));
  }
  /* Stop-on-failure stream: the Barrier queued behind the AllReduce that
   * fails is dropped unrun, which must hang neither it nor HcclCommDestroy. */
  ACL_OK(aclrtSetStreamFailureMode(s, 1));
  double t0 = now_s();
  aclError e = ACL_SUCCESS;
  int iters = 0;
  int wrong = 0;
  while (e == ACL_SUCCESS && now_s() - t0 < 40) {
    for (size_t i = 0; i < n; ++i) x[i] = (float)(g_rank + 1);
    HcclResult r = HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, comm, s);
    if (r == HCCL_SUCCESS) r = HcclBarrier(comm, s);
    if (r != HCCL_SUCCESS) {
      e = ACL_ERROR_RT_INTERNAL_ERROR;
      break;
    }
    e = aclrtSynchronizeStream(s);
    for (size_t i = 0; e == ACL_SUCCESS && i < n; ++i) wrong += x[i] != (float)g_n;
    ++iters;
  }
  CHECK(wrong == 0, "%d wrong elements in collectives reported successful", wrong);
  double dt = now_s() - t0;
  HcclResult ae = HCCL_SUCCESS;
  HCCL_OK(HcclGetCommAsyncError(comm, &ae));
  CHECK(e != ACL_SUCCESS, "no error after %.1f s", dt);
  CHECK(ae == HCCL_E_TIMEOUT || ae == HCCL_E_REMOTE, "async error %d", (int)ae);
  CHECK(dt < bound(kill_mode ? 10.0 : 8.0), "error took %.1f s", dt);
  printf("rank %d: error %d async %d after %.2f s, %d iterations: %s\n", g_rank, (int)e, (int)ae,
         dt, iters, aclGetRecentErrMsg());
  /* Every survivor names the victim, also when it learnt of the failure from
     another survivor (it once named the relaying rank). */
  PyhcclOpError info;
  int32_t found = 0;
  if (e != ACL_ERROR_RT_INTERNAL_ERROR) {  /* the stream failed (not the enqueue) */
    HCCL_OK(PyhcclStreamTakeOpError(s, &info, &found));
    CHECK(found && info.rank == victim, "the failure names rank %d, not the victim %d (%s)",
          found ? info.rank : -2, victim, found ? info.message : "no op error");
  }
  /* Later collectives fail fast instead of waiting again. */
  double t1 = now_s();
  HcclResult r = HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, comm, s);
  if (r == HCCL_SUCCESS) e = aclrtSynchronizeStream(s);
  CHECK(r != HCCL_SUCCESS || e != ACL_SUCCESS, "second collective succeeded");
  CHECK(now_s() - t1 < bound(3.0), "second collective took %.1f s", now_s() - t1);
  release(x);
  double t2 = now_s();
  HCCL_OK(HcclCommDestroy(comm));
  CHECK(now_s() - t2 < bound(5.0), "HcclCommDestroy took %.1f s", now_s() - t2);
  if (g_fail == 0) printf("rank %d: PASS detected failure\n", g_rank);
  return g_fail != 0;
}

/* Rank 0 calls something else than the others (WHAT: another count, count 0,
 * a count on another algorithm (bigcount, bcastbig: board against FIFO
 * messages), another root, dtype or op, HcclSend instead of the collective, or a
 * send/receive pair with other dtypes): every rank must fail quickly with
 * HCCL_E_PARA and a message that says what differs, not garbage or a hang. */
static int run_mismatch(HcclComm comm, aclrtStream s, const char *what) {
  /* Big enough for counts past the boards of small collectives (16 KiB), so
   * that rank 0 and the others run different algorithms. */
  static float x[1 << 16];
  for (int i = 0; i < 1 << 16; ++i) x[i] = 1.0f;
  double t0 = now_s();
  int odd = g_rank == 0;
  const HcclDataType f32 = HCCL_DATA_TYPE_FP32;
  if (strcmp(what, "count") == 0) {
    HCCL_OK(HcclAllReduce(x, x, odd ? 10 : 20, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "count0") == 0) {
    HCCL_OK(HcclAllReduce(x, x, odd ? 0 : 8, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "bigcount") == 0) {
    HCCL_OK(HcclAllReduce(x, x, odd ? 8 : 1 << 15, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "bcastbig") == 0) {  /* rank 0 a leaf on another algorithm */
    HCCL_OK(HcclBroadcast(x, odd ? 1 << 15 : 8, f32, 1, comm, s));
  } else if (strcmp(what, "bcastroot") == 0) {
    HCCL_OK(HcclBroadcast(x, 8, f32, odd ? 0 : 1, comm, s));
  } else if (strcmp(what, "reduceroot") == 0) {
    HCCL_OK(HcclReduce(x, x, 8, f32, HCCL_REDUCE_SUM, odd ? 0 : 1, comm, s));
  } else if (strcmp(what, "scatterroot") == 0) {
    HCCL_OK(HcclScatter(x, x + 32, 4, f32, odd ? 0 : 1, comm, s));
  } else if (strcmp(what, "dtype") == 0) {
    HCCL_OK(HcclAllReduce(x, x, 8, odd ? HCCL_DATA_TYPE_INT32 : f32, HCCL_REDUCE_MAX, comm, s));
  } else if (strcmp(what, "op") == 0) {
    HCCL_OK(HcclAllReduce(x, x, 8, f32, odd ? HCCL_REDUCE_MAX : HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "send") == 0) {
    if (odd) HCCL_OK(HcclSend(x, 8, f32, 1, comm, s));
    else HCCL_OK(HcclAllReduce(x, x, 8, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "p2pdtype") == 0) {  /* ranks 0 and 1 only */
    if (g_rank == 0) HCCL_OK(HcclSend(x, 8, f32, 1, comm, s));
    if (g_rank == 1) HCCL_OK(HcclRecv(x, 8, HCCL_DATA_TYPE_INT32, 0, comm, s));
    if (g_rank > 1) {
      printf("rank %d: PASS mismatch detected (not involved)\n", g_rank);
      return 0;
    }
  }
  struct Outcome o = outcome(comm, s, t0, what);
  aclError e = o.e;
  HcclResult ae = o.async;
  const char *msg = o.msg;
  /* A send completes once its data is in the channel: the sender learns of
   * the receiver's verdict through the communicator's async error. */
  int sender = g_rank == 0 && (strcmp(what, "send") == 0 || strcmp(what, "p2pdtype") == 0);
  while (sender && e == ACL_SUCCESS && ae == HCCL_SUCCESS && now_s() - t0 < bound(4.0)) {
    usleep(10000);
    HCCL_OK(HcclGetCommAsyncError(comm, &ae));
  }
  if (sender && e == ACL_SUCCESS) {
    e = ACL_ERROR_RT_PARAM_INVALID;  /* what it reported, through the async error */
    msg = "";
  }
  CHECK(e != ACL_SUCCESS, "%s: the mismatch was not detected", what);
  CHECK(ae == HCCL_E_PARA, "%s: async error %d, want HCCL_E_PARA", what, (int)ae);
  CHECK(sender || strstr(msg, "differs between ranks") || strstr(msg, "send/recv") ||
            strstr(msg, "HcclSend and HcclRecv"),
        "%s: message: %s", what, msg);
  CHECK(now_s() - t0 < bound(5.0), "%s: detection took %.1f s", what, now_s() - t0);
  if (g_fail == 0) printf("rank %d: PASS mismatch detected\n", g_rank);
  return g_fail != 0;
}

/* Rank 0 aborts while the others wait in a collective it never joins: they
 * fail within about a second naming it, its own operations fail with
 * HCCL_E_UNAVAIL, destroying is quick, and the survivors build a new
 * communicator (root info through ROOTFILE.2) and carry on. */
static int run_abort(HcclComm comm, aclrtStream s, const char *rootfile) {
  float x[256];
  for (int i = 0; i < 256; ++i) x[i] = 1.0f;
  double t0 = now_s();
  if (g_rank == 0) {
    usleep(300000);
    HCCL_OK(PyhcclCommAbort(comm));
    HcclResult r = HcclAllReduce(x, x, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s);
    aclError e = r == HCCL_SUCCESS ? aclrtSynchronizeStream(s) : ACL_SUCCESS;
    HcclResult ae = HCCL_SUCCESS;
    HCCL_OK(HcclGetCommAsyncError(comm, &ae));
    CHECK(r != HCCL_SUCCESS || e != ACL_SUCCESS, "an operation after the abort succeeded");
    CHECK(ae == HCCL_E_UNAVAIL, "async error after abort %d, want HCCL_E_UNAVAIL", (int)ae);
  } else {
    HCCL_OK(HcclAllReduce(x, x, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    aclError e = aclrtSynchronizeStream(s);
    const char *msg = aclGetRecentErrMsg();
    CHECK(e != ACL_SUCCESS, "the abort was not noticed");
    CHECK(strstr(msg, "rank 0 aborted") != NULL, "message: %s", msg);
    CHECK(now_s() - t0 < bound(3.0), "noticing the abort took %.1f s", now_s() - t0);
    printf("rank %d: abort noticed after %.2f s: %s\n", g_rank, now_s() - t0, msg);
  }
  double t1 = now_s();
  HCCL_OK(HcclCommDestroy(comm));
  CHECK(now_s() - t1 < bound(1.5), "HcclCommDestroy after the abort took %.1f s", now_s() - t1);
  if (g_rank != 0) {  /* the survivors, ranks 1.. as ranks 0.. of a new communicator */
    char path[4096];
    snprintf(path, sizeof(path), "%s.2", rootfile);
    int old_rank = g_rank, old_n = g_n;
    g_rank -= 1;
    g_n -= 1;
    HcclComm again = make_comm(path, NULL, 0, 0);
    HCCL_OK(HcclAllReduce(x, x, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, again, s));
    sync_ok(s, "allreduce among the survivors");
    CHECK(x[0] == (float)g_n, "survivors' sum %f, want %d", x[0], g_n);
    HCCL_OK(HcclCommDestroy(again));
    g_rank = old_rank;
    g_n = old_n;
  }
  if (g_fail == 0) printf("rank %d: PASS abort\n", g_rank);
  return g_fail != 0;
}

/* One verdict: with a 2 s exec timeout, the last rank arrives 4 s late; the
 * others time out; the late rank must fail too (it cannot succeed alone on
 * data its peers gave up on), and the flight record shows the failed op. */
static int run_late(HcclComm comm, aclrtStream s) {
  float x[16];
  for (int i = 0; i < 16; ++i) x[i] = 1.0f;
  if (g_rank == g_n - 1) sleep(4);
  double t0 = now_s();
  HCCL_OK(HcclAllReduce(x, x, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  struct Outcome o = outcome(comm, s, t0, "late");
  CHECK(o.e != ACL_SUCCESS, "the collective succeeded (late rank %d)", g_n - 1);
  PyhcclOpRecord rec[8];
  uint32_t n = 0;
  HCCL_OK(PyhcclCommGetFlightRecord(comm, rec, 8, &n));
  CHECK(n == 1 && rec[0].seq == 1 && rec[0].state == 3 && strcmp(rec[0].opName, "HcclAllReduce") == 0 &&
            rec[0].count == 16 && rec[0].endUs >= rec[0].startUs && rec[0].startUs >= rec[0].enqueueUs,
        "flight record: %u records, seq %llu state %d", n, n ? (unsigned long long)rec[0].seq : 0ull,
        n ? rec[0].state : -1);
  if (g_fail == 0) printf("rank %d: PASS late rank\n", g_rank);
  return g_fail != 0;
}

/* The last rank stops itself (SIGSTOP) in the middle of a loop of 16 MiB
 * AllReduces on device memory (the single-copy path); the harness resumes it
 * (SIGCONT) after the others (2 s exec timeout) gave up. Every result a rank
 * reports as a success must be right, and every rank must end with an error:
 * the resumed rank must not succeed on buffers its peers abandoned. */
static void *stop_self(void *arg) {
  usleep((useconds_t)(intptr_t)arg);
  raise(SIGSTOP);
  return NULL;
}

static int run_sigstop(HcclComm comm, aclrtStream s) {
  const size_t n = 4u << 20;
  float *x = alloc(n * 4);
  if (g_rank == g_n - 1) {
    pthread_t th;
    pthread_create(&th, NULL, stop_self, (void *)(intptr_t)(200000 + 50000 * (getpid() % 7)));
  }
  double t0 = now_s();
  int iters = 0, wrong = 0;
  aclError e = ACL_SUCCESS;
  while (e == ACL_SUCCESS && now_s() - t0 < 30) {
    for (size_t i = 0; i < n; ++i) x[i] = (float)(g_rank + 1);
    HcclResult r = HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s);
    e = r == HCCL_SUCCESS ? aclrtSynchronizeStream(s) : ACL_ERROR_RT_INTERNAL_ERROR;
    if (e != ACL_SUCCESS) break;
    const float want = (float)(g_n * (g_n + 1) / 2);
    for (size_t i = 0; i < n; ++i) wrong += x[i] != want;
    ++iters;
  }
  CHECK(wrong == 0, "%d wrong elements in a collective reported successful", wrong);
  CHECK(e != ACL_SUCCESS, "no error after %.1f s (%d iterations)", now_s() - t0, iters);
  printf("rank %d: %d good iterations, then: %s\n", g_rank, iters, aclGetRecentErrMsg());
  release(x);
  if (g_fail == 0) printf("rank %d: PASS sigstop\n", g_rank);
  return g_fail != 0;
}

/* AllGatherV / ReduceScatterV where rank 0's counts array differs from the
 * others' (HOW "other": different sizes; "zero": all 0, so rank 0 alone would
 * need no data round): every rank gets HCCL_E_PARA, quickly, never stale data
 * or a hang. Counts are {0, 2, 3, ...} on the other ranks. */
static int run_mismatch_v(HcclComm comm, aclrtStream s, const char *kind, const char *how) {
  uint64_t counts[64], displs[64];
  uint64_t total = 0;
  for (int p = 0; p < g_n; ++p) {
    counts[p] = p == 0 ? 0 : (uint64_t)p + 1;
    if (g_rank == 0 && p > 0) counts[p] = strcmp(how, "zero") == 0 ? 0 : 7;
    displs[p] = total;
    total += counts[p];
  }
  float *big = alloc((total + 1) * 4), *mine = alloc((counts[g_rank] + 1) * 4);
  for (uint64_t i = 0; i < total; ++i) big[i] = 1.0f;
  for (uint64_t i = 0; i < counts[g_rank]; ++i) mine[i] = 1.0f;
  double t0 = now_s();
  if (strcmp(kind, "allgatherv") == 0)
    HCCL_OK(HcclAllGatherV(mine, counts[g_rank], big, counts, displs, HCCL_DATA_TYPE_FP32, comm,
                           s));
  else
    HCCL_OK(HcclReduceScatterV(big, counts, displs, mine, counts[g_rank], HCCL_DATA_TYPE_FP32,
                               HCCL_REDUCE_SUM, comm, s));
  struct Outcome o = outcome(comm, s, t0, kind);
  CHECK(o.e == ACL_ERROR_RT_PARAM_INVALID, "%s with different counts: stream error %d", kind,
        (int)o.e);
  CHECK(strstr(o.msg, "differs between ranks"), "message: %s", o.msg);
  CHECK(o.async == HCCL_E_PARA, "async error %d, want HCCL_E_PARA", (int)o.async);
  CHECK(o.took < bound(5.0), "detection took %.1f s", o.took);
  release(big);
  release(mine);
  if (g_fail == 0) printf("rank %d: PASS %s mismatch detected\n", g_rank, kind);
  return g_fail != 0;
}

/* HCCL_DETERMINISTIC is what HcclGetConfig reports until HcclSetConfig; the
 * global value is the default of communicators created afterwards. */
static HcclComm one_rank_comm(int det_cfg) {
  HcclRootInfo ri;
  HcclComm c = NULL;
  HCCL_OK(HcclGetRootInfo(&ri));
  if (det_cfg < 0) {
    HCCL_OK(HcclCommInitRootInfo(1, &ri, 0, &c));
  } else {
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclDeterministic = (uint32_t)det_cfg;
    HCCL_OK(HcclCommInitRootInfoConfig(1, &ri, 0, &cfg, &c));
  }
  return c;
}
static int comm_det(HcclComm c) {
  HcclConfigValue v = {-1};
  HCCL_OK(HcclGetCommConfig(c, HCCL_DETERMINISTIC, &v));
  return v.value;
}
static int run_config(int expect_env) {
  HcclConfigValue v = {-1};
  HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &v));
  CHECK(v.value == expect_env, "HcclGetConfig before HcclSetConfig = %d, want %d", v.value,
        expect_env);
  HcclComm a = one_rank_comm(-1), b = one_rank_comm(0);
  CHECK(comm_det(a) == expect_env, "comm without hcclDeterministic: %d, want %d", comm_det(a),
        expect_env);
  CHECK(comm_det(b) == 0, "comm with hcclDeterministic 0: %d", comm_det(b));
  v.value = 2;
  HCCL_OK(HcclSetConfig(HCCL_DETERMINISTIC, v));
  v.value = -1;
  HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &v));
  CHECK(v.value == 2, "HcclGetConfig after HcclSetConfig(2) = %d", v.value);
  HcclComm c = one_rank_comm(-1), d = one_rank_comm(1);
  CHECK(comm_det(c) == 2, "comm created after HcclSetConfig(2): %d", comm_det(c));
  CHECK(comm_det(d) == 1, "comm with hcclDeterministic 1: %d", comm_det(d));
  CHECK(comm_det(a) == expect_env, "earlier comm changed to %d", comm_det(a));
  v.value = 3;
  expect_err(HcclSetConfig(HCCL_DETERMINISTIC, v), HCCL_E_PARA, "HcclSetConfig", NULL);
  HCCL_OK(HcclCommDestroy(a));
  HCCL_OK(HcclCommDestroy(b));
  HCCL_OK(HcclCommDestroy(c));
  HCCL_OK(HcclCommDestroy(d));
  if (g_fail == 0) printf("rank %d: PASS config\n", g_rank);
  return g_fail != 0;
}

static int run_perf(HcclComm comm, aclrtStream s, size_t bytes, int iters) {
  size_t n = bytes / 4;
  float *x = alloc(n * 4), *y = alloc(n * 4);
  for (size_t i = 0; i < n; ++i) x[i] = (float)(i % 7);
  for (int i = 0; i < 3; ++i)
    HCCL_OK(HcclAllReduce(x, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  HCCL_OK(HcclBarrier(comm, s));
  ACL_OK(aclrtSynchronizeStream(s));
  double t0 = now_s();
  for (int i = 0; i < iters; ++i)
    HCCL_OK(HcclAllReduce(x, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  ACL_OK(aclrtSynchronizeStream(s));
  double us = (now_s() - t0) / iters * 1e6;
  int bad = 0;
  for (size_t i = 0; i < n; ++i) bad += y[i] != (float)(i % 7) * g_n;
  CHECK(bad == 0, "perf result wrong in %d elements", bad);
  printf("rank %d: PASS perf bytes=%zu time_us=%.1f busbw_GBps=%.3f\n", g_rank, bytes, us,
         bytes / us * 1e-3 * 2.0 * (g_n - 1) / g_n);
  release(x);
  release(y);
  return g_fail != 0;
}

/* A ring of point-to-point messages, each rank sending to the next and
 * receiving from the previous one (see the mode list at the top). */
static int run_p2p_ring(HcclComm comm, aclrtStream s, const char *what, size_t count) {
  const HcclDataType f32 = HCCL_DATA_TYPE_FP32;
  const int to = (g_rank + 1) % g_n, from = (g_rank + g_n - 1) % g_n;
  const int group = strcmp(what, "group") == 0, late = strcmp(what, "late") == 0;
  const int fails = strcmp(what, "ring") == 0 || strcmp(what, "timeout") == 0;
  float *send = alloc(count * 4), *recv = alloc(count * 4);
  for (size_t i = 0; i < count; ++i) send[i] = (float)(g_rank * 1000 + i % 1000);
  double t0 = now_s();
  if (group) HCCL_OK(HcclGroupStart());
  if (late && g_rank == 0) { /* the others wait in their blocking sends meanwhile */
    usleep(1000000);
    HCCL_OK(HcclRecv(recv, count, f32, from, comm, s));
    HCCL_OK(HcclSend(send, count, f32, to, comm, s));
  } else {
    HCCL_OK(HcclSend(send, count, f32, to, comm, s));
    HCCL_OK(HcclRecv(recv, count, f32, from, comm, s));
  }
  if (group) HCCL_OK(HcclGroupEnd());
  char label[64];
  snprintf(label, sizeof(label), "p2pring %s count %zu", what, count);
  struct Outcome o = outcome(comm, s, t0, label);
  const aclError e = o.e;
  const HcclResult ae = o.async;
  const char *msg = o.msg;
  if (fails) {
    CHECK(e != ACL_SUCCESS, "the ring without a group succeeded");
    CHECK(strstr(msg, "HcclGroupStart/HcclGroupEnd (pyhccl.group())") != NULL,
          "the message does not say to use a group: %s", msg);
    if (strcmp(what, "ring") == 0) {
      CHECK(ae == HCCL_E_INTERNAL, "async error %d, want HCCL_E_INTERNAL", (int)ae);
      CHECK(strstr(msg, "deadlock: ranks ") != NULL, "no deadlock named: %s", msg);
      CHECK(o.took < bound(5.0), "the deadlock took %.1f s to be reported", o.took);
    } else {
      CHECK(ae == HCCL_E_TIMEOUT, "async error %d, want HCCL_E_TIMEOUT", (int)ae);
      CHECK(strstr(msg, "timed out") != NULL, "no timeout: %s", msg);
    }
  } else {
    CHECK(e == ACL_SUCCESS && ae == HCCL_SUCCESS, "%s ring failed: %s", what, msg);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += recv[i] != (float)(from * 1000 + i % 1000);
    CHECK(wrong == 0, "%s ring: %zu wrong elements", what, wrong);
  }
  release(send);
  release(recv);
  if (g_fail == 0) printf("rank %d: PASS p2pring %s\n", g_rank, what);
  return g_fail != 0;
}

/* Two communicators used in opposite orders (see the mode list at the top). */
static int run_order(const char *rootfile, aclrtStream s, const char *what, size_t count) {
  const int off = strcmp(what, "off") == 0, opposite = off || strcmp(what, "opposite") == 0;
  char path_b[4096];
  snprintf(path_b, sizeof(path_b), "%s.b", rootfile);
  HcclComm a = make_comm(rootfile, "order_a", 0, 0), b = make_comm(path_b, "order_b", 0, 0);
  float *x = alloc(count * 4), *y = alloc(count * 4);
  for (size_t i = 0; i < count; ++i) x[i] = y[i] = 1.0f;
  HcclComm first = opposite && g_rank != 0 ? b : a, second = first == a ? b : a;
  double t0 = now_s();
  HCCL_OK(HcclAllReduce(x, x, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, first, s));
  HCCL_OK(HcclAllReduce(y, y, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, second, s));
  char label[64];
  snprintf(label, sizeof(label), "order %s count %zu", what, count);
  struct Outcome o = outcome(first, s, t0, label);
  const aclError e = o.e;
  const HcclResult ae = o.async;
  const char *msg = o.msg;
  if (off) { /* the first to time out may go on into the other's wait: its error is relayed */
    CHECK(e != ACL_SUCCESS, "aclError %d, async error %d", (int)e, (int)ae);
    CHECK(strstr(msg, "timed out") != NULL && strstr(msg, "use one order on every rank") != NULL,
          "not a timeout naming the cause: %s", msg);
  } else if (opposite) {
    char want[256];
    snprintf(want, sizeof(want), "is blocked in communicator %s's collective #1 while this rank "
             "waits in %s's #1; use one order on every rank", first == a ? "order_b" : "order_a",
             first == a ? "order_a" : "order_b");
    CHECK(e != ACL_SUCCESS && ae == HCCL_E_INTERNAL, "aclError %d, async error %d", (int)e, (int)ae);
    CHECK(strstr(msg, want) != NULL, "the message does not say \"%s\": %s", want, msg);
    CHECK(o.took < bound(5.0), "the deadlock took %.1f s to be reported", o.took);
  } else {
    CHECK(e == ACL_SUCCESS && ae == HCCL_SUCCESS, "same order failed: %s", msg);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += x[i] != (float)g_n || y[i] != (float)g_n;
    CHECK(wrong == 0, "same order: %zu wrong elements", wrong);
  }
  release(x);
  release(y);
  HCCL_OK(HcclCommDestroy(b));
  HCCL_OK(HcclCommDestroy(a));
  if (g_fail == 0) printf("rank %d: PASS order %s\n", g_rank, what);
  return g_fail != 0;
}

/* Small operations may run on the calling thread when every peer is there
 * (PYHCCL_INLINE_BYTES / PYHCCL_INLINE_US); the calling thread must never wait
 * for a peer that is busy elsewhere, nor return before the results are right. */
static int run_inline(HcclComm a, const char *rootfile, aclrtStream sa, const char *what) {
  char path_b[4096];
  snprintf(path_b, sizeof(path_b), "%s.b", rootfile);
  HcclComm b = make_comm(path_b, NULL, 0, 0);
  aclrtStream sb;
  aclrtEvent ev;
  ACL_OK(aclrtCreateStream(&sb));
  ACL_OK(aclrtCreateEvent(&ev));
  float x[1024], y[1024];
  const float tri = (float)(g_n * (g_n + 1) / 2);
  if (strcmp(what, "crossed") == 0) {
    /* Even ranks call a then b, odd ranks b then a: an inline op on a must not
     * wait for a peer whose thread sits in b. Then b (on sb) reduces a's result
     * once the event recorded after a on sa has fired. */
    for (int it = 0; it < 200; ++it) {
      size_t n = (size_t)1 << (it % 11); /* 4 B .. 4 KiB */
      for (size_t i = 0; i < n; ++i) x[i] = (float)(g_rank + 1), y[i] = (float)(i % 5);
      if (g_rank % 2 == 0) {
        HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
        HCCL_OK(HcclAllReduce(y, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
      } else {
        HCCL_OK(HcclAllReduce(y, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
        HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
      }
      ACL_OK(aclrtRecordEvent(ev, sa));
      ACL_OK(aclrtStreamWaitEvent(sb, ev));
      HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
      sync_ok(sb, "crossed b");
      sync_ok(sa, "crossed a");
      int bad = 0;
      for (size_t i = 0; i < n; ++i)
        bad += x[i] != tri * (float)g_n || y[i] != (float)(i % 5) * (float)g_n;
      CHECK(bad == 0, "crossed iteration %d (%zu floats): %d wrong", it, n, bad);
    }
  } else if (strcmp(what, "late") == 0) {
    /* Rank 0 calls only once every other rank's call has returned (each leaves
     * a file ROOTFILE.back.R): an order, not a time bound. A call that waited
     * for the late peer would keep rank 0 away until its generous limit. */
    sync_ok(sa, "late warm-up");
    for (int i = 0; i < 8; ++i) x[i] = (float)(g_rank + 1);
    char back[4200];
    if (g_rank == 0) {
      int returned = 0;
      for (double until = now_s() + bound(10.0); returned < g_n - 1 && now_s() < until;) {
        usleep(10000);
        returned = 0;
        for (int r = 1; r < g_n; ++r) {
          snprintf(back, sizeof(back), "%s.back.%d", rootfile, r);
          returned += access(back, F_OK) == 0;
        }
      }
      CHECK(returned == g_n - 1, "only %d of %d calls returned before the late rank called",
            returned, g_n - 1);
    }
    HCCL_OK(HcclAllReduce(x, x, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
    if (g_rank != 0) {
      snprintf(back, sizeof(back), "%s.back.%d", rootfile, g_rank);
      FILE *f = fopen(back, "w");
      CHECK(f != NULL && fclose(f) == 0, "cannot write %s", back);
    }
    sync_ok(sa, "late");
    for (int i = 0; i < 8; ++i) CHECK(x[i] == tri, "late x[%d] = %f, want %f", i, x[i], tri);
  } else if (strcmp(what, "done") == 0) {
    /* Every rank is there (a barrier first) and PYHCCL_INLINE_US is long: the
     * op runs on this thread, so the stream is idle when the call returns. */
    int inline_done = 0;
    for (int it = 0; it < 20; ++it) {
      HCCL_OK(HcclBarrier(a, sa));
      sync_ok(sa, "done barrier");
      for (int i = 0; i < 8; ++i) x[i] = (float)(g_rank + 1);
      HCCL_OK(HcclAllReduce(x, x, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
      aclrtStreamStatus st = ACL_STREAM_STATUS_NOT_READY;
      ACL_OK(aclrtStreamQuery(sa, &st));
      inline_done += st == ACL_STREAM_STATUS_COMPLETE && x[0] == tri;
      sync_ok(sa, "done");
      for (int i = 0; i < 8; ++i) CHECK(x[i] == tri, "done x[%d] = %f, want %f", i, x[i], tri);
    }
    /* Another process may delay a peer now and then; most calls must be inline. */
    CHECK(inline_done >= 15, "only %d of 20 small AllReduces completed inside the call", inline_done);
  } else {
    CHECK(0, "unknown inline case %s", what);
  }
  ACL_OK(aclrtDestroyEvent(ev));
  HCCL_OK(HcclCommDestroy(b));
  ACL_OK(aclrtDestroyStream(sb));
  if (g_fail == 0) printf("rank %d: PASS inline %s\n", g_rank, what);
  return g_fail != 0;
}

/* ---- the modes: one table ------------------------------------------------ */

/* What main hands a mode: its own arguments (those after ROOTFILE), the stream,
 * and the communicator main made where the table asks for one (a mode that
 * destroys it sets it to NULL). */
struct Run {
  const char *rootfile;
  int argc;
  char **argv;
  aclrtStream s;
  HcclComm comm;
};

/* The COUNT argument of timeout and kill: given when more arguments follow it. */
static size_t count_arg(const struct Run *r) {
  return r->argc > 1 ? (size_t)atoll(r->argv[0]) : (size_t)1 << 20;
}

static int mode_suite(struct Run *r) {
  const char *mem = g_device_mem ? "device" : "host";
  char path_b[4096];
  snprintf(path_b, sizeof(path_b), "%s.b", r->rootfile);
  HcclComm comm = make_comm(r->rootfile, "check_a", 0, 0);
  HcclComm comm_b = make_comm(path_b, "check_b", 1, 0); /* 1 MB: smaller slots */
  aclrtStream sb;
  ACL_OK(aclrtCreateStream(&sb));
  t_errors(comm, r->s);
  run_suite(comm, r->s, 1);
  run_suite(comm_b, NULL, 0); /* NULL = the default stream */
  run_two_comms(comm, comm_b, r->s, sb);
  HCCL_OK(HcclCommDestroy(comm_b));
  uint32_t u;
  expect_err(HcclGetRankSize(comm_b, &u), HCCL_E_PARA, "HcclGetRankSize", "not a live");
  ACL_OK(aclrtDestroyStream(sb));
  HCCL_OK(HcclCommDestroy(comm));
  if (g_fail == 0) printf("rank %d: PASS suite %d checks (%s memory)\n", g_rank, g_checks, mem);
  return g_fail != 0;
}

/* Set-up must fail on every rank with one verdict, which the test reads. */
static int mode_initfail(struct Run *r) {
  HcclRootInfo ri;
  HcclComm bad = NULL;
  get_root_info(r->rootfile, &ri);
  double t0 = now_s();
  HcclResult res = HcclCommInitRootInfo(g_n, &ri, g_rank, &bad);
  CHECK(res != HCCL_SUCCESS && bad == NULL, "set-up succeeded (%d)", (int)res);
  printf("rank %d: init failed %d after %.1f s: %s\n", g_rank, (int)res, now_s() - t0,
         aclGetRecentErrMsg());
  if (g_fail == 0) printf("rank %d: PASS init failed\n", g_rank);
  return g_fail != 0;
}

/* timeout cfg: the 2 s limit comes from the config, not HCCL_EXEC_TIMEOUT. */
static int mode_timeout(struct Run *r) {
  int cfg = r->argc > 0 && strcmp(r->argv[0], "cfg") == 0;
  HcclComm comm = make_comm(r->rootfile, cfg ? "check_a" : NULL, 0, cfg ? 2 : 0);
  return run_failure(comm, r->s, 0, count_arg(r)); /* destroys comm */
}
static int mode_kill(struct Run *r) {
  int rc = run_failure(r->comm, r->s, 1, count_arg(r));
  r->comm = NULL; /* destroyed there */
  return rc;
}
static int mode_abort(struct Run *r) {
  int rc = run_abort(r->comm, r->s, r->rootfile);
  r->comm = NULL; /* destroyed there */
  return rc;
}
static int mode_sigstop(struct Run *r) { return run_sigstop(r->comm, r->s); }
static int mode_late(struct Run *r) { return run_late(r->comm, r->s); }
static int mode_mismatch(struct Run *r) { return run_mismatch(r->comm, r->s, r->argv[0]); }
static int mode_mismatch_v(struct Run *r) {
  return run_mismatch_v(r->comm, r->s, r->argv[0], r->argv[1]);
}
static int mode_config(struct Run *r) { return run_config(atoi(r->argv[0])); }
static int mode_perf(struct Run *r) {
  return run_perf(r->comm, r->s, (size_t)atoll(r->argv[0]), atoi(r->argv[1]));
}
static int mode_inline(struct Run *r) { return run_inline(r->comm, r->rootfile, r->s, r->argv[0]); }
static int mode_p2pring(struct Run *r) {
  return run_p2p_ring(r->comm, r->s, r->argv[0], (size_t)atoll(r->argv[1]));
}
static int mode_order(struct Run *r) {
  return run_order(r->rootfile, r->s, r->argv[0], (size_t)atoll(r->argv[1]));
}

/* Every mode: its name, its arguments (a last "host" or "device" picks the
 * memory of its buffers), how many it needs, whether main first makes a
 * communicator over every rank, and its function. `hccl_check --list` prints
 * the names; tests/c/test_c_hccl.py runs every one of them. */
static const struct Mode {
  const char *name, *args;
  int nargs, comm;
  int (*run)(struct Run *r);
} kModes[] = {
    {"suite", "[host|device]", 0, 0, mode_suite},
    {"initfail", "", 0, 0, mode_initfail},
    {"timeout", "[cfg]", 0, 0, mode_timeout},
    {"kill", "[COUNT host|device]", 0, 1, mode_kill},
    {"abort", "", 0, 1, mode_abort},
    {"sigstop", "[host|device]", 0, 1, mode_sigstop},
    {"late", "", 0, 1, mode_late},
    {"mismatch", "WHAT", 1, 1, mode_mismatch},
    {"mismatch_v", "KIND HOW", 2, 1, mode_mismatch_v},
    {"config", "DET", 1, 0, mode_config},
    {"perf", "BYTES ITERS [host|device]", 2, 1, mode_perf},
    {"inline", "WHAT", 1, 1, mode_inline},
    {"p2pring", "WHAT COUNT [host|device]", 2, 1, mode_p2pring},
    {"order", "WHAT COUNT [host|device]", 2, 0, mode_order},
};
#define NMODES (sizeof(kModes) / sizeof(kModes[0]))

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < NMODES; ++i) printf("%s\n", kModes[i].name);
    return 0;
  }
  const struct Mode *mode = NULL;
  for (size_t i = 0; argc > 1 && i < NMODES; ++i)
    if (strcmp(argv[1], kModes[i].name) == 0) mode = &kModes[i];
  if (mode == NULL || argc < 5 + mode->nargs) {
    fprintf(stderr, "usage: %s MODE RANK NRANKS ROOTFILE [ARGS], or --list; MODE ARGS:\n", argv[0]);
    for (size_t i = 0; i < NMODES; ++i) fprintf(stderr, "  %s %s\n", kModes[i].name, kModes[i].args);
    return 2;
  }
  g_rank = atoi(argv[2]);
  g_n = atoi(argv[3]);
  g_device_mem = argc > 5 && strcmp(argv[argc - 1], "device") == 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  ACL_OK(aclInit(NULL));
  ACL_OK(aclrtSetDevice(0));
  struct Run run = {argv[4], argc - 5, argv + 5, NULL, NULL};
  ACL_OK(aclrtCreateStream(&run.s));
  if (mode->comm) run.comm = make_comm(run.rootfile, NULL, 0, 0);
  int rc = mode->run(&run);
  if (run.comm) HCCL_OK(HcclCommDestroy(run.comm));
  ACL_OK(aclrtDestroyStream(run.s));
  aclrtResetDevice(0);
  aclFinalize();
  return rc;
}
