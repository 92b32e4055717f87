/*
 * Helpers shared by the multi-process C checks (hccl_check.c, dtype_check.c,
 * window_check.c, comm_api_check.c, prof_check.c): a rank is started as
 *   PROGRAM MODE RANK NRANKS ROOTFILE [ARGS]
 * rank 0 writes a root info to ROOTFILE, the others poll for it. A failed
 * CHECK prints its line; each program ends with "rank R: PASS" on success.
 */
#ifndef PYHCCL_TESTS_C_RANK_CHECK_H_
#define PYHCCL_TESTS_C_RANK_CHECK_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "slowdown.h"

/* One copy per program: a check made of several files (hccl_check) defines
 * RANK_CHECK_PART in every file but the one holding main. */
#ifdef RANK_CHECK_PART
extern int g_rank, g_n, g_fail, g_checks;
#else
int g_rank, g_n, g_fail, g_checks;
#endif

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    ++g_checks;                                                                   \
    if (!(cond)) {                                                                \
      ++g_fail;                                                                   \
      fprintf(stderr, "rank %d: FAIL %s:%d: ", g_rank, __FILE__, __LINE__);       \
      fprintf(stderr, __VA_ARGS__);                                               \
      fprintf(stderr, " (recent error: %s)\n",                                   \
              aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "none");              \
    }                                                                             \
  } while (0)

#define HCCL_OK(call)                                                             \
  do {                                                                            \
    HcclResult r_ = (call);                                                       \
    if (r_ != HCCL_SUCCESS) {                                                     \
      fprintf(stderr, "rank %d: %s:%d: %s -> %d (%s)\n", g_rank, __FILE__, __LINE__, \
              #call, (int)r_, aclGetRecentErrMsg());                              \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

#define ACL_OK(call)                                                              \
  do {                                                                            \
    aclError e_ = (call);                                                         \
    if (e_ != ACL_SUCCESS) {                                                      \
      fprintf(stderr, "rank %d: %s:%d: %s -> %d (%s)\n", g_rank, __FILE__, __LINE__, \
              #call, (int)e_, aclGetRecentErrMsg());                              \
      exit(2);                                                                    \
    }                                                                             \
  } while (0)

/* The HCCL call returns `code` and leaves a message containing `text`. */
#define HCCL_FAILS(call, code, text)                                              \
  do {                                                                            \
    HcclResult r_ = (call);                                                       \
    const char *m_ = aclGetRecentErrMsg();                                        \
    CHECK(r_ == (code) && m_ != NULL && strstr(m_, text) != NULL,                 \
          "%s returned %d (want %d) with message \"%s\" (want \"%s\")", #call,     \
          (int)r_, (int)(code), m_ ? m_ : "", text);                              \
  } while (0)

static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 0 makes the root info and writes it to `path`; the others read it. */
static inline void get_root_info(const char *path, HcclRootInfo *ri) {
  if (g_rank == 0) {
    char tmp[4096];
    HCCL_OK(HcclGetRootInfo(ri));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(ri, sizeof(*ri), 1, f) != 1 || fclose(f) != 0) {
      perror("write root info");
      exit(2);
    }
    rename(tmp, path);
    return;
  }
  double until = now_s() + 60;
  for (;;) {
    FILE *f = fopen(path, "rb");
    if (f) {
      size_t got = fread(ri, sizeof(*ri), 1, f);
      fclose(f);
      if (got == 1) return;
    }
    if (now_s() > until) {
      fprintf(stderr, "rank %d: no root info in %s\n", g_rank, path);
      exit(2);
    }
    usleep(10000);
  }
}

/* A communicator over all ranks, from the root info at path (a config when
 * cfg is not NULL). */
static inline HcclComm init_comm(const char *path, const HcclCommConfig *cfg) {
  HcclRootInfo ri;
  HcclComm comm = NULL;
  get_root_info(path, &ri);
  if (cfg != NULL)
    HCCL_OK(HcclCommInitRootInfoConfig((uint32_t)g_n, &ri, (uint32_t)g_rank, cfg, &comm));
  else
    HCCL_OK(HcclCommInitRootInfo((uint32_t)g_n, &ri, (uint32_t)g_rank, &comm));
  return comm;
}

static inline int finish(void) {
  if (g_fail == 0) printf("rank %d: PASS (%d checks)\n", g_rank, g_checks);
  else printf("rank %d: %d of %d checks FAILED\n", g_rank, g_fail, g_checks);
  fflush(stdout);
  return g_fail == 0 ? 0 : 1;
}

#endif /* PYHCCL_TESTS_C_RANK_CHECK_H_ */
