/*
 * Symmetric windows, memory ranges and activated memory of libhccl:
 *
 *   window_check windows RANK NRANKS ROOTFILE   semantics and every bad input
 *   window_check partial RANK NRANKS ROOTFILE HOW
 *       the last rank does not register: it calls HcclAllReduce instead (HOW
 *       "other") or destroys its communicator (HOW "destroy"); every rank must
 *       fail within seconds with a message that says what happened
 */
#define _DEFAULT_SOURCE
#include "rank_check.h"

#define MIB ((size_t)1 << 20)
#define GRAN (2 * MIB)

struct Vm {
  void *base;              /* reservation of 4 granules */
  aclrtDrvMemHandle phys;  /* 2 granules mapped at base */
  aclrtDrvMemHandle phys2; /* 1 granule mapped at base + 2 granules */
};

static void vm_make(struct Vm *vm) {
  aclrtPhysicalMemProp prop;
  memset(&prop, 0, sizeof(prop));
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  ACL_OK(aclrtReserveMemAddress(&vm->base, 4 * GRAN, 0, NULL, 0));
  ACL_OK(aclrtMallocPhysical(&vm->phys, 2 * GRAN, &prop, 0));
  ACL_OK(aclrtMallocPhysical(&vm->phys2, GRAN, &prop, 0));
  ACL_OK(aclrtMapMem(vm->base, 2 * GRAN, 0, vm->phys, 0));
  ACL_OK(aclrtMapMem((char *)vm->base + 2 * GRAN, GRAN, 0, vm->phys2, 0));
}

static void vm_free(struct Vm *vm) {
  ACL_OK(aclrtUnmapMem(vm->base));
  ACL_OK(aclrtUnmapMem((char *)vm->base + 2 * GRAN));
  ACL_OK(aclrtFreePhysical(vm->phys));
  ACL_OK(aclrtFreePhysical(vm->phys2));
  ACL_OK(aclrtReleaseMemAddress(vm->base));
}

static void sync_ok(aclrtStream s, const char *what) {
  aclError e = aclrtSynchronizeStream(s);
  CHECK(e == ACL_SUCCESS, "%s: synchronize -> %d", what, (int)e);
}

/* AllReduce (sum of rank + 1 + i % 5) of n int32 at send into recv, checked. */
static void allreduce_ok(HcclComm comm, aclrtStream s, int32_t *send, int32_t *recv, uint64_t n,
                         const char *what) {
  int32_t *host = malloc(n * 4 + 4);
  for (uint64_t i = 0; i < n; ++i) host[i] = g_rank + 1 + (int32_t)(i % 5);
  ACL_OK(aclrtMemcpy(send, n * 4, host, n * 4, ACL_MEMCPY_HOST_TO_DEVICE));
  HCCL_OK(HcclAllReduce(send, recv, n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
  sync_ok(s, what);
  ACL_OK(aclrtMemcpy(host, n * 4, recv, n * 4, ACL_MEMCPY_DEVICE_TO_HOST));
  int bad = 0;
  for (uint64_t i = 0; i < n && !bad; ++i)
    bad = host[i] != g_n * (g_n + 1) / 2 + g_n * (int32_t)(i % 5);
  CHECK(!bad, "%s: wrong AllReduce result", what);
  free(host);
}

static void allgather_ok(HcclComm comm, aclrtStream s, uint8_t *send, uint8_t *recv, uint64_t n,
                         const char *what) {
  uint8_t *host = malloc(n * g_n + 1);
  for (uint64_t i = 0; i < n; ++i) host[i] = (uint8_t)(g_rank * 31 + i);
  ACL_OK(aclrtMemcpy(send, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE));
  HCCL_OK(HcclAllGather(send, recv, n, HCCL_DATA_TYPE_FP8E4M3, comm, s));
  sync_ok(s, what);
  ACL_OK(aclrtMemcpy(host, n * g_n, recv, n * g_n, ACL_MEMCPY_DEVICE_TO_HOST));
  int bad = 0;
  for (int p = 0; p < g_n; ++p)
    for (uint64_t i = 0; i < n && !bad; ++i) bad = host[p * n + i] != (uint8_t)(p * 31 + i);
  CHECK(!bad, "%s: wrong AllGather result", what);
  free(host);
}

/* Registration with bad arguments on one rank fails on every rank, naming it. */
static void bad_registrations(HcclComm comm, struct Vm *vm, void *malloced) {
  HcclCommSymWindow w = NULL;
  int last = g_n - 1;
  char host_mem[64];
  HCCL_FAILS(HcclCommSymWinRegister(comm, vm->base, GRAN, &w, g_rank == 0 ? 0 : 1), HCCL_E_PARA,
             "rank 0: flag (0) must be 1");
  HCCL_FAILS(HcclCommSymWinRegister(comm, vm->base, g_rank == last ? 0 : GRAN, &w, 1), HCCL_E_PARA,
             "must be between 1 and hcclSymWinMaxMemSizePerRank (1 GB)");
  HCCL_FAILS(HcclCommSymWinRegister(comm, vm->base, (2ull << 30), &w, 1), HCCL_E_PARA,
             "hcclSymWinMaxMemSizePerRank");
  if (g_n > 1)
    HCCL_FAILS(HcclCommSymWinRegister(comm, vm->base, g_rank == 0 ? GRAN : 2 * GRAN, &w, 1),
               HCCL_E_PARA, "window sizes differ between ranks");
  HCCL_FAILS(HcclCommSymWinRegister(comm, g_rank == last ? malloced : vm->base, 4096, &w, 1),
             HCCL_E_PARA, "is aclrtMalloc memory");
  HCCL_FAILS(HcclCommSymWinRegister(comm, g_rank == 0 ? (void *)host_mem : vm->base, 64, &w, 1),
             HCCL_E_PARA, "rank 0: addr");
  /* The first mapping is 2 granules: 3 run past it (into the next mapping). */
  HCCL_FAILS(HcclCommSymWinRegister(comm, vm->base, 3 * GRAN, &w, 1), HCCL_E_PARA,
             "is not inside one aclrtMapMem mapping");
  HCCL_FAILS(HcclCommSymWinRegister(comm, (char *)vm->base + 3 * GRAN, GRAN, &w, 1), HCCL_E_PARA,
             "not inside one aclrtMapMem mapping");
  HCCL_FAILS(HcclCommSymWinRegister(comm, g_rank == last ? NULL : vm->base, GRAN,
                                    g_rank == 0 ? NULL : &w, 1),
             HCCL_E_PARA, "winHandle is NULL");
  HCCL_FAILS(HcclCommSymWinRegister(NULL, vm->base, GRAN, &w, 1), HCCL_E_PTR, "comm is NULL");
}

/* A call refused by its checks holds nothing: the mapping it named can be unmapped
   at once (a refused AllReduce once left its buffers pinned, "in use by 2 queued or
   running task(s)"). Every call below has its mapped buffers checked (and pinned)
   before a later check, or the stream look-up, refuses it. Freed aclrtMalloc
   memory is refused by every collective, as by aclrtMemcpy. Every rank passes the
   same bad arguments, so none waits. */
static void refused_calls(HcclComm comm, aclrtStream s) {
  struct Vm vm;
  vm_make(&vm);
  char *base = vm.base;
  const HcclDataType i8 = HCCL_DATA_TYPE_INT8;
  const char *ov = "overlap but are not in place";
  uint64_t *counts = malloc(2 * g_n * sizeof(uint64_t)), *displs = counts + g_n;
  for (int i = 0; i < g_n; ++i) {
    counts[i] = 16;
    displs[i] = 16 * (uint64_t)i;
  }
  HCCL_FAILS(HcclAllReduce(base, base + 64, 1000, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s),
             HCCL_E_PARA, ov);
  HCCL_FAILS(HcclAllGather(base, base + 8, 64, i8, comm, s), HCCL_E_PARA, ov);
  HCCL_FAILS(HcclReduceScatter(base, base + 8, 16, i8, HCCL_REDUCE_SUM, comm, s), HCCL_E_PARA, ov);
  /* Every rank is the root of its own refused call: nothing is queued anywhere. */
  HCCL_FAILS(HcclReduce(base, base + 8, 16, i8, HCCL_REDUCE_SUM, g_rank, comm, s), HCCL_E_PARA, ov);
  HCCL_FAILS(HcclScatter(base, base + 8, 16, i8, g_rank, comm, s), HCCL_E_PARA, ov);
  HCCL_FAILS(HcclAlltoAll(base, 16, i8, base + 8, 16, i8, comm, s), HCCL_E_PARA, ov);
  HCCL_FAILS(HcclAlltoAllV(base, counts, displs, i8, base + 8, counts, displs, i8, comm, s),
             HCCL_E_PARA, ov);
  HCCL_FAILS(HcclAllGatherV(base, 16, base + 8, counts, displs, i8, comm, s), HCCL_E_PARA, ov);
  HCCL_FAILS(HcclReduceScatterV(base, counts, displs, base + 8, 16, i8, HCCL_REDUCE_SUM, comm, s),
             HCCL_E_PARA, ov);
  HcclSendRecvItem items[2] = {{HCCL_SEND, base, 16, i8, 0},
                               {HCCL_RECV, base + 64, 16, i8, (uint32_t)g_n}};
  HCCL_FAILS(HcclBatchSendRecv(items, 2, comm, s), HCCL_E_PARA, "must be below");
  /* Inside a group too, the refused call holds nothing and adds nothing. */
  HCCL_OK(HcclGroupStart());
  HCCL_FAILS(HcclAllGather(base, base + 8, 64, i8, comm, s), HCCL_E_PARA, ov);
  HCCL_OK(HcclGroupEnd());
  /* Arguments that pass, refused by the stream look-up (the stream is gone). */
  aclrtStream dead;
  ACL_OK(aclrtCreateStream(&dead));
  ACL_OK(aclrtDestroyStream(dead));
  HCCL_FAILS(HcclAllReduce(base, base + GRAN, 16, i8, HCCL_REDUCE_SUM, comm, dead), HCCL_E_PARA,
             "is not a live stream");
  free(counts);
  vm_free(&vm);  /* must not fail "in use": nothing was queued */

  void *freed = NULL;
  ACL_OK(aclrtMalloc(&freed, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  ACL_OK(aclrtFree(freed));
  const char *want = "is not inside a live aclrtMalloc allocation (freed?)";
  HCCL_FAILS(HcclAllReduce(freed, freed, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s),
             HCCL_E_PARA, want);
  HCCL_FAILS(HcclBroadcast(freed, 16, HCCL_DATA_TYPE_FP32, 0, comm, s), HCCL_E_PARA, want);
  HCCL_FAILS(HcclReduce(freed, freed, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, s),
             HCCL_E_PARA, want);
  HCCL_FAILS(HcclAllGather(freed, (char *)freed + 64 * g_rank, 16, HCCL_DATA_TYPE_INT32, comm, s),
             HCCL_E_PARA, want);
  HCCL_FAILS(HcclSend(freed, 16, HCCL_DATA_TYPE_FP32, 0, comm, s), HCCL_E_PARA, want);
  HCCL_FAILS(HcclRecv(freed, 16, HCCL_DATA_TYPE_FP32, 0, comm, s), HCCL_E_PARA, want);
  sync_ok(s, "after the refused calls");
}

static void run_windows(const char *rootfile) {
  aclrtStream s;
  ACL_OK(aclrtCreateStream(&s));
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  cfg.hcclSymWinMaxMemSizePerRank = 1;
  HcclComm comm = init_comm(rootfile, &cfg);
  struct Vm vm;
  vm_make(&vm);
  void *malloced = NULL;
  ACL_OK(aclrtMalloc(&malloced, GRAN, ACL_MEM_MALLOC_HUGE_FIRST));

  bad_registrations(comm, &vm, malloced);
  refused_calls(comm, s);
  /* The communicator still works after the refused registrations. */
  allreduce_ok(comm, s, malloced, malloced, 1000, "AllReduce after refused registrations");

  /* Two windows: the first granule of the first mapping, and the second mapping. */
  HcclCommSymWindow w1 = NULL, w2 = NULL, w3 = NULL;
  char *base = vm.base;
  HCCL_OK(HcclCommSymWinRegister(comm, base, GRAN, &w1, 1));
  HCCL_OK(HcclCommSymWinRegister(comm, base + 2 * GRAN, GRAN, &w2, 1));
  CHECK(w1 != NULL && w2 != NULL && w1 != w2, "window handles");
  HCCL_FAILS(HcclCommSymWinRegister(comm, base + MIB, GRAN, &w3, 1), HCCL_E_PARA,
             "overlaps the window registered at");
  /* Registered memory cannot be unmapped, so neither freed nor released. */
  CHECK(aclrtUnmapMem(base) == ACL_ERROR_INVALID_PARAM &&
            strstr(aclGetRecentErrMsg(), "HCCL registration") != NULL,
        "aclrtUnmapMem of a window must fail");
  CHECK(aclrtFreePhysical(vm.phys) != ACL_SUCCESS, "aclrtFreePhysical of a window's memory");
  CHECK(aclrtReleaseMemAddress(base) != ACL_SUCCESS, "aclrtReleaseMemAddress under a window");

  /* Collectives inside windows (any size, in place too), across two windows,
   * and with this rank's buffer outside while the others' are inside. */
  int32_t *a = (int32_t *)base, *b = (int32_t *)(base + MIB);
  allreduce_ok(comm, s, a, b, 1, "AllReduce 1 element in a window");
  allreduce_ok(comm, s, a + 3, b + 5, 100003, "AllReduce in a window");
  allreduce_ok(comm, s, b, b, 77, "AllReduce in place in a window");
  allgather_ok(comm, s, (uint8_t *)base, (uint8_t *)base + 2 * GRAN, 4099, "AllGather across windows");
  allgather_ok(comm, s, (uint8_t *)base + 2 * GRAN + g_rank * 513, (uint8_t *)base + 2 * GRAN, 513,
               "AllGather in place in a window");
  int32_t *outside = (int32_t *)(base + GRAN);  /* mapped, not registered */
  allreduce_ok(comm, s, g_rank == 0 ? outside : a, g_rank == 0 ? outside : b, 4097,
               "AllReduce with rank 0 outside the windows");
  allreduce_ok(comm, s, malloced, (int32_t *)malloced + 5000, 3000, "AllReduce on aclrtMalloc memory");

  /* Deregistration: collective; ranks must name the same window. */
  if (g_n > 1)
    HCCL_FAILS(HcclCommSymWinDeregister(g_rank == 0 ? w2 : w1), HCCL_E_PARA,
               "every rank must deregister the same window");
  HCCL_OK(HcclCommSymWinDeregister(w1));
  HCCL_FAILS(HcclCommSymWinDeregister(w1), HCCL_E_PARA, "is not a registered window");
  HCCL_FAILS(HcclCommSymWinDeregister(NULL), HCCL_E_PTR, "winHandle is NULL");
  allreduce_ok(comm, s, a, b, 1000, "AllReduce after deregistration");
  HCCL_OK(HcclCommSymWinDeregister(w2));

  /* Memory ranges and activated memory. */
  HCCL_FAILS(HcclCommSetMemoryRange(comm, base + GRAN, GRAN, 0, 0), HCCL_E_PARA,
             "is not the start of a range reserved");
  HCCL_FAILS(HcclCommSetMemoryRange(comm, base, 5 * GRAN, 0, 0), HCCL_E_PARA, "exceeds the reservation");
  HCCL_FAILS(HcclCommSetMemoryRange(comm, base, 4 * GRAN, 1, 0), HCCL_E_PARA, "alignment (1) must be 0");
  HCCL_FAILS(HcclCommSetMemoryRange(comm, base, 4 * GRAN, 0, 2), HCCL_E_PARA, "flags (2) must be 0");
  HCCL_FAILS(HcclCommSetMemoryRange(comm, NULL, GRAN, 0, 0), HCCL_E_PTR, "baseVirPtr is NULL");
  HCCL_FAILS(HcclCommActivateCommMemory(comm, base, 2 * GRAN, 0, vm.phys, 0), HCCL_E_PARA,
             "is not inside a memory range");
  HCCL_OK(HcclCommSetMemoryRange(comm, base, 3 * GRAN, 0, 0));
  HCCL_FAILS(HcclCommSetMemoryRange(comm, base, 4 * GRAN, 0, 0), HCCL_E_PARA, "overlaps the memory range");
  HCCL_FAILS(HcclCommActivateCommMemory(comm, base, 2 * GRAN, 0, vm.phys2, 0), HCCL_E_PARA,
             "is not the physical memory mapped at");
  HCCL_FAILS(HcclCommActivateCommMemory(comm, base + MIB, GRAN, 0, vm.phys, 0), HCCL_E_PARA,
             "pass the address given to aclrtMapMem");
  HCCL_FAILS(HcclCommActivateCommMemory(comm, base, 3 * GRAN, 0, vm.phys, 0), HCCL_E_PARA,
             "exceeds the mapping");
  HCCL_FAILS(HcclCommActivateCommMemory(comm, base + 3 * GRAN, GRAN, 0, vm.phys, 0), HCCL_E_PARA,
             "nothing is mapped at");
  HCCL_FAILS(HcclCommActivateCommMemory(comm, base, 2 * GRAN, 4, vm.phys, 0), HCCL_E_PARA,
             "offset (4) must be 0");
  HCCL_OK(HcclCommActivateCommMemory(comm, base, 2 * GRAN, 0, vm.phys, 0));
  HCCL_FAILS(HcclCommActivateCommMemory(comm, base, GRAN, 0, vm.phys, 0), HCCL_E_PARA,
             "overlaps memory already activated");
  CHECK(aclrtUnmapMem(base) == ACL_ERROR_INVALID_PARAM, "aclrtUnmapMem of activated memory must fail");
  HCCL_FAILS(HcclCommUnsetMemoryRange(comm, base), HCCL_E_PARA, "is still activated");
  allreduce_ok(comm, s, a, outside, 300001, "AllReduce on activated memory");
  HCCL_OK(HcclCommDeactivateCommMemory(comm, base));
  HCCL_FAILS(HcclCommDeactivateCommMemory(comm, base), HCCL_E_PARA, "is not memory this communicator activated");
  HCCL_OK(HcclCommUnsetMemoryRange(comm, base));
  HCCL_FAILS(HcclCommUnsetMemoryRange(comm, base), HCCL_E_PARA, "no memory range was set");

  /* A window (and activated memory) goes with its communicator. */
  HCCL_OK(HcclCommSymWinRegister(comm, base, 2 * GRAN, &w3, 1));
  HCCL_OK(HcclCommSetMemoryRange(comm, base, 4 * GRAN, 0, 0));
  HCCL_OK(HcclCommActivateCommMemory(comm, base + 2 * GRAN, GRAN, 0, vm.phys2, 0));
  HCCL_OK(HcclCommDestroy(comm));
  HCCL_FAILS(HcclCommSymWinDeregister(w3), HCCL_E_PARA, "is not a registered window");
  vm_free(&vm);  /* unmaps: nothing is pinned any more */
  ACL_OK(aclrtFree(malloced));
  ACL_OK(aclrtDestroyStream(s));
}

/* The last rank never registers: every rank fails, with a message, quickly. */
static void run_partial(const char *rootfile, const char *how) {
  aclrtStream s;
  ACL_OK(aclrtCreateStream(&s));
  HcclComm comm = init_comm(rootfile, NULL);
  struct Vm vm;
  vm_make(&vm);
  double t0 = now_s();
  if (g_rank == g_n - 1) {
    if (strcmp(how, "destroy") == 0) {
      HCCL_OK(HcclCommDestroy(comm));
    } else {
      HCCL_OK(HcclAllReduce(vm.base, vm.base, 1000, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
      aclError e = aclrtSynchronizeStream(s);
      const char *m = aclGetRecentErrMsg();
      CHECK(e != ACL_SUCCESS && m && strstr(m, "HcclCommSymWinRegister"),
            "the rank that called HcclAllReduce must fail naming the registration: %d %s", (int)e, m);
      HCCL_OK(HcclCommDestroy(comm));
    }
  } else {
    HcclCommSymWindow w = NULL;
    HcclResult r = HcclCommSymWinRegister(comm, vm.base, GRAN, &w, 1);
    const char *m = aclGetRecentErrMsg();
    const char *want = strcmp(how, "destroy") == 0 ? "rank " : "HcclAllReduce";
    CHECK(r != HCCL_SUCCESS && m && strstr(m, want), "registration must fail naming %s: %d %s",
          want, (int)r, m);
    printf("rank %d: %s\n", g_rank, m ? m : "");
    HcclCommDestroy(comm);
  }
  CHECK(now_s() - t0 < bound(20), "took %.1f s", now_s() - t0);
  vm_free(&vm);
  ACL_OK(aclrtDestroyStream(s));
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s windows|partial RANK NRANKS ROOTFILE [HOW]\n", argv[0]);
    return 2;
  }
  g_rank = atoi(argv[2]);
  g_n = atoi(argv[3]);
  ACL_OK(aclrtSetDevice(0));
  if (strcmp(argv[1], "windows") == 0) run_windows(argv[4]);
  else if (strcmp(argv[1], "partial") == 0) run_partial(argv[4], argc > 5 ? argv[5] : "other");
  else return 2;
  return finish();
}
