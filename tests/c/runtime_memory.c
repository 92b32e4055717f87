/*
 * runtime_check's memory and stream sections (part of runtime_check, see
 * runtime_check.c): allocations, copies and memsets, streams and their
 * ordering, with their error paths.
 */
#include "runtime_check.h"

void check_memory(void) {
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

void check_streams(void) {
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
