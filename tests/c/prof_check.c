/*
 * The profiling API (aclprof*) and PYHCCL_TRACE, without MPI.
 *
 *   prof_check MODE RANK NRANKS ROOTFILE DIR
 *
 * Rank r uses device r; rank 0 writes HcclGetRootInfo's blob to ROOTFILE, the
 * other ranks poll for it. Modes:
 *   prof    aclprofInit(DIR), a config for this rank's device, aclprofStart;
 *           a memcpy, a memset, an AllReduce and a Broadcast on a stream;
 *           aclprofStop, aclprofDestroyConfig, aclprofFinalize
 *   env     the same operations with no aclprof call (PYHCCL_TRACE=DIR
 *           records them); exits without aclFinalize
 *   errors  (one rank) bad arguments and wrong call orders; a session that
 *           profiles device 1 while work runs on device 0; an empty session
 * The JSON files in DIR are checked by tests/c/test_profiling.py. Each rank
 * prints "rank R: PASS" and exits 0 when all went well.
 */
#define _GNU_SOURCE
#include "acl/acl_prof.h"
#include "rank_check.h"

#define OK(call)                                                                     \
  do {                                                                               \
    int r_ = (int)(call);                                                            \
    if (r_ != 0) {                                                                   \
      const char *m_ = aclGetRecentErrMsg();                                         \
      fprintf(stderr, "rank %d: %s:%d: %s -> %d (%s)\n", g_rank, __FILE__, __LINE__, \
              #call, r_, m_ ? m_ : "");                                              \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)

/* call returns code, and the recent message names api and mentions `word`. */
#define FAILS(call, code, api, word)                                                        \
  do {                                                                                      \
    aclError e_ = (call);                                                                   \
    const char *m_ = aclGetRecentErrMsg();                                                  \
    CHECK(e_ == (code), "%s returned %d, expected %d", #call, (int)e_, (int)(code));        \
    CHECK(m_ && strstr(m_, api) && strstr(m_, word), "%s: message %s lacks %s / %s", #call, \
          m_ ? m_ : "(null)", api, word);                                                   \
  } while (0)

/* A memcpy (4096 bytes), a memset (1000 bytes), an AllReduce of 1024 floats
 * and a Broadcast of 256 int32 on one stream, checked. */
static void workload(const char *rootfile) {
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  float host[1024];
  for (int i = 0; i < 1024; ++i) host[i] = (float)(g_rank + 1);
  void *dev = NULL, *dev2 = NULL;
  OK(aclrtMalloc(&dev, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMalloc(&dev2, 1024, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemcpyAsync(dev, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE, s));
  OK(aclrtMemsetAsync(dev2, 1024, 0, 1000, s));
  HcclComm comm = init_comm(rootfile, NULL);
  OK(HcclAllReduce(dev, dev, 1024, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  OK(HcclBroadcast(dev2, 256, HCCL_DATA_TYPE_INT32, 0, comm, s));
  OK(aclrtSynchronizeStream(s));
  OK(aclrtMemcpy(host, sizeof(host), dev, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
  const float want = (float)(g_n * (g_n + 1) / 2);
  CHECK(host[0] == want && host[1023] == want, "AllReduce gave %g, want %g", host[0], want);
  OK(HcclCommDestroy(comm));
  OK(aclrtFree(dev));
  OK(aclrtFree(dev2));
  OK(aclrtDestroyStream(s));
}

static void run_prof(const char *rootfile, const char *dir) {
  uint32_t dev = (uint32_t)g_rank;
  OK(aclprofInit(dir, strlen(dir)));
  aclprofConfig *cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_PIPE_UTILIZATION, NULL,
                                           ACL_PROF_TASK_TIME | ACL_PROF_HCCL_TRACE);
  CHECK(cfg != NULL, "aclprofCreateConfig: %s", aclGetRecentErrMsg());
  if (cfg == NULL) return;
  OK(aclprofStart(cfg));
  workload(rootfile);
  OK(aclprofStop(cfg));
  OK(aclprofDestroyConfig(cfg));
  OK(aclprofFinalize());
}

static void run_errors(const char *dir) {
  uint32_t dev0 = 0, dev1 = 1, bad = 100000, twice[2] = {0, 0};
  /* Before aclprofInit. */
  aclprofConfig *cfg = aclprofCreateConfig(&dev0, 1, ACL_AICORE_PIPE_UTILIZATION, NULL, 0);
  CHECK(cfg != NULL, "aclprofCreateConfig: %s", aclGetRecentErrMsg());
  FAILS(aclprofStart(cfg), ACL_ERROR_PROF_NOT_RUN, "aclprofStart", "aclprofInit");
  FAILS(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN, "aclprofStop", "aclprofInit");
  FAILS(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize", "aclprofInit");
  /* aclprofInit's arguments. */
  FAILS(aclprofInit(NULL, 4), ACL_ERROR_INVALID_PARAM, "aclprofInit", "profilerResultPath");
  FAILS(aclprofInit(dir, strlen(dir) + 5), ACL_ERROR_INVALID_PARAM, "aclprofInit", "length");
  FAILS(aclprofInit(dir, 0), ACL_ERROR_INVALID_PARAM, "aclprofInit", "length");
  char file[4096];
  snprintf(file, sizeof(file), "%s/plain-file", dir);
  FILE *f = fopen(file, "w");
  if (f) fclose(f);
  FAILS(aclprofInit(file, strlen(file)), ACL_ERROR_INVALID_PARAM, "aclprofInit",
        "not a directory");
  /* aclprofCreateConfig's arguments. */
  CHECK(aclprofCreateConfig(NULL, 1, ACL_AICORE_PIPE_UTILIZATION, NULL, 0) == NULL, "NULL list");
  CHECK(strstr(aclGetRecentErrMsg(), "deviceIdList is NULL") != NULL, "%s", aclGetRecentErrMsg());
  CHECK(aclprofCreateConfig(&bad, 1, ACL_AICORE_PIPE_UTILIZATION, NULL, 0) == NULL, "bad id");
  CHECK(strstr(aclGetRecentErrMsg(), "aclprofCreateConfig: deviceIdList[0] (100000)") != NULL,
        "%s", aclGetRecentErrMsg());
  CHECK(aclprofCreateConfig(&dev0, 0, ACL_AICORE_PIPE_UTILIZATION, NULL, 0) == NULL, "0 devices");
  CHECK(strstr(aclGetRecentErrMsg(), "deviceNums") != NULL, "%s", aclGetRecentErrMsg());
  CHECK(aclprofCreateConfig(twice, 2, ACL_AICORE_PIPE_UTILIZATION, NULL, 0) == NULL, "twice");
  /* Configs that are not configs. */
  FAILS(aclprofStart(NULL), ACL_ERROR_INVALID_PARAM, "aclprofStart", "profilerConfig");
  FAILS(aclprofStart((aclprofConfig *)&dev0), ACL_ERROR_INVALID_PARAM, "aclprofStart",
        "not a config");
  FAILS(aclprofDestroyConfig(NULL), ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig",
        "profilerConfig");

  /* A session on device 1 while the work runs on device 0: nothing recorded. */
  char sub[4096];
  snprintf(sub, sizeof(sub), "%s/other-device/nested", dir);  /* created */
  OK(aclprofInit(sub, strlen(sub)));
  FAILS(aclprofInit(sub, strlen(sub)), ACL_ERROR_REPEAT_INITIALIZE, "aclprofInit", "already");
  aclprofConfig *cfg1 = aclprofCreateConfig(&dev1, 1, ACL_AICORE_PIPE_UTILIZATION, NULL, 0);
  CHECK(cfg1 != NULL, "aclprofCreateConfig: %s", aclGetRecentErrMsg());
  FAILS(aclprofStop(cfg1), ACL_ERROR_PROF_NOT_RUN, "aclprofStop", "device 1");
  OK(aclprofStart(cfg1));
  FAILS(aclprofStart(cfg1), ACL_ERROR_PROF_ALREADY_RUN, "aclprofStart", "device 1");
  aclrtStream s;
  OK(aclrtCreateStream(&s));
  char buf[64];
  void *d = NULL;
  OK(aclrtMalloc(&d, sizeof(buf), ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemcpyAsync(d, sizeof(buf), buf, sizeof(buf), ACL_MEMCPY_HOST_TO_DEVICE, s));
  OK(aclrtSynchronizeStream(s));
  OK(aclprofStop(cfg1));
  OK(aclprofDestroyConfig(cfg1));
  FAILS(aclprofDestroyConfig(cfg1), ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig",
        "not a config");
  OK(aclprofFinalize());
  FAILS(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize", "not initialized");

  /* An empty session (Init, Finalize): still a valid file. A length that
   * counts the NUL is taken. */
  snprintf(sub, sizeof(sub), "%s/empty", dir);
  OK(aclprofInit(sub, strlen(sub) + 1));
  OK(aclprofFinalize());
  /* Finalize while started: stops and writes. */
  snprintf(sub, sizeof(sub), "%s/unstopped", dir);
  OK(aclprofInit(sub, strlen(sub)));
  OK(aclprofStart(cfg));
  OK(aclrtMemcpyAsync(d, sizeof(buf), buf, sizeof(buf), ACL_MEMCPY_HOST_TO_DEVICE, s));
  OK(aclrtSynchronizeStream(s));
  OK(aclprofFinalize());
  OK(aclprofDestroyConfig(cfg));
  OK(aclrtFree(d));
  OK(aclrtDestroyStream(s));
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s prof|env|errors RANK NRANKS ROOTFILE DIR\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  g_rank = atoi(argv[2]);
  g_n = atoi(argv[3]);
  const char *rootfile = argv[4], *dir = argv[5];
  setvbuf(stdout, NULL, _IOLBF, 0);
  OK(aclInit(NULL));
  OK(aclrtSetDevice(strcmp(mode, "errors") == 0 ? 0 : g_rank));
  if (strcmp(mode, "prof") == 0) {
    run_prof(rootfile, dir);
  } else if (strcmp(mode, "env") == 0) {
    workload(rootfile);
    return finish(); /* no aclFinalize: the exit handler writes the trace */
  } else if (strcmp(mode, "errors") == 0) {
    run_errors(dir);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  OK(aclrtResetDevice(strcmp(mode, "errors") == 0 ? 0 : g_rank));
  OK(aclFinalize());
  return finish();
}
