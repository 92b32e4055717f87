/*
 * Exercises the ACL virtual memory API of libascendcl.so (the pyhccl host
 * runtime): aclrtReserveMemAddress / aclrtReleaseMemAddress,
 * aclrtMallocPhysical / aclrtFreePhysical, aclrtMapMem / aclrtUnmapMem and
 * aclrtMemGetAllocationGranularity, the copies on mapped memory and every bad
 * input. Prints "vmm ok" on success; any failed check prints its line and the
 * recent error message and exits 1.
 *
 *   gcc -std=c99 -Iinclude tests/c/vmm_check.c -Lbuild/lib -lascendcl -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      const char *m_ = aclGetRecentErrMsg();                                         \
      fprintf(stderr, "vmm_check.c:%d: CHECK(%s) failed (recent error: %s)\n",       \
              __LINE__, #cond, m_ ? m_ : "(none)");                                  \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)
#define OK(call) CHECK((call) == ACL_SUCCESS)
/* The call fails with `code` and leaves a message that contains `text`. */
#define FAILS(call, code, text)                                                      \
  do {                                                                               \
    aclError e_ = (call);                                                            \
    if (e_ != (code)) {                                                              \
      fprintf(stderr, "vmm_check.c:%d: %s returned %d, expected %d (%s)\n",          \
              __LINE__, #call, e_, (int)(code), #code);                              \
      exit(1);                                                                       \
    }                                                                                \
    const char *m_ = aclGetRecentErrMsg();                                           \
    if (m_ == NULL || strstr(m_, text) == NULL) {                                    \
      fprintf(stderr, "vmm_check.c:%d: message of %s lacks \"%s\": %s\n", __LINE__,  \
              #call, text, m_ ? m_ : "(none)");                                      \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#define MIB ((size_t)1 << 20)
#define GRAN (2 * MIB)

static void sleep_ms(void *arg) {
  long ms = (long)(intptr_t)arg;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static aclrtPhysicalMemProp device_prop(uint32_t dev) {
  aclrtPhysicalMemProp p;
  memset(&p, 0, sizeof p);
  p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  p.memAttr = ACL_HBM_MEM_HUGE;
  p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  return p;
}

static void check_granularity(void) {
  aclrtPhysicalMemProp prop = device_prop(0);
  size_t g = 0;
  OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
  CHECK(g == GRAN);
  g = 0;
  OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g));
  CHECK(g == GRAN);
  const char *api = "aclrtMemGetAllocationGranularity";
  FAILS(aclrtMemGetAllocationGranularity(NULL, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
        ACL_ERROR_INVALID_PARAM, api);
  FAILS(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, NULL),
        ACL_ERROR_INVALID_PARAM, "granularity is NULL");
  FAILS(aclrtMemGetAllocationGranularity(&prop, (aclrtMemGranularityOptions)7, &g),
        ACL_ERROR_INVALID_PARAM, "option (7)");
  prop.location.type = (aclrtMemLocationType)5;
  FAILS(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
        ACL_ERROR_INVALID_PARAM, "prop->location.type (5)");
}

static void check_physical_args(void) {
  const char *api = "aclrtMallocPhysical";
  aclrtPhysicalMemProp prop = device_prop(0);
  aclrtDrvMemHandle h = NULL;
  FAILS(aclrtMallocPhysical(NULL, GRAN, &prop, 0), ACL_ERROR_INVALID_PARAM, "handle is NULL");
  FAILS(aclrtMallocPhysical(&h, 0, &prop, 0), ACL_ERROR_INVALID_PARAM, "size is 0");
  FAILS(aclrtMallocPhysical(&h, GRAN + 4096, &prop, 0), ACL_ERROR_INVALID_PARAM,
        "not a multiple of the allocation granularity");
  FAILS(aclrtMallocPhysical(&h, GRAN, NULL, 0), ACL_ERROR_INVALID_PARAM, "prop is NULL");
  FAILS(aclrtMallocPhysical(&h, GRAN, &prop, 1), ACL_ERROR_INVALID_PARAM, "flags (1)");
  prop.handleType = (aclrtMemHandleType)3;
  FAILS(aclrtMallocPhysical(&h, GRAN, &prop, 0), ACL_ERROR_INVALID_PARAM, "prop->handleType");
  prop = device_prop(0);
  prop.allocationType = (aclrtMemAllocationType)1;
  FAILS(aclrtMallocPhysical(&h, GRAN, &prop, 0), ACL_ERROR_INVALID_PARAM,
        "prop->allocationType");
  prop = device_prop(0);
  prop.memAttr = (aclrtMemAttr)99;
  FAILS(aclrtMallocPhysical(&h, GRAN, &prop, 0), ACL_ERROR_INVALID_PARAM, "prop->memAttr (99)");
  prop = device_prop(100000);
  FAILS(aclrtMallocPhysical(&h, GRAN, &prop, 0), ACL_ERROR_INVALID_PARAM,
        "prop->location.id (100000)");
  /* Host location: the id is not used. */
  prop = device_prop(12345);
  prop.location.type = ACL_MEM_LOCATION_TYPE_HOST;
  OK(aclrtMallocPhysical(&h, GRAN, &prop, 0));
  OK(aclrtFreePhysical(h));
  (void)api;

  FAILS(aclrtFreePhysical(NULL), ACL_ERROR_INVALID_PARAM, "aclrtFreePhysical: handle is NULL");
  FAILS(aclrtFreePhysical(h), ACL_ERROR_RT_INVALID_HANDLE, "aclrtFreePhysical"); /* double */
  FAILS(aclrtFreePhysical((aclrtDrvMemHandle)(uintptr_t)0x1234), ACL_ERROR_RT_INVALID_HANDLE,
        "not live physical memory");
}

static void check_reserve_args(void) {
  const char *api = "aclrtReserveMemAddress";
  void *v = NULL, *w = NULL;
  FAILS(aclrtReserveMemAddress(NULL, GRAN, 0, NULL, 0), ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
  FAILS(aclrtReserveMemAddress(&v, 0, 0, NULL, 0), ACL_ERROR_INVALID_PARAM, "size is 0");
  FAILS(aclrtReserveMemAddress(&v, GRAN, 0, NULL, 2), ACL_ERROR_INVALID_PARAM, "flags (2)");
  FAILS(aclrtReserveMemAddress(&v, GRAN, 3, NULL, 0), ACL_ERROR_INVALID_PARAM, "alignment (3)");
  FAILS(aclrtReserveMemAddress(&v, GRAN, (size_t)1 << 40, NULL, 0), ACL_ERROR_INVALID_PARAM,
        "alignment");
  FAILS(aclrtReserveMemAddress(&v, (size_t)1 << 50, 0, NULL, 0), ACL_ERROR_RT_MEMORY_ALLOCATION,
        api);
  /* Granularity aligned; huge pages accepted; a larger power-of-two alignment is honoured. */
  OK(aclrtReserveMemAddress(&v, 3 * MIB, 0, NULL, 1));
  CHECK(v != NULL && ((uintptr_t)v % GRAN) == 0);
  OK(aclrtReserveMemAddress(&w, GRAN, 64 * MIB, NULL, 0));
  CHECK(((uintptr_t)w % (64 * MIB)) == 0);
  OK(aclrtReleaseMemAddress(w));
  /* expectPtr: a free aligned address is honoured, a used or misaligned one refused. */
  FAILS(aclrtReserveMemAddress(&w, GRAN, 0, v, 0), ACL_ERROR_RT_MEMORY_ALLOCATION, "in use");
  FAILS(aclrtReserveMemAddress(&w, GRAN, 0, (char *)v + 4096, 0), ACL_ERROR_INVALID_PARAM,
        "expectPtr");
  OK(aclrtReleaseMemAddress(v));
  OK(aclrtReserveMemAddress(&w, GRAN, 0, v, 0));
  CHECK(w == v);
  FAILS(aclrtReleaseMemAddress((char *)w + GRAN / 2), ACL_ERROR_INVALID_PARAM,
        "not the start of a range");
  OK(aclrtReleaseMemAddress(w));
  FAILS(aclrtReleaseMemAddress(w), ACL_ERROR_INVALID_PARAM, "aclrtReleaseMemAddress"); /* double */
  FAILS(aclrtReleaseMemAddress(NULL), ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
}

static void check_map_args(void) {
  const char *api = "aclrtMapMem";
  aclrtPhysicalMemProp prop = device_prop(0);
  void *v = NULL;
  aclrtDrvMemHandle h4 = NULL, h2 = NULL;
  OK(aclrtReserveMemAddress(&v, 8 * MIB, 0, NULL, 0));
  OK(aclrtMallocPhysical(&h4, 4 * MIB, &prop, 0));
  OK(aclrtMallocPhysical(&h2, GRAN, &prop, 0));
  char *b = (char *)v;
  FAILS(aclrtMapMem(NULL, GRAN, 0, h2, 0), ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
  FAILS(aclrtMapMem(b, GRAN, 0, NULL, 0), ACL_ERROR_INVALID_PARAM, "handle is NULL");
  FAILS(aclrtMapMem(b, GRAN, 0, (aclrtDrvMemHandle)(uintptr_t)0x77, 0),
        ACL_ERROR_RT_INVALID_HANDLE, api);
  FAILS(aclrtMapMem(b, 0, 0, h2, 0), ACL_ERROR_INVALID_PARAM, "size is 0");
  FAILS(aclrtMapMem(b, 4 * MIB, 0, h2, 0), ACL_ERROR_INVALID_PARAM, "must equal the size");
  FAILS(aclrtMapMem(b, GRAN, GRAN, h2, 0), ACL_ERROR_INVALID_PARAM, "offset");
  FAILS(aclrtMapMem(b, GRAN, 0, h2, 1), ACL_ERROR_INVALID_PARAM, "flags (1)");
  FAILS(aclrtMapMem(b + 4096, GRAN, 0, h2, 0), ACL_ERROR_INVALID_PARAM, "not aligned");
  FAILS(aclrtMapMem((void *)(uintptr_t)GRAN, GRAN, 0, h2, 0), ACL_ERROR_INVALID_PARAM,
        "not inside a range reserved");
  FAILS(aclrtMapMem(b + 6 * MIB, 4 * MIB, 0, h4, 0), ACL_ERROR_INVALID_PARAM,
        "runs past the end of its reservation");
  /* Overlaps, from either side. */
  OK(aclrtMapMem(b + 2 * MIB, 4 * MIB, 0, h4, 0));
  FAILS(aclrtMapMem(b + 2 * MIB, GRAN, 0, h2, 0), ACL_ERROR_INVALID_PARAM, "overlaps");
  FAILS(aclrtMapMem(b + 4 * MIB, GRAN, 0, h2, 0), ACL_ERROR_INVALID_PARAM, "overlaps");
  OK(aclrtMapMem(b, GRAN, 0, h2, 0)); /* adjacent: fine */
  /* Freeing or releasing what is still mapped is refused. */
  FAILS(aclrtFreePhysical(h4), ACL_ERROR_INVALID_PARAM, "still mapped");
  FAILS(aclrtReleaseMemAddress(v), ACL_ERROR_INVALID_PARAM, "still has 2 mapping(s)");
  /* aclrtFree knows nothing of mapped memory. */
  FAILS(aclrtFree(b), ACL_ERROR_INVALID_PARAM, "aclrtFree");
  /* Unmapping: only the start of a mapping. */
  FAILS(aclrtUnmapMem(NULL), ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
  FAILS(aclrtUnmapMem(b + 6 * MIB), ACL_ERROR_INVALID_PARAM, "not the start of a mapping");
  FAILS(aclrtUnmapMem(b + 3 * MIB), ACL_ERROR_INVALID_PARAM, "not the start of a mapping");
  int local = 0;
  FAILS(aclrtUnmapMem(&local), ACL_ERROR_INVALID_PARAM, "not inside a range reserved");
  OK(aclrtUnmapMem(b + 2 * MIB));
  FAILS(aclrtUnmapMem(b + 2 * MIB), ACL_ERROR_INVALID_PARAM, "not the start of a mapping");
  OK(aclrtUnmapMem(b));
  OK(aclrtFreePhysical(h4));
  OK(aclrtFreePhysical(h2));
  OK(aclrtReleaseMemAddress(v));
}

/* Copies on mapped memory: [b, +2 MiB) mapped, [b + 2 MiB, +2 MiB) a hole,
 * [b + 4 MiB, +4 MiB) mapped. */
static void check_copies(void) {
  aclrtPhysicalMemProp prop = device_prop(0);
  void *v = NULL;
  aclrtDrvMemHandle ha = NULL, hb = NULL;
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s));
  OK(aclrtReserveMemAddress(&v, 8 * MIB, 0, NULL, 0));
  OK(aclrtMallocPhysical(&ha, GRAN, &prop, 0));
  OK(aclrtMallocPhysical(&hb, 4 * MIB, &prop, 0));
  char *b = (char *)v, *hole = b + 2 * MIB, *c = b + 4 * MIB;
  OK(aclrtMapMem(b, GRAN, 0, ha, 0));
  OK(aclrtMapMem(c, 4 * MIB, 0, hb, 0));

  unsigned char *host = malloc(4 * MIB), *back = malloc(4 * MIB);
  CHECK(host != NULL && back != NULL);
  for (size_t i = 0; i < 4 * MIB; ++i) host[i] = (unsigned char)(i * 31 + 7);
  /* Sync and async, whole mapping and up to its last byte. */
  OK(aclrtMemcpy(c, 4 * MIB, host, 4 * MIB, ACL_MEMCPY_HOST_TO_DEVICE));
  OK(aclrtMemcpy(back, 4 * MIB, c, 4 * MIB, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(back, host, 4 * MIB) == 0);
  OK(aclrtMemsetAsync(b, GRAN, 0x5a, GRAN, s));
  OK(aclrtMemcpyAsync(c + 100, GRAN - 100, b + 100, GRAN - 100, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
  OK(aclrtSynchronizeStream(s));
  OK(aclrtMemcpy(back, 4 * MIB, c, 4 * MIB, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < 100; ++i) CHECK(back[i] == host[i]);
  for (size_t i = 100; i < GRAN; ++i) CHECK(back[i] == 0x5a);
  CHECK(back[GRAN] == host[GRAN]);
  OK(aclrtMemset(c + 4 * MIB - 1, 1, 0x11, 1));
  CHECK((unsigned char)c[4 * MIB - 1] == 0x11); /* host runtime: device memory is addressable */

  /* The hole is no memory: every copy into or out of it fails, none crashes. */
  const char *hole_msg = "no memory mapped there";
  FAILS(aclrtMemcpy(hole, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM,
        hole_msg);
  FAILS(aclrtMemcpy(back, 64, hole + 4096, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM,
        hole_msg);
  FAILS(aclrtMemset(hole, 64, 0, 64), ACL_ERROR_INVALID_PARAM, hole_msg);
  FAILS(aclrtMemsetAsync(hole, 64, 0, 64, s), ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync");
  FAILS(aclrtMemcpyAsync(hole, 64, b, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM,
        "aclrtMemcpyAsync: dst");
  /* A range may not run past its mapping (into the hole, or from one mapping into the next). */
  FAILS(aclrtMemcpy(b + GRAN - 8, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE),
        ACL_ERROR_INVALID_PARAM, "runs past the end of its mapping (8 bytes left)");
  FAILS(aclrtMemcpy(c + 4 * MIB - 8, 9, host, 9, ACL_MEMCPY_HOST_TO_DEVICE),
        ACL_ERROR_INVALID_PARAM, "runs past the end of its mapping");
  OK(aclrtMemcpy(b, 0, hole, 0, ACL_MEMCPY_DEVICE_TO_DEVICE)); /* empty copy touches nothing */

  /* Unmapping memory in use: a queued async copy pins its mapping. */
  OK(aclrtLaunchHostFunc(s, sleep_ms, (void *)(intptr_t)200));
  OK(aclrtMemcpyAsync(c, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s));
  FAILS(aclrtUnmapMem(c), ACL_ERROR_INVALID_PARAM, "in use by 1 queued or running task(s)");
  OK(aclrtSynchronizeStream(s));
  OK(aclrtUnmapMem(c));
  /* Unmapped again: copies fail cleanly; the space can be mapped anew. */
  FAILS(aclrtMemcpy(c, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, hole_msg);
  OK(aclrtMapMem(c, 4 * MIB, 0, hb, 0));
  OK(aclrtMemcpy(back, 64, c, 64, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK(memcmp(back, host, 64) == 0); /* the physical memory kept its bytes */

  /* One physical handle mapped twice: both views share the bytes. */
  void *v2 = NULL;
  OK(aclrtReserveMemAddress(&v2, 4 * MIB, 0, NULL, 0));
  OK(aclrtMapMem(v2, 4 * MIB, 0, hb, 0));
  OK(aclrtMemset(v2, 4 * MIB, 0x42, 4096));
  OK(aclrtMemcpy(back, 4096, c, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
  for (int i = 0; i < 4096; ++i) CHECK(back[i] == 0x42);
  FAILS(aclrtFreePhysical(hb), ACL_ERROR_INVALID_PARAM, "still mapped (2 mapping(s))");
  OK(aclrtUnmapMem(v2));
  OK(aclrtReleaseMemAddress(v2));

  /* Mapped memory is shared memory: a fork child's writes reach the parent. */
  OK(aclrtMemset(b, GRAN, 0, GRAN));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    memset(b, 0xcd, 4096);
    _exit(0);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK((unsigned char)b[0] == 0xcd && (unsigned char)b[4095] == 0xcd);

  OK(aclrtUnmapMem(b));
  OK(aclrtUnmapMem(c));
  OK(aclrtFreePhysical(ha));
  OK(aclrtFreePhysical(hb));
  OK(aclrtReleaseMemAddress(v));
  OK(aclrtDestroyStream(s));
  free(host);
  free(back);
}

/* One thread copies into a mapping while another unmaps and remaps it: each
 * copy either runs on mapped memory or fails cleanly, never faults. */
typedef struct {
  char *at;
  volatile int stop;
  int ok, refused;
} Hammer;

static void *copy_loop(void *arg) {
  Hammer *h = (Hammer *)arg;
  static unsigned char src[1 << 16];
  while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
    aclError e = aclrtMemcpy(h->at, sizeof src, src, sizeof src, ACL_MEMCPY_HOST_TO_DEVICE);
    if (e == ACL_SUCCESS) {
      __atomic_fetch_add(&h->ok, 1, __ATOMIC_RELAXED);
    } else {
      CHECK(e == ACL_ERROR_INVALID_PARAM);
      __atomic_fetch_add(&h->refused, 1, __ATOMIC_RELAXED);
    }
  }
  return NULL;
}

static void check_concurrent_unmap(void) {
  aclrtPhysicalMemProp prop = device_prop(0);
  void *v = NULL;
  aclrtDrvMemHandle h = NULL;
  OK(aclrtReserveMemAddress(&v, GRAN, 0, NULL, 0));
  OK(aclrtMallocPhysical(&h, GRAN, &prop, 0));
  OK(aclrtMapMem(v, GRAN, 0, h, 0));
  Hammer hm = {(char *)v, 0, 0, 0};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, copy_loop, &hm) == 0);
  int unmapped = 0, busy = 0;
  /* At least 3000 rounds, and on a loaded machine until both sides got a turn (10 s at most). */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0;; ++i) {
    int both = unmapped > 0 && __atomic_load_n(&hm.ok, __ATOMIC_RELAXED) +
                                       __atomic_load_n(&hm.refused, __ATOMIC_RELAXED) > 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((i >= 3000 && both) || now.tv_sec - t0.tv_sec > 10) break;
    aclError e = aclrtUnmapMem(v);
    if (e == ACL_SUCCESS) {
      ++unmapped;
      if (i % 16 == 0) { /* leave the hole open a moment: copies meet it */
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
      }
      OK(aclrtMapMem(v, GRAN, 0, h, 0));
    } else {
      CHECK(e == ACL_ERROR_INVALID_PARAM && strstr(aclGetRecentErrMsg(), "in use") != NULL);
      ++busy;
    }
  }
  __atomic_store_n(&hm.stop, 1, __ATOMIC_RELEASE);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(unmapped > 0 && hm.ok + hm.refused > 0);
  OK(aclrtUnmapMem(v));
  OK(aclrtFreePhysical(h));
  OK(aclrtReleaseMemAddress(v));
  (void)busy;
}

static int open_fds(void) {
  int n = 0;
  for (int fd = 0; fd < 65536; ++fd) n += fcntl(fd, F_GETFD) != -1;
  return n;
}

/* Many handles come and go: no descriptor or mapping leaks. */
static void check_churn(void) {
  aclrtPhysicalMemProp prop = device_prop(1);
  void *v = NULL;
  const int fds = open_fds();
  OK(aclrtReserveMemAddress(&v, 16 * MIB, 0, NULL, 0));
  for (int i = 0; i < 2000; ++i) {
    aclrtDrvMemHandle h = NULL;
    char *at = (char *)v + (size_t)(i % 8) * GRAN;
    OK(aclrtMallocPhysical(&h, GRAN, &prop, 0));
    OK(aclrtMapMem(at, GRAN, 0, h, 0));
    OK(aclrtMemset(at, GRAN, i & 0xff, 64));
    CHECK((unsigned char)at[63] == (unsigned char)(i & 0xff));
    OK(aclrtUnmapMem(at));
    OK(aclrtFreePhysical(h));
  }
  OK(aclrtReleaseMemAddress(v));
  CHECK(open_fds() == fds);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  OK(aclInit(NULL));
  OK(aclrtSetDevice(0));
  check_granularity();
  check_physical_args();
  check_reserve_args();
  check_map_args();
  check_copies();
  check_concurrent_unmap();
  check_churn();
  OK(aclrtResetDevice(0));
  OK(aclFinalize());
  puts("vmm ok");
  return 0;
}
