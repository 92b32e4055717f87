/* cann_tool check, second part: the acltdt communicator API (acl/acl_tdt.h, a pyhccl
 * extension). The ranks meet by group name alone, as hand-started programs do, and run
 * AllReduce, Broadcast, AllGather and ReduceScatter with byte sizes; a size that is not
 * a whole number of elements must be refused. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl_tdt.h"
#include "check.h"

#define N 1031  /* elements per rank: odd, so nothing divides evenly by chance */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static float value(size_t i, int rank) { return (float)(i % 97) + 0.25f * (float)rank; }

static void report(struct check_ctx *c, const char *name, const char *what, const char *error,
                   size_t bad, double ms) {
  int ok = error == NULL && bad == 0;
  ok ? c->passed++ : c->failed++;
  if (!(c->rank == 0 || c->verbose || !ok)) return;
  FILE *out = ok ? stdout : stderr;
  if (c->nranks > 1 && (c->verbose || !ok)) fprintf(out, "rank %d: ", c->rank);
  fprintf(out, "  %-13s %-41s %s", name, what, ok ? "ok" : "FAILED");
  if (error != NULL) {
    const char *msg = aclGetRecentErrMsg();
    fprintf(out, ": %s %s", error, msg ? msg : "");
  } else if (bad) {
    fprintf(out, ": %zu wrong elements", bad);
  }
  if (ok && ms >= 0) fprintf(out, " (%.2f ms)", ms);
  fprintf(out, "\n");
  fflush(out);
}

/* Runs op on the device copy of `in` (n_in floats) into `n_out` floats and compares them
 * with `want`; returns the number of wrong elements, or sets *error. */
enum tdt_op { TDT_ALLREDUCE, TDT_BROADCAST, TDT_ALLGATHER, TDT_REDUCESCATTER };

static size_t run_op(struct check_ctx *c, acltdtComm comm, enum tdt_op op, const float *in,
                     size_t n_in, const float *want, size_t n_out, const char **error,
                     double *ms) {
  void *src = NULL, *dst = NULL;
  float *back = malloc(n_out * sizeof(float));
  size_t bad = 0;
  int in_place = op == TDT_ALLREDUCE || op == TDT_BROADCAST;
  aclError err = back == NULL ? ACL_ERROR_BAD_ALLOC : ACL_SUCCESS;
  if (err == ACL_SUCCESS) err = aclrtMalloc(&src, n_in * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
  if (err == ACL_SUCCESS)
    err = aclrtMemcpy(src, n_in * sizeof(float), in, n_in * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
  if (err == ACL_SUCCESS && !in_place)
    err = aclrtMalloc(&dst, n_out * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
  if (err != ACL_SUCCESS) {
    *error = "aclrtMalloc/aclrtMemcpy";
    goto out;
  }
  double t0 = now_ms();
  switch (op) {
    case TDT_ALLREDUCE:
      err = acltdtCommAllReduce(comm, src, n_in * sizeof(float), ACL_FLOAT,
                                ACL_TDT_COMM_REDUCE_SUM, c->stream);
      break;
    case TDT_BROADCAST:
      err = acltdtCommBroadcast(comm, src, n_in * sizeof(float), ACL_FLOAT, c->nranks - 1,
                                c->stream);
      break;
    case TDT_ALLGATHER:
      err = acltdtCommAllGather(comm, src, dst, n_in * sizeof(float), ACL_FLOAT, c->stream);
      break;
    case TDT_REDUCESCATTER:
      err = acltdtCommReduceScatter(comm, src, dst, n_out * sizeof(float), ACL_FLOAT,
                                    ACL_TDT_COMM_REDUCE_SUM, c->stream);
      break;
  }
  if (err != ACL_SUCCESS) {
    *error = "the acltdtComm call";
    goto out;
  }
  if (aclrtSynchronizeStream(c->stream) != ACL_SUCCESS) {
    *error = "aclrtSynchronizeStream";
    goto out;
  }
  *ms = now_ms() - t0;
  if (aclrtMemcpy(back, n_out * sizeof(float), in_place ? src : dst, n_out * sizeof(float),
                  ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
    *error = "aclrtMemcpy";
    goto out;
  }
  for (size_t i = 0; i < n_out; i++) bad += back[i] != want[i];
out:
  aclrtFree(src);
  aclrtFree(dst);
  free(back);
  return bad;
}

void run_tdt_checks(struct check_ctx *c, const char *group) {
  char what[96];
  acltdtComm comm = NULL;
  double t0 = now_ms();
  aclError err = acltdtCreateComm(&comm, c->nranks, c->rank, group, c->stream);
  snprintf(what, sizeof(what), "CreateComm \"%.28s\"", group);
  report(c, "acltdt", what, err == ACL_SUCCESS ? NULL : "acltdtCreateComm", 0,
         now_ms() - t0);
  if (err != ACL_SUCCESS) return;

  size_t w = (size_t)c->nranks, total = w * N;
  float *mine = malloc(total * sizeof(float)), *want = malloc(total * sizeof(float));
  if (mine == NULL || want == NULL) {
    report(c, "acltdt", "buffers", "malloc", 0, -1);
    goto out;
  }
  const char *error;
  double ms;
  size_t bad;
  /* AllReduce (sum) of N floats, in place. */
  for (size_t i = 0; i < N; i++) {
    mine[i] = value(i, c->rank);
    want[i] = 0;
    for (int r = 0; r < c->nranks; r++) want[i] += value(i, r);
  }
  error = NULL, ms = -1;
  bad = run_op(c, comm, TDT_ALLREDUCE, mine, N, want, N, &error, &ms);
  report(c, "acltdt", "AllReduce float32 sum, 4124 bytes", error, bad, ms);
  /* Broadcast from the last rank. */
  for (size_t i = 0; i < N; i++) {
    want[i] = value(i, c->nranks - 1);
    mine[i] = c->rank == c->nranks - 1 ? want[i] : -1.0f;
  }
  error = NULL, ms = -1;
  bad = run_op(c, comm, TDT_BROADCAST, mine, N, want, N, &error, &ms);
  report(c, "acltdt", "Broadcast float32 from the last rank", error, bad, ms);
  /* AllGather: every rank's N floats, in rank order. */
  for (size_t j = 0; j < total; j++) want[j] = value(j % N, (int)(j / N));
  for (size_t i = 0; i < N; i++) mine[i] = value(i, c->rank);
  error = NULL, ms = -1;
  bad = run_op(c, comm, TDT_ALLGATHER, mine, N, want, total, &error, &ms);
  report(c, "acltdt", "AllGather float32", error, bad, ms);
  /* ReduceScatter (sum): this rank's block of the sum of every rank's w * N floats. */
  for (size_t j = 0; j < total; j++) mine[j] = value(j, c->rank);
  for (size_t i = 0; i < N; i++) {
    want[i] = 0;
    for (int r = 0; r < c->nranks; r++) want[i] += value((size_t)c->rank * N + i, r);
  }
  error = NULL, ms = -1;
  bad = run_op(c, comm, TDT_REDUCESCATTER, mine, total, want, N, &error, &ms);
  report(c, "acltdt", "ReduceScatter float32 sum", error, bad, ms);
  /* A byte size that is not a whole number of floats is refused before anything runs. */
  void *buf = NULL;
  if (aclrtMalloc(&buf, 8, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS) {
    err = acltdtCommAllReduce(comm, buf, 7, ACL_FLOAT, ACL_TDT_COMM_REDUCE_SUM, c->stream);
    report(c, "acltdt", "AllReduce of 7 bytes of float32: refused",
           err == ACL_ERROR_INVALID_PARAM ? NULL : "no ACL_ERROR_INVALID_PARAM from it", 0, -1);
    aclrtFree(buf);
  }
out:
  free(mine);
  free(want);
  err = acltdtDestroyComm(comm);
  report(c, "acltdt", "DestroyComm", err == ACL_SUCCESS ? NULL : "acltdtDestroyComm", 0, -1);
}
