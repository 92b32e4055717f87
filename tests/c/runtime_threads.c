/*
 * runtime_check's process sections (part of runtime_check, see runtime_check.c):
 * threads, fork children, the profiling API's argument checks, finalize,
 * and Ctrl-C during a synchronize.
 */
#include "runtime_check.h"

/* ---- threads ----------------------------------------------------------- */

typedef struct {
  int id;
  int ok;
} Worker;

static void *worker_main(void *arg) {
  Worker *w = (Worker *)arg;
  /* Error messages are per thread. */
  if (aclGetRecentErrMsg() != NULL) return NULL;
  if (aclrtSetDevice(w->id % 2) != ACL_SUCCESS) return NULL;
  aclrtStream s = NULL;
  if (aclrtCreateStream(&s) != ACL_SUCCESS) return NULL;
  unsigned char *d = NULL, h[128];
  for (int round = 0; round < 50; ++round) {
    if (aclrtMalloc((void **)&d, 128, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return NULL;
    for (int i = 0; i < 4; ++i) {
      if (aclrtMemsetAsync(d, 128, w->id + round + i, 128, s) != ACL_SUCCESS) return NULL;
    }
    if (aclrtMemcpyAsync(h, sizeof h, d, 128, ACL_MEMCPY_DEVICE_TO_HOST, s) != ACL_SUCCESS) {
      return NULL;
    }
    if (aclrtSynchronizeStream(s) != ACL_SUCCESS) return NULL;
    if (h[0] != (unsigned char)(w->id + round + 3) || h[127] != h[0]) return NULL;
    if (aclrtFree(d) != ACL_SUCCESS) return NULL;
  }
  if (aclrtDestroyStream(s) != ACL_SUCCESS) return NULL;
  if (aclrtSynchronizeDevice() != ACL_SUCCESS) return NULL;
  if (aclrtResetDevice(w->id % 2) != ACL_SUCCESS) return NULL;
  w->ok = 1;
  return NULL;
}

void check_threads(void) {
  enum { kThreads = 4 };
  pthread_t t[kThreads];
  Worker w[kThreads];
  FAILS(aclrtSetDevice(-7), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice"); /* main's message */
  for (int i = 0; i < kThreads; ++i) {
    w[i].id = i;
    w[i].ok = 0;
    CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
  }
  for (int i = 0; i < kThreads; ++i) {
    CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(w[i].ok == 1);
  }
  CHECK(strstr(aclGetRecentErrMsg(), "aclrtSetDevice") != NULL);
  int32_t dev = -1;
  OK(aclrtGetDevice(&dev)); /* device 0 is still set by the main thread */
  CHECK(dev == 0);
}

/* A fork child (multiprocessing) gets fresh runtime state: the parent's
 * streams are invalid there instead of hanging, and its allocations come from
 * its own arena, never from the parent's shared one. */
void check_fork(void) {
  /* ThreadSanitizer cannot follow a multithreaded fork. */
  if (getenv("RUNTIME_CHECK_NO_FORK") != NULL) return;
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s));
  unsigned char *p = NULL;
  OK(aclrtMalloc((void **)&p, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemset(p, 1 << 16, 0xab, 1 << 16));
  OK(aclrtLaunchHostFunc(s, host_sleep, (void *)(intptr_t)20));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int32_t dev = -1;
    aclrtStream cs = NULL;
    unsigned char *q = NULL;
    if (aclrtSynchronizeStream(s) != ACL_ERROR_RT_INVALID_HANDLE) _exit(2);
    if (aclrtGetDevice(&dev) != ACL_ERROR_RT_CONTEXT_NULL) _exit(3);
    if (aclrtSetDevice(0) != ACL_SUCCESS) _exit(4);
    if (aclrtCreateStream(&cs) != ACL_SUCCESS) _exit(5);
    for (int i = 0; i < 4; ++i) {
      if (aclrtMalloc((void **)&q, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) _exit(6);
      if (aclrtMemsetAsync(q, 1 << 16, 0x11, 1 << 16, cs) != ACL_SUCCESS) _exit(7);
    }
    if (aclrtSynchronizeStream(cs) != ACL_SUCCESS) _exit(8);
    if (q[0] != 0x11 || p[0] != 0xab || p[(1 << 16) - 1] != 0xab) _exit(9);
    if (aclrtFree(p) != ACL_ERROR_INVALID_PARAM) _exit(10); /* the parent's, not ours */
    if (aclrtDestroyStream(cs) != ACL_SUCCESS) _exit(11);
    if (aclrtResetDevice(0) != ACL_SUCCESS) _exit(12);
    _exit(0);
  }
  int status = -1;
  CHECK(waitpid(pid, &status, 0) == pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "fork child failed: status 0x%x\n", status);
    exit(1);
  }
  for (int i = 0; i < (1 << 16); ++i) CHECK(p[i] == 0xab);
  OK(aclrtSynchronizeStream(s));
  OK(aclrtDestroyStream(s));
  OK(aclrtFree(p));
}

/* The profiling API works (tests/c/prof_check.c); its argument checks here. */
void check_prof_args(void) {
  FAILS(aclprofInit(NULL, 4), ACL_ERROR_INVALID_PARAM, "aclprofInit");
  CHECK(aclprofCreateConfig(NULL, 0, ACL_AICORE_PIPE_UTILIZATION, NULL, ACL_PROF_ACL_API) == NULL);
  CHECK(strstr(aclGetRecentErrMsg(), "aclprofCreateConfig") != NULL);
  FAILS(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize");
}

void check_finalize(void) {
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  FAILS(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");
  FAILS(aclFinalizeReference(NULL), ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference");
  /* Finalized: nothing new is built on the torn-down runtime until aclInit. */
  void *late = NULL;
  FAILS(aclrtMalloc(&late, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE,
        "aclrtMalloc: ACL was finalized (aclFinalize); call aclInit first");
  FAILS(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE, "aclrtSetDevice: ACL was finalized");
  aclrtStream late_s = NULL;
  FAILS(aclrtCreateStream(&late_s), ACL_ERROR_UNINITIALIZE, "aclrtCreateStream: ACL was finalized");
  /* Init again; finalize drops devices and streams that are still around. */
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s));
  OK(aclrtLaunchHostFunc(s, host_sleep, (void *)(intptr_t)10));
  /* A repeated aclInit adds no reference: one aclFinalizeReference finalizes. */
  FAILS(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit");
  uint64_t refs = 7;
  OK(aclFinalizeReference(&refs));
  CHECK(refs == 0);
  FAILS(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE, "aclrtSynchronizeStream");
  FAILS(aclFinalizeReference(NULL), ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference");
}

/* An interruptible synchronize reports Ctrl-C that came while it waited, even
 * when the stream drained meanwhile: before, a task that ended on the
 * interrupt could drain the stream first, and Python raised the task's error
 * instead of KeyboardInterrupt. */
void check_interrupts(void) {
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s));
  int32_t irq = -1;
  uint64_t since = hostrtInterruptCount();
  OK(aclrtLaunchHostFunc(s, host_note_interrupt, NULL));
  OK(hostrtSynchronizeStreamInterruptible(s, since, &irq));
  CHECK(irq == 1);
  since = hostrtInterruptCount();
  OK(hostrtSynchronizeStreamInterruptible(s, since, &irq));
  CHECK(irq == 0);
  OK(aclrtDestroyStream(s));
}
