/* cann_tool check: the collectives on one rank, each result compared element by element.
 * Values are small integers, exact in float32, so sums compare exactly. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static const uint64_t kCounts[] = {1, 1031, 262147};  /* one, odd, about 1 MiB of floats */
#define NCOUNTS (sizeof(kCounts) / sizeof(kCounts[0]))
#define SENTINEL (-7777.0f)

static float grad(uint64_t i, int rank) { return (float)(i % 251) + (float)rank; }
static float grad_sum(uint64_t i, int n) { return (float)n * (float)(i % 251) + (float)(n * (n - 1) / 2); }
static int32_t ival(uint64_t i, int rank) { return (int32_t)((i * 7 + (uint64_t)rank * 13) % 1000); }
static int8_t bval(uint64_t i) { return (int8_t)((i * 31 + 5) & 0x7f); }

struct op_result {
  const char *error;  /* a failed call, or NULL */
  uint64_t bad;       /* wrong elements */
  uint64_t first_bad;
  double expected, got;
  double t0, ms;  /* the collective and its stream synchronisation */
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define TRY_ACL(res, call)          \
  do {                              \
    if ((call) != ACL_SUCCESS) {    \
      (res)->error = #call;         \
      goto out;                     \
    }                               \
  } while (0)
#define TRY_HCCL(res, call)         \
  do {                              \
    if ((call) != HCCL_SUCCESS) {   \
      (res)->error = #call;         \
      goto out;                     \
    }                               \
  } while (0)

static void mismatch(struct op_result *res, uint64_t i, double expected, double got) {
  if (res->bad++ == 0) {
    res->first_bad = i;
    res->expected = expected;
    res->got = got;
  }
}

/* Device buffers from host arrays and back. */
static void *to_device(const void *host, size_t bytes) {
  void *dev = NULL;
  if (aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return NULL;
  if (aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
    aclrtFree(dev);
    return NULL;
  }
  return dev;
}

static float *filled_f(uint64_t n, int rank) {
  float *h = malloc(n * sizeof(float));
  if (h != NULL)
    for (uint64_t i = 0; i < n; i++) h[i] = rank < 0 ? SENTINEL : grad(i, rank);
  return h;
}

/* AllReduce float32 sum, out of place (in_place = 0) or in place. */
static void allreduce_f32(struct check_ctx *c, uint64_t n, int in_place, struct op_result *res) {
  size_t bytes = n * sizeof(float);
  float *h = filled_f(n, c->rank), *back = malloc(bytes), *sent = filled_f(n, -1);
  void *src = NULL, *dst = NULL;
  if (!h || !back || !sent) { res->error = "malloc"; goto out; }
  if (!(src = to_device(h, bytes))) { res->error = "aclrtMalloc/aclrtMemcpy"; goto out; }
  if (!in_place && !(dst = to_device(sent, bytes))) { res->error = "aclrtMalloc"; goto out; }
  res->t0 = now_s();
  TRY_HCCL(res, HcclAllReduce(src, in_place ? src : dst, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                              c->comm, c->stream));
  TRY_ACL(res, aclrtSynchronizeStream(c->stream));
  res->ms = (now_s() - res->t0) * 1e3;
  TRY_ACL(res, aclrtMemcpy(back, bytes, in_place ? src : dst, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t i = 0; i < n; i++)
    if (back[i] != grad_sum(i, c->nranks)) mismatch(res, i, grad_sum(i, c->nranks), back[i]);
out:
  aclrtFree(src);
  aclrtFree(dst);
  free(h), free(back), free(sent);
}

/* AllReduce int32 max or min. */
static void allreduce_i32(struct check_ctx *c, uint64_t n, HcclReduceOp op, struct op_result *res) {
  size_t bytes = n * sizeof(int32_t);
  int32_t *h = malloc(bytes), *back = malloc(bytes);
  void *src = NULL, *dst = NULL;
  if (!h || !back) { res->error = "malloc"; goto out; }
  for (uint64_t i = 0; i < n; i++) h[i] = ival(i, c->rank), back[i] = -1;
  if (!(src = to_device(h, bytes)) || !(dst = to_device(back, bytes))) {
    res->error = "aclrtMalloc/aclrtMemcpy";
    goto out;
  }
  res->t0 = now_s();
  TRY_HCCL(res, HcclAllReduce(src, dst, n, HCCL_DATA_TYPE_INT32, op, c->comm, c->stream));
  TRY_ACL(res, aclrtSynchronizeStream(c->stream));
  res->ms = (now_s() - res->t0) * 1e3;
  TRY_ACL(res, aclrtMemcpy(back, bytes, dst, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t i = 0; i < n; i++) {
    int32_t want = ival(i, 0);
    for (int r = 1; r < c->nranks; r++) {
      int32_t v = ival(i, r);
      if (op == HCCL_REDUCE_MAX ? v > want : v < want) want = v;
    }
    if (back[i] != want) mismatch(res, i, want, back[i]);
  }
out:
  aclrtFree(src);
  aclrtFree(dst);
  free(h), free(back);
}

/* Broadcast int8 from the last rank (rank 0 at one rank). */
static void broadcast_i8(struct check_ctx *c, uint64_t n, struct op_result *res) {
  uint32_t root = (uint32_t)c->nranks - 1;
  int8_t *h = malloc(n);
  void *buf = NULL;
  if (!h) { res->error = "malloc"; goto out; }
  for (uint64_t i = 0; i < n; i++) h[i] = (uint32_t)c->rank == root ? bval(i) : -1;
  if (!(buf = to_device(h, n))) { res->error = "aclrtMalloc/aclrtMemcpy"; goto out; }
  res->t0 = now_s();
  TRY_HCCL(res, HcclBroadcast(buf, n, HCCL_DATA_TYPE_INT8, root, c->comm, c->stream));
  TRY_ACL(res, aclrtSynchronizeStream(c->stream));
  res->ms = (now_s() - res->t0) * 1e3;
  TRY_ACL(res, aclrtMemcpy(h, n, buf, n, ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t i = 0; i < n; i++)
    if (h[i] != bval(i)) mismatch(res, i, bval(i), h[i]);
out:
  aclrtFree(buf);
  free(h);
}

/* AllGather float32: n elements from every rank. */
static void allgather_f32(struct check_ctx *c, uint64_t n, struct op_result *res) {
  uint64_t total = n * (uint64_t)c->nranks;
  float *h = filled_f(n, c->rank), *back = filled_f(total, -1);
  void *src = NULL, *dst = NULL;
  if (!h || !back) { res->error = "malloc"; goto out; }
  if (!(src = to_device(h, n * sizeof(float))) || !(dst = to_device(back, total * sizeof(float)))) {
    res->error = "aclrtMalloc/aclrtMemcpy";
    goto out;
  }
  res->t0 = now_s();
  TRY_HCCL(res, HcclAllGather(src, dst, n, HCCL_DATA_TYPE_FP32, c->comm, c->stream));
  TRY_ACL(res, aclrtSynchronizeStream(c->stream));
  res->ms = (now_s() - res->t0) * 1e3;
  TRY_ACL(res, aclrtMemcpy(back, total * sizeof(float), dst, total * sizeof(float),
                           ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t j = 0; j < total; j++)
    if (back[j] != grad(j % n, (int)(j / n))) mismatch(res, j, grad(j % n, (int)(j / n)), back[j]);
out:
  aclrtFree(src);
  aclrtFree(dst);
  free(h), free(back);
}

/* ReduceScatter float32 sum: every rank keeps its n-element slice of the sum. */
static void reducescatter_f32(struct check_ctx *c, uint64_t n, struct op_result *res) {
  uint64_t total = n * (uint64_t)c->nranks;
  float *h = filled_f(total, c->rank), *back = filled_f(n, -1);
  void *src = NULL, *dst = NULL;
  if (!h || !back) { res->error = "malloc"; goto out; }
  if (!(src = to_device(h, total * sizeof(float))) || !(dst = to_device(back, n * sizeof(float)))) {
    res->error = "aclrtMalloc/aclrtMemcpy";
    goto out;
  }
  res->t0 = now_s();
  TRY_HCCL(res, HcclReduceScatter(src, dst, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c->comm,
                                  c->stream));
  TRY_ACL(res, aclrtSynchronizeStream(c->stream));
  res->ms = (now_s() - res->t0) * 1e3;
  TRY_ACL(res, aclrtMemcpy(back, n * sizeof(float), dst, n * sizeof(float),
                           ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t i = 0; i < n; i++) {
    float want = grad_sum((uint64_t)c->rank * n + i, c->nranks);
    if (back[i] != want) mismatch(res, i, want, back[i]);
  }
out:
  aclrtFree(src);
  aclrtFree(dst);
  free(h), free(back);
}

static void barrier(struct check_ctx *c, uint64_t n, struct op_result *res) {
  (void)n;
  res->t0 = now_s();
  TRY_HCCL(res, HcclBarrier(c->comm, c->stream));
  TRY_ACL(res, aclrtSynchronizeStream(c->stream));
  res->ms = (now_s() - res->t0) * 1e3;
out:
  return;
}

static void allreduce_out(struct check_ctx *c, uint64_t n, struct op_result *r) { allreduce_f32(c, n, 0, r); }
static void allreduce_in(struct check_ctx *c, uint64_t n, struct op_result *r) { allreduce_f32(c, n, 1, r); }
static void allreduce_max(struct check_ctx *c, uint64_t n, struct op_result *r) { allreduce_i32(c, n, HCCL_REDUCE_MAX, r); }
static void allreduce_min(struct check_ctx *c, uint64_t n, struct op_result *r) { allreduce_i32(c, n, HCCL_REDUCE_MIN, r); }

struct check {
  const char *name, *what;
  void (*run)(struct check_ctx *, uint64_t, struct op_result *);
  int sized;  /* run at every count, or once */
};

static const struct check kChecks[] = {
    {"AllReduce", "float32 sum", allreduce_out, 1},
    {"AllReduce", "float32 sum, in place", allreduce_in, 1},
    {"AllReduce", "int32 max", allreduce_max, 1},
    {"AllReduce", "int32 min", allreduce_min, 1},
    {"Broadcast", "int8 from the last rank", broadcast_i8, 1},
    {"AllGather", "float32", allgather_f32, 1},
    {"ReduceScatter", "float32 sum", reducescatter_f32, 1},
    {"Barrier", "", barrier, 0},
};

void run_collective_checks(struct check_ctx *c) {
  for (size_t k = 0; k < sizeof(kChecks) / sizeof(kChecks[0]); k++) {
    const struct check *chk = &kChecks[k];
    for (size_t s = 0; s < (chk->sized ? NCOUNTS : 1); s++) {
      uint64_t n = kCounts[s];
      struct op_result res = {0};
      chk->run(c, n, &res);
      int ok = res.error == NULL && res.bad == 0;
      ok ? c->passed++ : c->failed++;
      if (c->rank == 0 || c->verbose || !ok) {
        char label[64];
        snprintf(label, sizeof(label), chk->sized ? "%llu elements" : "", (unsigned long long)n);
        FILE *out = ok ? stdout : stderr;
        if (c->nranks > 1 && (c->verbose || !ok)) fprintf(out, "rank %d: ", c->rank);
        fprintf(out, "  %-13s %-24s %-16s %s", chk->name, chk->what, label, ok ? "ok" : "FAILED");
        if (res.error != NULL) {
          const char *msg = aclGetRecentErrMsg();
          fprintf(out, ": %s failed %s", res.error, msg ? msg : "");
        } else if (res.bad) {
          fprintf(out, ": %llu wrong elements, first [%llu] = %g, expected %g",
                  (unsigned long long)res.bad, (unsigned long long)res.first_bad, res.got,
                  res.expected);
        }
        if (ok) fprintf(out, " (%.2f ms)", res.ms);
        fprintf(out, "\n");
        fflush(out);
      }
    }
  }
}
