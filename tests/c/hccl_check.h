/*
 * What the files of hccl_check share (hccl_check.c: main and the mode table;
 * hccl_values.c, hccl_modes_coll.c, hccl_modes_suite.c, hccl_modes_faults.c,
 * hccl_modes_p2p.c: the checks), declared once. Every part defines
 * RANK_CHECK_PART before including this: rank_check.h's counters live in
 * hccl_check.c.
 */
#ifndef PYHCCL_TESTS_C_HCCL_CHECK_H_
#define PYHCCL_TESTS_C_HCCL_CHECK_H_

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include "hccl/hccl_host.h"
#include "rank_check.h"

/* The buffers are device memory (aclrtMalloc), else host memory (main sets it). */
extern int g_device_mem;

/* hccl_check.c: name NULL: HcclCommInitRootInfo; else a config with that name,
 * and buffer_mb / exec_timeout when not 0. Checks its rank and size. */
HcclComm make_comm(const char *path, const char *name, uint32_t buffer_mb, int32_t exec_timeout);

/* hccl_values.c */
struct Want {
  int op;
  HcclDataType t;
  int rank;
  size_t base;
};
size_t esize(HcclDataType t);
void store(HcclDataType t, void *p, size_t i, double v);
double gen(int op, HcclDataType t, int rank, size_t i);
double fold(int op, double a, double b);
int reducible(HcclDataType t, int op);
void *alloc(size_t bytes);
void release(void *p);
int compare(const char *what, HcclDataType t, const void *buf, size_t i0, size_t count,
            double (*want)(size_t, void *), void *ctx);
double want_reduced(size_t i, void *c);
double want_plain(size_t i, void *c);

/* hccl_modes_coll.c */
struct Outcome {
  aclError e;
  HcclResult async;
  double took;
  char msg[2048];
};
void sync_ok(aclrtStream s, const char *what);
struct Outcome outcome(HcclComm comm, aclrtStream s, double t0, const char *what);
void t_allreduce(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count, int in_place);
void t_reduce(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count, int root,
              int in_place);
void t_broadcast(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root);
void t_allgather(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int in_place);
void t_reducescatter(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count,
                     int in_place);
void t_scatter(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root);
void t_gather(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root, int in_place);
void t_alltoall(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int in_place);
void t_alltoallv(HcclComm comm, aclrtStream s, HcclDataType t, size_t base);
void t_allgatherv(HcclComm comm, aclrtStream s, HcclDataType t, size_t base);
void t_reducescatterv(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t base);
void t_sendrecv(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int grouped);
void t_determinism(HcclComm comm, aclrtStream s, HcclDataType t, size_t count);

/* hccl_modes_suite.c */
void expect_err(HcclResult got, HcclResult want, const char *call, const char *word);
void t_errors(HcclComm comm, aclrtStream s);
void run_suite(HcclComm comm, aclrtStream s, int big);
void run_two_comms(HcclComm a, HcclComm b, aclrtStream sa, aclrtStream sb);
int run_config(int expect_env);
int run_perf(HcclComm comm, aclrtStream s, size_t bytes, int iters);

/* hccl_modes_faults.c */
int run_failure(HcclComm comm, aclrtStream s, int kill_mode, size_t n);
int run_mismatch(HcclComm comm, aclrtStream s, const char *what);
int run_pipeline(HcclComm comm, aclrtStream s, const char *kind);
int run_held(HcclComm comm, aclrtStream s);
int run_abort(HcclComm comm, aclrtStream s, const char *rootfile);
int run_late(HcclComm comm, aclrtStream s);
int run_sigstop(HcclComm comm, aclrtStream s);
int run_mismatch_v(HcclComm comm, aclrtStream s, const char *kind, const char *how);

/* hccl_modes_p2p.c */
int run_p2p_ring(HcclComm comm, aclrtStream s, const char *what, size_t count);
int run_order(const char *rootfile, aclrtStream s, const char *what, size_t count);
int run_inline(HcclComm a, const char *rootfile, aclrtStream sa, const char *what);

#endif /* PYHCCL_TESTS_C_HCCL_CHECK_H_ */
