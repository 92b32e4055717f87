/*
 * Exercises the ACL runtime API of libascendcl.so (the pyhccl host runtime):
 * init/finalize, devices, contexts, streams, events, memory, host functions
 * and callbacks, including the error paths. Prints "runtime ok" on success;
 * any failed check prints its line and the recent error message and exits 1.
 * This file holds main, the host functions and the first sections; the others
 * are in runtime_memory.c, runtime_events.c and runtime_threads.c, sharing
 * runtime_check.h. Build them together:
 *
 *   gcc -std=c99 -Iinclude tests/c/runtime_check.c tests/c/runtime_memory.c
 *       tests/c/runtime_events.c tests/c/runtime_threads.c -Lbuild/lib -lascendcl -lpthread
 */

#include "runtime_check.h"

/* ---- host functions ---------------------------------------------------- */

void host_sleep(void *arg) { sleep_ms((long)(intptr_t)arg); }

void host_sleep_then_set(void *arg) {
  Flag *f = (Flag *)arg;
  sleep_ms(50);
  __atomic_store_n(&f->flag, 1, __ATOMIC_RELEASE);
}

void host_observe(void *arg) {
  Flag *f = (Flag *)arg;
  f->observed = __atomic_load_n(&f->flag, __ATOMIC_ACQUIRE);
}

void host_count(void *arg) { __atomic_add_fetch((int *)arg, 1, __ATOMIC_RELAXED); }

/* As if SIGINT arrived while the task ran (and made it fail early). */
void host_note_interrupt(void *arg) {
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
