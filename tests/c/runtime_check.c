/*
 * Exercises the ACL runtime API of libascendcl.so (the pyhccl host runtime):
 * init/finalize, devices, contexts, streams, events, memory, host functions
 * and callbacks, including the error paths. Prints "runtime ok" on success;
 * any failed check prints its line and the recent error message and exits 1.
 *
 *   gcc -std=c99 -Iinclude tests/c/runtime_check.c -Lbuild/lib -lascendcl -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      const char *m_ = aclGetRecentErrMsg();                                         \
      fprintf(stderr, "runtime_check.c:%d: CHECK(%s) failed (recent error: %s)\n",   \
              __LINE__, #cond, m_ ? m_ : "(none)");                                  \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)
#define OK(call) CHECK((call) == ACL_SUCCESS)
/* The call fails with `code` and leaves a message that names `api`. */
#define FAILS(call, code, api)                                                       \
  do {                                                                               \
    aclError e_ = (call);                                                            \
    if (e_ != (code)) {                                                              \
      fprintf(stderr, "runtime_check.c:%d: %s returned %d, expected %d (%s)\n",      \
              __LINE__, #call, e_, (int)(code), #code);                              \
      exit(1);                                                                       \
    }                                                                                \
    const char *m_ = aclGetRecentErrMsg();                                           \
    CHECK(m_ != NULL && strstr(m_, api) != NULL);                                    \
  } while (0)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* ---- host functions ---------------------------------------------------- */

static void host_sleep(void *arg) { sleep_ms((long)(intptr_t)arg); }

typedef struct {
  volatile int flag;
  volatile int observed;
} Flag;

static void host_sleep_then_set(void *arg) {
  Flag *f = (Flag *)arg;
  sleep_ms(50);
  __atomic_store_n(&f->flag, 1, __ATOMIC_RELEASE);
}

static void host_observe(void *arg) {
  Flag *f = (Flag *)arg;
  f->observed = __atomic_load_n(&f->flag, __ATOMIC_ACQUIRE);
}

static void host_count(void *arg) { __atomic_add_fetch((int *)arg, 1, __ATOMIC_RELAXED); }

/* The host runtime's Ctrl-C hooks (Python's synchronize uses them). */
extern void hostrtNoteInterrupt(void);
extern uint64_t hostrtInterruptCount(void);
extern aclError hostrtSynchronizeStreamInterruptible(aclrtStream, uint64_t, int32_t *);

/* As if SIGINT arrived while the task ran (and made it fail early). */
static void host_note_interrupt(void *arg) {
  (void)arg;
  sleep_ms(20);
  hostrtNoteInterrupt();
}

/* ---- sections ---------------------------------------------------------- */

static void check_before_init(void) {
  CHECK(aclGetRecentErrMsg() == NULL);
  uint32_t n = 0;
  OK(aclrtGetDeviceCount(&n));
  const char *env = getenv("PYHCCL_DEVICE_COUNT");
  CHECK(n == (env ? (uint32_t)atoi(env) : 8u));
  CHECK(aclrtGetSocName() != NULL);
  FAILS(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount");
  FAILS(aclFinalize(), ACL_ERROR_UNINITIALIZE, "aclFinalize");
}

static void check_init(void) {
  OK(aclInit(NULL));
  FAILS(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit"); /* changes nothing */
  FAILS(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, "aclInit");
  int32_t major = 0, minor = 0, patch = -1;
  OK(aclrtGetVersion(&major, &minor, &patch));
  CHECK(major == ACL_MAJOR_VERSION && minor == ACL_MINOR_VERSION && patch == ACL_PATCH_VERSION);
  FAILS(aclrtGetVersion(NULL, &minor, &patch), ACL_ERROR_INVALID_PARAM, "aclrtGetVersion");
  aclrtRunMode mode = ACL_DEVICE;
  OK(aclrtGetRunMode(&mode));
  CHECK(mode == ACL_HOST);
  CHECK(aclDataTypeSize(ACL_FLOAT16) == 2 && aclDataTypeSize(ACL_DOUBLE) == 8);
}

static void check_devices(void) {
  uint32_t n = 0;
  OK(aclrtGetDeviceCount(&n));
  int32_t dev = -5;
  FAILS(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice");
  FAILS(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice");
  FAILS(aclrtSetDevice((int32_t)n), ACL_ERROR_RT_INVALID_DEVICEID, "deviceId");
  FAILS(aclrtResetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice");
  FAILS(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSynchronizeStream");

  /* Reference counted: two sets need two resets. */
  OK(aclrtSetDevice(0));
  OK(aclrtSetDevice(0));
  OK(aclrtGetDevice(&dev));
  CHECK(dev == 0);
  OK(aclrtResetDevice(0));
  OK(aclrtGetDevice(&dev));
  OK(aclrtLaunchHostFunc(NULL, host_sleep, (void *)(intptr_t)20));
  OK(aclrtResetDevice(0)); /* waits for the default stream */
  FAILS(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice");
  FAILS(aclrtLaunchHostFunc(NULL, host_sleep, NULL), ACL_ERROR_RT_CONTEXT_NULL,
        "aclrtLaunchHostFunc");

  OK(aclrtSetDevice(0));
  OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
  OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
  FAILS(aclrtSetDeviceSatMode((aclrtFloatOverflowMode)7), ACL_ERROR_INVALID_PARAM,
        "aclrtSetDeviceSatMode");
  OK(aclrtSynchronizeDevice());
  CHECK(strlen(aclrtGetSocName()) > 0);
}

static void check_contexts(void) {
  aclrtContext def = NULL, ctx = NULL, cur = NULL;
  OK(aclrtGetCurrentContext(&def));
  CHECK(def != NULL);
  OK(aclrtCreateContext(&ctx, 1));
  CHECK(ctx != NULL && ctx != def);
  int32_t dev = -1;
  OK(aclrtGetDevice(&dev));
  CHECK(dev == 1);
  OK(aclrtGetCurrentContext(&cur));
  CHECK(cur == ctx);
  /* The new context has its own default stream. */
  int count = 0;
  OK(aclrtLaunchHostFunc(NULL, host_count, &count));
  OK(aclrtSynchronizeStream(NULL));
  CHECK(count == 1);
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s)); /* owned by ctx, destroyed with it */
  OK(aclrtSetCurrentContext(def));
  OK(aclrtGetDevice(&dev));
  CHECK(dev == 0);
  FAILS(aclrtDestroyContext(def), ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext");
  OK(aclrtDestroyContext(ctx));
  FAILS(aclrtDestroyContext(ctx), ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyContext");
  FAILS(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE, "aclrtSynchronizeStream");
  FAILS(aclrtSetCurrentContext(ctx), ACL_ERROR_RT_INVALID_HANDLE, "aclrtSetCurrentContext");
  FAILS(aclrtSetCurrentContext((aclrtContext)(uintptr_t)0x1234), ACL_ERROR_RT_INVALID_HANDLE,
        "aclrtSetCurrentContext");
  FAILS(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext");
  FAILS(aclrtCreateContext(&ctx, -3), ACL_ERROR_RT_INVALID_DEVICEID, "aclrtCreateContext");
  FAILS(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM, "aclrtCreateContext");
  OK(aclrtGetCurrentContext(&cur));
  CHECK(cur == def);
}

static void check_memory(void) {
  void *p = NULL, *q = NULL;
  FAILS(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "aclrtMalloc");
  FAILS(aclrtMalloc(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "devPtr");
  FAILS(aclrtMalloc(&p, 64, (aclrtMemMallocPolicy)99), ACL_ERROR_INVALID_PARAM, "policy");
  for (int pol = 0; pol <= 7; ++pol) {
    OK(aclrtMalloc(&p, 100, (aclrtMemMallocPolicy)pol));
    CHECK(((uintptr_t)p & 63) == 0);
    OK(aclrtFree(p));
  }
  OK(aclrtMalloc(&p, 1000,
                 (aclrtMemMallocPolicy)(ACL_MEM_MALLOC_HUGE_ONLY | ACL_MEM_TYPE_HIGH_BAND_WIDTH)));
  FAILS(aclrtFree((char *)p + 64), ACL_ERROR_INVALID_PARAM, "aclrtFree");
  int stack_var = 0;
  FAILS(aclrtFree(&stack_var), ACL_ERROR_INVALID_PARAM, "aclrtFree");
  FAILS(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM, "aclrtFree");

  /* Sync memset / memcpy with every kind; checks of sizes, kinds, pointers. */
  char host[1000], back[1000];
  for (int i = 0; i < 1000; ++i) host[i] = (char)(i * 7);
  OK(aclrtMemset(p, 1000, 0x5a, 1000));
  OK(aclrtMemcpy(back, sizeof back, p, 1000, ACL_MEMCPY_DEVICE_TO_HOST));
  for (int i = 0; i < 1000; ++i) CHECK(back[i] == 0x5a);
  for (int kind = 0; kind <= 7; ++kind) {
    memset(back, 0, sizeof back);
    OK(aclrtMemcpy(p, 1000, host, 1000, (aclrtMemcpyKind)kind));
    OK(aclrtMemcpy(back, 1000, p, 1000, (aclrtMemcpyKind)kind));
    CHECK(memcmp(back, host, 1000) == 0);
  }
  FAILS(aclrtMemcpy(back, 32, host, 64, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM,
        "aclrtMemcpy");
  CHECK(strstr(aclGetRecentErrMsg(), "aclrtMemcpy: count (64) exceeds destMax (32)") != NULL);
  FAILS(aclrtMemcpy(back, 64, host, 64, (aclrtMemcpyKind)8), ACL_ERROR_INVALID_PARAM, "kind");
  FAILS(aclrtMemcpy(NULL, 64, host, 64, ACL_MEMCPY_DEFAULT), ACL_ERROR_INVALID_PARAM, "dst");
  FAILS(aclrtMemcpy(back, 64, NULL, 64, ACL_MEMCPY_DEFAULT), ACL_ERROR_INVALID_PARAM, "src");
  FAILS(aclrtMemset(p, 16, 0, 17), ACL_ERROR_INVALID_PARAM, "aclrtMemset");
  FAILS(aclrtMemset(NULL, 16, 0, 16), ACL_ERROR_INVALID_PARAM, "aclrtMemset");
  /* Device pointers are checked against the size asked for (1000), not the
   * padded block (1056 bytes): not a byte past it, from the start or inside. */
  FAILS(aclrtMemcpy(p, 4096, host, 2000, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
        "aclrtMemcpy");
  FAILS(aclrtMemcpy(p, 1001, host, 1001, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
        "aclrtMemcpy: dst");
  FAILS(aclrtMemcpy(back, 1001, (char *)p + 500, 501, ACL_MEMCPY_DEVICE_TO_HOST),
        ACL_ERROR_INVALID_PARAM, "runs past the end of its aclrtMalloc allocation (500 bytes left)");
  FAILS(aclrtMemset(p, 1040, 0, 1040), ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr");
  FAILS(aclrtMemset((char *)p + 1000, 8, 0, 8), ACL_ERROR_INVALID_PARAM, "aclrtMemset");
  OK(aclrtMemcpy((char *)p + 500, 500, host, 500, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemset((char *)p + 999, 1, 0, 1));
  OK(aclrtMemcpy(back, 0, host, 0, ACL_MEMCPY_HOST_TO_HOST)); /* empty copy */
  OK(aclrtFree(p));
  FAILS(aclrtFree(p), ACL_ERROR_INVALID_PARAM, "aclrtFree"); /* double free */
  FAILS(aclrtMemcpy(p, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
        "not inside a live aclrtMalloc allocation"); /* use after free */

  /* Host memory. */
  OK(aclrtMallocHost(&q, 4096));
  CHECK(q != NULL && ((uintptr_t)q & 63) == 0);
  memset(q, 1, 4096);
  FAILS(aclrtFreeHost(host), ACL_ERROR_INVALID_PARAM, "aclrtFreeHost");
  FAILS(aclrtMallocHost(&q, 0), ACL_ERROR_INVALID_PARAM, "aclrtMallocHost");
  OK(aclrtFreeHost(q));
  FAILS(aclrtFreeHost(q), ACL_ERROR_INVALID_PARAM, "aclrtFreeHost");

  /* Many live allocations do not overlap; freed space is reused. */
  enum { kN = 64 };
  void *blocks[kN];
  for (int i = 0; i < kN; ++i) {
    size_t sz = (size_t)(i * 977 + 1);
    OK(aclrtMalloc(&blocks[i], sz, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(blocks[i], sz, i, sz));
  }
  for (int i = 0; i < kN; ++i) {
    size_t sz = (size_t)(i * 977 + 1);
    unsigned char *b = (unsigned char *)blocks[i];
    CHECK(b[0] == (unsigned char)i && b[sz - 1] == (unsigned char)i);
  }
  for (int i = 0; i < kN; i += 2) OK(aclrtFree(blocks[i]));
  for (int i = 1; i < kN; i += 2) OK(aclrtFree(blocks[i]));
  /* Large blocks (freeing them punches their pages out of the arena). */
  void *big = NULL;
  OK(aclrtMalloc(&big, 64u << 20, ACL_MEM_MALLOC_HUGE_ONLY));
  CHECK(((uintptr_t)big & 4095) == 0);
  OK(aclrtMemset(big, 64u << 20, 0xff, 64u << 20));
  OK(aclrtFree(big));
  OK(aclrtMalloc(&big, 64u << 20, ACL_MEM_MALLOC_HUGE_ONLY));
  CHECK(((unsigned char *)big)[12345] == 0); /* pages came back zeroed */
  OK(aclrtFree(big));

  size_t fr = 0, total = 0;
  OK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &total));
  CHECK(total > 0 && fr <= total);
  FAILS(aclrtGetMemInfo((aclrtMemAttr)99, &fr, &total), ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo");
  FAILS(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total), ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo");
}

static void check_streams(void) {
  aclrtStream s = NULL, s2 = NULL;
  FAILS(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM, "aclrtCreateStream");
  FAILS(aclrtCreateStreamWithConfig(&s, 8, 0), ACL_ERROR_INVALID_PARAM, "priority");
  FAILS(aclrtCreateStreamWithConfig(&s, 0, 0x80000000u), ACL_ERROR_INVALID_PARAM, "flag");
  OK(aclrtCreateStream(&s));
  OK(aclrtCreateStreamWithConfig(&s2, 7, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC));

  /* In order: 1000 memset+memcpy pairs through one scratch buffer. */
  enum { kOps = 1000, kSlot = 64 };
  unsigned char *log = NULL, *tmp = NULL;
  OK(aclrtMalloc((void **)&log, kOps * kSlot, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMalloc((void **)&tmp, kSlot, ACL_MEM_MALLOC_HUGE_FIRST));
  for (int i = 0; i < kOps; ++i) {
    OK(aclrtMemsetAsync(tmp, kSlot, i & 0xff, kSlot, s));
    OK(aclrtMemcpyAsync(log + i * kSlot, kSlot, tmp, kSlot, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
  }
  OK(aclrtSynchronizeStream(s));
  for (int i = 0; i < kOps; ++i) {
    CHECK(log[i * kSlot] == (unsigned char)(i & 0xff));
    CHECK(log[i * kSlot + kSlot - 1] == (unsigned char)(i & 0xff));
  }
  FAILS(aclrtMemsetAsync(tmp, 8, 0, 9, s), ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync");
  /* Past the size asked for (kSlot), inside the padding: refused. */
  FAILS(aclrtMemsetAsync(tmp, kSlot + 1, 0, kSlot + 1, s), ACL_ERROR_INVALID_PARAM,
        "aclrtMemsetAsync");
  FAILS(aclrtMemcpyAsync(log, kSlot + 8, tmp, kSlot + 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s),
        ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync: src");
  FAILS(aclrtMemcpyAsync(tmp, 8, log, 9, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM,
        "aclrtMemcpyAsync");
  FAILS(aclrtMemcpyAsync(tmp, 8, log, 8, (aclrtMemcpyKind)-1, s), ACL_ERROR_INVALID_PARAM, "kind");

  /* Query, timeouts. */
  aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
  OK(aclrtStreamQuery(s, &st));
  CHECK(st == ACL_STREAM_STATUS_COMPLETE);
  OK(aclrtLaunchHostFunc(s, host_sleep, (void *)(intptr_t)200));
  OK(aclrtStreamQuery(s, &st));
  CHECK(st == ACL_STREAM_STATUS_NOT_READY);
  FAILS(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        "aclrtSynchronizeStreamWithTimeout");
  double t0 = now_ms();
  FAILS(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        "aclrtSynchronizeStreamWithTimeout");
  CHECK(now_ms() - t0 >= 15);
  FAILS(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_INVALID_PARAM, "timeout");
  OK(aclrtSynchronizeStreamWithTimeout(s, -1));
  OK(aclrtStreamQuery(s, &st));
  CHECK(st == ACL_STREAM_STATUS_COMPLETE);
  OK(aclrtLaunchHostFunc(s, host_sleep, (void *)(intptr_t)5));
  OK(aclrtSynchronizeStreamWithTimeout(s, 10000));

  /* NULL stream = default stream of the current context. */
  int count = 0;
  for (int i = 0; i < 10; ++i) OK(aclrtLaunchHostFunc(NULL, host_count, &count));
  OK(aclrtSynchronizeStream(NULL));
  CHECK(count == 10);
  OK(aclrtStreamQuery(NULL, &st));
  FAILS(aclrtLaunchHostFunc(s, NULL, NULL), ACL_ERROR_INVALID_PARAM, "aclrtLaunchHostFunc");
  FAILS(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream");

  OK(aclrtSetStreamFailureMode(s, 1));
  OK(aclrtSetStreamFailureMode(s, 0));
  FAILS(aclrtSetStreamFailureMode(s, 2), ACL_ERROR_INVALID_PARAM, "aclrtSetStreamFailureMode");

  /* Destroy drains first. */
  count = 0;
  OK(aclrtLaunchHostFunc(s2, host_sleep, (void *)(intptr_t)30));
  OK(aclrtLaunchHostFunc(s2, host_count, &count));
  OK(aclrtDestroyStream(s2));
  CHECK(count == 1);

  /* Destroyed and garbage handles are errors, not crashes. */
  aclrtStream garbage = (aclrtStream)(uintptr_t)0xdeadbeef;
  FAILS(aclrtSynchronizeStream(s2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtSynchronizeStream");
  FAILS(aclrtDestroyStream(s2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyStream");
  FAILS(aclrtMemsetAsync(tmp, 8, 0, 8, s2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtMemsetAsync");
  FAILS(aclrtLaunchHostFunc(garbage, host_count, &count), ACL_ERROR_RT_INVALID_HANDLE,
        "aclrtLaunchHostFunc");
  FAILS(aclrtStreamQuery(garbage, &st), ACL_ERROR_RT_INVALID_HANDLE, "aclrtStreamQuery");

  OK(aclrtSynchronizeDevice());
  OK(aclrtDestroyStream(s));
  OK(aclrtFree(log));
  OK(aclrtFree(tmp));
}

static void check_events(void) {
  aclrtStream a = NULL, b = NULL;
  aclrtEvent e1 = NULL, e2 = NULL, e3 = NULL;
  OK(aclrtCreateStream(&a));
  OK(aclrtCreateStream(&b));
  OK(aclrtCreateEvent(&e1));
  OK(aclrtCreateEventWithFlag(&e2, ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC));
  FAILS(aclrtCreateEventWithFlag(&e3, 0x40000000u), ACL_ERROR_INVALID_PARAM,
        "aclrtCreateEventWithFlag");
  FAILS(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent");

  /* Never recorded: recorded-status NOT_READY, event-status COMPLETE, sync returns. */
  aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
  aclrtEventStatus es = ACL_EVENT_STATUS_RESERVED;
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  OK(aclrtQueryEvent(e1, &es));
  CHECK(es == ACL_EVENT_STATUS_COMPLETE);
  OK(aclrtSynchronizeEvent(e1));
  float ms = -1;
  FAILS(aclrtEventElapsedTime(&ms, e1, e2), ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime");

  /* Pending record, then completed record (note the opposite numbering). */
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)100));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  OK(aclrtQueryEvent(e1, &es));
  CHECK(es == ACL_EVENT_STATUS_NOT_READY);
  FAILS(aclrtSynchronizeEventWithTimeout(e1, 10), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
        "aclrtSynchronizeEventWithTimeout");
  FAILS(aclrtSynchronizeEventWithTimeout(e1, 0), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
        "aclrtSynchronizeEventWithTimeout");
  OK(aclrtSynchronizeEventWithTimeout(e1, -1));
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_COMPLETE && ACL_EVENT_RECORDED_STATUS_COMPLETE == 1);
  OK(aclrtQueryEvent(e1, &es));
  CHECK(es == ACL_EVENT_STATUS_COMPLETE && ACL_EVENT_STATUS_COMPLETE == 0);

  /* On an idle stream a record completes in the call itself (no worker
   * wake-up: Python records one after every collective it enqueues). */
  OK(aclrtSynchronizeStream(a));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_COMPLETE);

  /* Elapsed time between two records around a 30 ms host function. */
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)30));
  OK(aclrtRecordEvent(e2, a));
  OK(aclrtSynchronizeEvent(e2));
  OK(aclrtEventElapsedTime(&ms, e1, e2));
  CHECK(ms >= 25.0f && ms < 5000.0f);
  FAILS(aclrtEventElapsedTime(NULL, e1, e2), ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime");

  /* Reset: no longer recorded. */
  OK(aclrtResetEvent(e2, a));
  OK(aclrtSynchronizeStream(a));
  OK(aclrtQueryEventStatus(e2, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  FAILS(aclrtEventElapsedTime(&ms, e1, e2), ACL_ERROR_INVALID_PARAM, "endEvent");

  /* Cross-stream order: B waits for A's record after A's 50 ms host func. */
  Flag f = {0, -1};
  OK(aclrtLaunchHostFunc(a, host_sleep_then_set, &f));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtStreamWaitEvent(b, e1));
  OK(aclrtLaunchHostFunc(b, host_observe, &f));
  OK(aclrtSynchronizeStream(b));
  CHECK(f.observed == 1);

  /* The same through memory: A writes after a delay, B copies it out. */
  unsigned char *buf = NULL, out[256];
  OK(aclrtMalloc((void **)&buf, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemset(buf, 256, 0, 256));
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)50));
  OK(aclrtMemsetAsync(buf, 256, 7, 256, a));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtStreamWaitEvent(b, e1));
  OK(aclrtMemcpyAsync(out, sizeof out, buf, 256, ACL_MEMCPY_DEVICE_TO_HOST, b));
  OK(aclrtSynchronizeStream(b));
  for (int i = 0; i < 256; ++i) CHECK(out[i] == 7);

  /* A wait binds to the most recent record as of the call, not later ones. */
  OK(aclrtSynchronizeStream(a));
  OK(aclrtStreamWaitEvent(b, e1)); /* e1's record is complete */
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)500));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtSynchronizeStream(b));
  aclrtStreamStatus st;
  OK(aclrtStreamQuery(a, &st)); /* B did not wait for the later record */
  CHECK(st == ACL_STREAM_STATUS_NOT_READY);
  OK(aclrtSynchronizeStream(a));

  /* A wait on an earlier record is not released by a later record of the
   * same event on another stream that completes first. */
  Flag g = {0, -1};
  OK(aclrtLaunchHostFunc(a, host_sleep_then_set, &g));
  OK(aclrtRecordEvent(e1, a));    /* completes after 50 ms */
  OK(aclrtStreamWaitEvent(b, e1)); /* binds to that record */
  aclrtStream c = NULL;
  OK(aclrtCreateStream(&c));
  OK(aclrtRecordEvent(e1, c));    /* a later record, done at once */
  OK(aclrtSynchronizeStream(c));
  OK(aclrtLaunchHostFunc(b, host_observe, &g));
  OK(aclrtSynchronizeStream(b));
  CHECK(g.observed == 1);
  /* The same for aclrtSynchronizeEvent on a record that a later one overtakes:
   * it waits for the latest record as of the call, here the one on c. */
  OK(aclrtSynchronizeStream(a));

  /* Whoever sees an event complete also sees its stream past the record
   * (aclrtStreamQuery), and the other way round. Racy before the fix: many
   * of 2000 queries said NOT_READY. */
  int ran = 0, not_ready = 0, ev_not_done = 0;
  for (int i = 0; i < 2000; ++i) {
    OK(aclrtLaunchHostFunc(c, host_count, &ran));
    OK(aclrtRecordEvent(e1, c));
    OK(aclrtSynchronizeEvent(e1));
    OK(aclrtStreamQuery(c, &st));
    not_ready += st != ACL_STREAM_STATUS_COMPLETE;
    OK(aclrtRecordEvent(e1, c));
    OK(aclrtSynchronizeStream(c));
    OK(aclrtQueryEventStatus(e1, &rs));
    ev_not_done += rs != ACL_EVENT_RECORDED_STATUS_COMPLETE;
  }
  CHECK(not_ready == 0 && ev_not_done == 0 && ran == 2000);
  OK(aclrtDestroyStream(c));

  /* Default stream for record and wait. */
  OK(aclrtRecordEvent(e1, NULL));
  OK(aclrtStreamWaitEvent(NULL, e1));
  OK(aclrtSynchronizeStream(NULL));

  /* Bad handles. */
  FAILS(aclrtRecordEvent(NULL, a), ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent");
  FAILS(aclrtRecordEvent(a, a), ACL_ERROR_RT_INVALID_HANDLE, "aclrtRecordEvent"); /* stream as event */
  FAILS(aclrtRecordEvent(e1, e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtRecordEvent"); /* event as stream */
  FAILS(aclrtQueryEventStatus(e1, NULL), ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus");
  OK(aclrtDestroyEvent(e2));
  FAILS(aclrtDestroyEvent(e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyEvent");
  FAILS(aclrtSynchronizeEvent(e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtSynchronizeEvent");
  FAILS(aclrtStreamWaitEvent(b, e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtStreamWaitEvent");
  FAILS(aclrtQueryEvent((aclrtEvent)(uintptr_t)0x4242, &es), ACL_ERROR_RT_INVALID_HANDLE,
        "aclrtQueryEvent");

  /* Destroying an event a stream still waits on is safe. */
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)20));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtStreamWaitEvent(b, e1));
  OK(aclrtDestroyEvent(e1));
  OK(aclrtSynchronizeStream(b));

  OK(aclrtFree(buf));
  OK(aclrtDestroyStream(a));
  OK(aclrtDestroyStream(b));
}

/* ---- callbacks on a subscribed thread ---------------------------------- */

typedef struct {
  volatile int stop;
  int ran;
  pthread_t ran_on;
} Reporter;

static void *report_loop(void *arg) {
  Reporter *r = (Reporter *)arg;
  while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
    aclError e = aclrtProcessReport(20);
    CHECK(e == ACL_SUCCESS || e == ACL_ERROR_WAIT_CALLBACK_TIMEOUT ||
          e == ACL_ERROR_THREAD_NOT_SUBSCRIBE);
  }
  return NULL;
}

static void on_callback(void *arg) {
  Reporter *r = (Reporter *)arg;
  r->ran_on = pthread_self();
  __atomic_add_fetch(&r->ran, 1, __ATOMIC_RELEASE); /* publishes ran_on */
}

static void check_callbacks(void) {
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s));
  Reporter r;
  memset(&r, 0, sizeof r);
  FAILS(aclrtLaunchCallback(on_callback, &r, ACL_CALLBACK_BLOCK, s),
        ACL_ERROR_STREAM_NOT_SUBSCRIBE, "aclrtLaunchCallback");
  FAILS(aclrtProcessReport(10), ACL_ERROR_THREAD_NOT_SUBSCRIBE, "aclrtProcessReport");

  pthread_t t;
  CHECK(pthread_create(&t, NULL, report_loop, &r) == 0);
  OK(aclrtSubscribeReport((uint64_t)t, s));
  FAILS(aclrtSubscribeReport((uint64_t)t, s), ACL_ERROR_REPEAT_SUBSCRIBE, "aclrtSubscribeReport");
  OK(aclrtLaunchCallback(on_callback, &r, ACL_CALLBACK_BLOCK, s));
  OK(aclrtLaunchCallback(on_callback, &r, ACL_CALLBACK_NO_BLOCK, s));
  FAILS(aclrtLaunchCallback(on_callback, &r, (aclrtCallbackBlockType)5, s),
        ACL_ERROR_INVALID_PARAM, "blockType");
  OK(aclrtSynchronizeStream(s));
  /* The blocking one ran before the stream went on; wait for the other. */
  for (int i = 0; i < 500 && __atomic_load_n(&r.ran, __ATOMIC_ACQUIRE) < 2; ++i) sleep_ms(2);
  CHECK(__atomic_load_n(&r.ran, __ATOMIC_ACQUIRE) == 2);
  CHECK(pthread_equal(r.ran_on, t));
  FAILS(aclrtUnSubscribeReport((uint64_t)t + 1, s), ACL_ERROR_STREAM_NOT_SUBSCRIBE,
        "aclrtUnSubscribeReport");
  OK(aclrtUnSubscribeReport((uint64_t)t, s));
  __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
  CHECK(pthread_join(t, NULL) == 0);
  OK(aclrtDestroyStream(s));
}

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

static void check_threads(void) {
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
static void check_fork(void) {
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
static void check_prof_args(void) {
  FAILS(aclprofInit(NULL, 4), ACL_ERROR_INVALID_PARAM, "aclprofInit");
  CHECK(aclprofCreateConfig(NULL, 0, ACL_AICORE_PIPE_UTILIZATION, NULL, ACL_PROF_ACL_API) == NULL);
  CHECK(strstr(aclGetRecentErrMsg(), "aclprofCreateConfig") != NULL);
  FAILS(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize");
}

static void check_finalize(void) {
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
static void check_interrupts(void) {
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

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  check_before_init();
  check_init();
  check_devices();
  check_contexts();
  check_memory();
  check_streams();
  check_events();
  check_callbacks();
  check_threads();
  check_fork();
  check_prof_args();
  check_interrupts();
  check_finalize();

  /* Exit with live work: a stream whose task is still sleeping must neither
   * hang nor crash the exit. */
  OK(aclInit(NULL));
  OK(aclrtSetDevice(1));
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s));
  for (int i = 0; i < 3; ++i) OK(aclrtLaunchHostFunc(s, host_sleep, (void *)(intptr_t)200));
  puts("runtime ok");
  return 0;
}
