/*
 * hccl_check's fault modes (part of hccl_check, see hccl_check.c): a rank that is
 * killed, stays away, aborts, stops or comes late, and ranks that disagree
 * (mismatch, mismatch_v): the others must fail fast, not hang.
 */
#define RANK_CHECK_PART /* rank_check.h's counters live in hccl_check.c */
#include "hccl_check.h"

static void *suicide(void *arg) {
  usleep((useconds_t)(intptr_t)arg);
  raise(SIGKILL);
  return NULL;
}

/* The last rank dies (kill) or stays away (timeout); the others must get an error. */
int run_failure(HcclComm comm, aclrtStream s, int kill_mode, size_t n) {
  float *x = alloc(n * 4);
  for (size_t i = 0; i < n; ++i) x[i] = 1.0f;
  int victim = g_n - 1;
  if (g_rank == victim && !kill_mode) {
    sleep(6);
    HCCL_OK(HcclCommDestroy(comm));
    release(x);
    printf("rank %d: PASS stayed away\n", g_rank);
    return 0;
  }
  if (g_rank == victim) {  /* CHECK_KILL_DELAY_US: when (stress runs pick it at random) */
    const char *d = getenv("CHECK_KILL_DELAY_US");
    pthread_t th;
    pthread_create(&th, NULL, suicide, (void *)(intptr_t)(d ? atol(d) : 300000));
  }
  /* Stop-on-failure stream: the Barrier queued behind the AllReduce that
   * fails is dropped unrun, which must hang neither it nor HcclCommDestroy. */
  ACL_OK(aclrtSetStreamFailureMode(s, 1));
  double t0 = now_s();
  aclError e = ACL_SUCCESS;
  int iters = 0;
  int wrong = 0;
  while (e == ACL_SUCCESS && now_s() - t0 < 40) {
    for (size_t i = 0; i < n; ++i) x[i] = (float)(g_rank + 1);
    HcclResult r = HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, comm, s);
    if (r == HCCL_SUCCESS) r = HcclBarrier(comm, s);
    if (r != HCCL_SUCCESS) {
      e = ACL_ERROR_RT_INTERNAL_ERROR;
      break;
    }
    e = aclrtSynchronizeStream(s);
    for (size_t i = 0; e == ACL_SUCCESS && i < n; ++i) wrong += x[i] != (float)g_n;
    ++iters;
  }
  CHECK(wrong == 0, "%d wrong elements in collectives reported successful", wrong);
  double dt = now_s() - t0;
  HcclResult ae = HCCL_SUCCESS;
  HCCL_OK(HcclGetCommAsyncError(comm, &ae));
  CHECK(e != ACL_SUCCESS, "no error after %.1f s", dt);
  CHECK(ae == HCCL_E_TIMEOUT || ae == HCCL_E_REMOTE, "async error %d", (int)ae);
  CHECK(dt < bound(kill_mode ? 10.0 : 8.0), "error took %.1f s", dt);
  printf("rank %d: error %d async %d after %.2f s, %d iterations: %s\n", g_rank, (int)e, (int)ae,
         dt, iters, aclGetRecentErrMsg());
  /* Every survivor names the victim, also when it learnt of the failure from
     another survivor (it once named the relaying rank). */
  PyhcclOpError info;
  int32_t found = 0;
  if (e != ACL_ERROR_RT_INTERNAL_ERROR) {  /* the stream failed (not the enqueue) */
    HCCL_OK(PyhcclStreamTakeOpError(s, &info, &found));
    CHECK(found && info.rank == victim, "the failure names rank %d, not the victim %d (%s)",
          found ? info.rank : -2, victim, found ? info.message : "no op error");
  }
  /* Later collectives fail fast instead of waiting again. */
  double t1 = now_s();
  HcclResult r = HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, comm, s);
  if (r == HCCL_SUCCESS) e = aclrtSynchronizeStream(s);
  CHECK(r != HCCL_SUCCESS || e != ACL_SUCCESS, "second collective succeeded");
  CHECK(now_s() - t1 < bound(3.0), "second collective took %.1f s", now_s() - t1);
  release(x);
  double t2 = now_s();
  HCCL_OK(HcclCommDestroy(comm));
  CHECK(now_s() - t2 < bound(5.0), "HcclCommDestroy took %.1f s", now_s() - t2);
  if (g_fail == 0) printf("rank %d: PASS detected failure\n", g_rank);
  return g_fail != 0;
}

/* Rank 0 calls something else than the others (WHAT: another count, count 0,
 * a count on another algorithm (bigcount, bcastbig: board against FIFO
 * messages), another root, dtype or op, HcclSend instead of the collective, or a
 * send/receive pair with other dtypes; agbcast: rank 2 a Broadcast where the
 * others run an AllGather): every rank must fail quickly with
 * HCCL_E_PARA and a message that says what differs, not garbage or a hang. */
/* A stream task that holds its stream until *flag is set: the operations
 * queued behind it are all there when the first of them runs. */
static void hold_stream(void *flag) {
  while (!__atomic_load_n((volatile int *)flag, __ATOMIC_ACQUIRE)) usleep(1000);
}

/* Agreeing Broadcasts and Reduces, `n` of them, on 8 floats of y, root 1. */
static void queue_good(HcclComm comm, aclrtStream s, float *y, int n) {
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0) HCCL_OK(HcclBroadcast(y, 8, HCCL_DATA_TYPE_FP32, 1, comm, s));
    else HCCL_OK(HcclReduce(y, y + 8, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1, comm, s));
  }
}

int run_mismatch(HcclComm comm, aclrtStream s, const char *what) {
  /* Big enough for counts past the boards of small collectives (16 KiB), so
   * that rank 0 and the others run different algorithms. */
  static float x[1 << 16], y[16];
  for (int i = 0; i < 1 << 16; ++i) x[i] = 1.0f;
  double t0 = now_s();
  /* agbcast: rank 2 runs a Broadcast from rank 0 where the others run an
   * AllGather (on 4x1 hosts, recursive doubling between the leaders). */
  const int agbcast = strcmp(what, "agbcast") == 0;
  int odd = g_rank == (agbcast ? 2 : 0);
  const HcclDataType f32 = HCCL_DATA_TYPE_FP32;
  /* q-WHAT: WHAT between agreeing rooted collectives, all queued before the
   * first runs, so that each leaves its signature check to the next
   * (algo/tree.cc): the difference still fails every rank. */
  static int go;
  const int queued = strncmp(what, "q-", 2) == 0;
  if (queued) {
    what += 2;
    __atomic_store_n(&go, 0, __ATOMIC_RELEASE);
    ACL_OK(aclrtLaunchHostFunc(s, hold_stream, &go));
    queue_good(comm, s, y, 5);
  }
  if (strcmp(what, "count") == 0) {
    HCCL_OK(HcclAllReduce(x, x, odd ? 10 : 20, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "count0") == 0) {
    HCCL_OK(HcclAllReduce(x, x, odd ? 0 : 8, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "bigcount") == 0) {
    HCCL_OK(HcclAllReduce(x, x, odd ? 8 : 1 << 15, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "bcastbig") == 0) {  /* rank 0 a leaf on another algorithm */
    HCCL_OK(HcclBroadcast(x, odd ? 1 << 15 : 8, f32, 1, comm, s));
  } else if (strcmp(what, "bcastroot") == 0) {
    HCCL_OK(HcclBroadcast(x, 8, f32, odd ? 0 : 1, comm, s));
  } else if (strcmp(what, "reduceroot") == 0) {
    HCCL_OK(HcclReduce(x, x, 8, f32, HCCL_REDUCE_SUM, odd ? 0 : 1, comm, s));
  } else if (strcmp(what, "scatterroot") == 0) {
    HCCL_OK(HcclScatter(x, x + 32, 4, f32, odd ? 0 : 1, comm, s));
  } else if (agbcast) {
    if (odd) HCCL_OK(HcclBroadcast(x, 8 * (uint64_t)g_n, f32, 0, comm, s));
    else HCCL_OK(HcclAllGather(x, x + 1024, 8, f32, comm, s));
  } else if (strcmp(what, "dtype") == 0) {
    HCCL_OK(HcclAllReduce(x, x, 8, odd ? HCCL_DATA_TYPE_INT32 : f32, HCCL_REDUCE_MAX, comm, s));
  } else if (strcmp(what, "op") == 0) {
    HCCL_OK(HcclAllReduce(x, x, 8, f32, odd ? HCCL_REDUCE_MAX : HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "send") == 0) {
    if (odd) HCCL_OK(HcclSend(x, 8, f32, 1, comm, s));
    else HCCL_OK(HcclAllReduce(x, x, 8, f32, HCCL_REDUCE_SUM, comm, s));
  } else if (strcmp(what, "p2pdtype") == 0) {  /* ranks 0 and 1 only */
    if (g_rank == 0) HCCL_OK(HcclSend(x, 8, f32, 1, comm, s));
    if (g_rank == 1) HCCL_OK(HcclRecv(x, 8, HCCL_DATA_TYPE_INT32, 0, comm, s));
    if (g_rank > 1) {
      printf("rank %d: PASS mismatch detected (not involved)\n", g_rank);
      return 0;
    }
  }
  if (queued) {
    queue_good(comm, s, y, 5);
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  }
  struct Outcome o = outcome(comm, s, t0, what);
  aclError e = o.e;
  HcclResult ae = o.async;
  const char *msg = o.msg;
  /* A send completes once its data is in the channel: the sender learns of
   * the receiver's verdict through the communicator's async error. So does a
   * rank whose part of a rooted collective completed: its data and its
   * neighbour on the signature ring agreed (algo/ctx.h, ring_check); and its
   * next operation fails. */
  int sender = g_rank == 0 && (strcmp(what, "send") == 0 || strcmp(what, "p2pdtype") == 0);
  int rooted = strncmp(what, "bcast", 5) == 0 || strstr(what, "root") != NULL;
  int told_later = (sender || rooted) && e == ACL_SUCCESS;
  while (told_later && ae == HCCL_SUCCESS && now_s() - t0 < bound(4.0)) {
    usleep(10000);
    HCCL_OK(HcclGetCommAsyncError(comm, &ae));
  }
  if (told_later) {
    HcclResult r = HcclAllReduce(x, x, 8, f32, HCCL_REDUCE_SUM, comm, s);
    aclError next = r == HCCL_SUCCESS ? aclrtSynchronizeStream(s) : ACL_SUCCESS;
    CHECK(r != HCCL_SUCCESS || next != ACL_SUCCESS, "%s: the next operation succeeded", what);
    e = ACL_ERROR_RT_PARAM_INVALID;  /* what it reported, through the async error */
    msg = "";
  }
  CHECK(e != ACL_SUCCESS, "%s: the mismatch was not detected", what);
  CHECK(ae == HCCL_E_PARA, "%s: async error %d, want HCCL_E_PARA", what, (int)ae);
  CHECK(told_later || strstr(msg, "differs between ranks") || strstr(msg, "send/recv") ||
            strstr(msg, "HcclSend and HcclRecv"),
        "%s: message: %s", what, msg);
  CHECK(now_s() - t0 < bound(5.0), "%s: detection took %.1f s", what, now_s() - t0);
  if (g_fail == 0) printf("rank %d: PASS mismatch detected\n", g_rank);
  return g_fail != 0;
}

/* Broadcasts (or Reduces) from root 0, queued back to back, do not wait for
 * the signature check (algo/ctx.h, signature_check) of a rank LATE seconds late:
 * on 4x1 hosts its tree is the path 0 1 2 3, and rank 2 hears from rank 1 (late) only
 * that check, while its data comes from the root (Broadcast) or goes to it
 * (Reduce), over TCP, whose buffers take what the root sends rank 1 too. So
 * rank 2's operations but the last complete at once; the last one, which
 * nothing of the communicator follows on the stream, waits for the check (a
 * synchronize sees the signatures compared). Every result is checked. */
int run_pipeline(HcclComm comm, aclrtStream s, const char *kind) {
  const int reduce = strcmp(kind, "reduce") == 0;
  const int n = 20;
  const double late = bound(2.0);
  float *x = alloc(n * 16 * sizeof(float));
  for (int i = 0; i < n * 16; ++i) x[i] = (float)(g_rank + 1 + i);
  HCCL_OK(HcclBarrier(comm, s));
  sync_ok(s, "barrier");
  const double t0 = now_s();
  if (g_rank == 1) usleep((useconds_t)(late * 1e6));
  static int go;
  __atomic_store_n(&go, 0, __ATOMIC_RELEASE);
  ACL_OK(aclrtLaunchHostFunc(s, hold_stream, &go));
  for (int i = 0; i < n; ++i) {
    float *b = x + i * 16;
    if (reduce) HCCL_OK(HcclReduce(b, b + 8, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, s));
    else HCCL_OK(HcclBroadcast(b, 8, HCCL_DATA_TYPE_FP32, 0, comm, s));
  }
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  sync_ok(s, kind);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 8; ++j) {
      float want = reduce ? (float)(g_n * (g_n + 1) / 2 + g_n * (i * 16 + j)) : (float)(1 + i * 16 + j);
      float got = x[i * 16 + (reduce ? 8 : 0) + j];
      if ((!reduce || g_rank == 0) && got != want) ++wrong;
    }
  CHECK(wrong == 0, "%s: %d wrong elements", kind, wrong);
  if (g_rank == 2) {
    PyhcclOpRecord rec[64];
    uint32_t got = 0;
    HCCL_OK(PyhcclCommGetFlightRecord(comm, rec, 64, &got));
    CHECK(got == (uint32_t)n + 1, "%u records", got);
    if (got == (uint32_t)n + 1) {
      const double t0_us = t0 * 1e6;  /* now_s(): CLOCK_MONOTONIC, as the record */
      const int early = n - 1;  /* rec[0] is the barrier */
      const double ended = (rec[early].endUs - t0_us) / 1e6, last = (rec[n].endUs - t0_us) / 1e6;
      printf("rank %d: %s (%s): operation %d ended after %.3f s, the last after %.3f s (late rank: %.1f s)\n",
             g_rank, kind, rec[n].algorithm, early, ended, last, late);
      CHECK(ended < late / 2, "%s: operation %d waited for the late rank (%.3f s)", kind, early, ended);
      CHECK(last > late * 0.9, "%s: the last operation did not wait for the late rank (%.3f s)", kind,
            last);
    }
  }
  release(x);
  if (g_fail == 0) printf("rank %d: PASS pipeline %s\n", g_rank, kind);
  return g_fail != 0;
}

/* Reduces from root 0 queued back to back hold their signature check's headers
 * (Transfer::lazy: the root is rank 1's check parent and gets data from it, on
 * 4x1 hosts with a star between them). The root starts late, when every other
 * rank's data is there, so none of its Reduces waits (a wait would send what it
 * holds before it sleeps), and follows them with a Send to rank 3, the last
 * operation on its stream, which sends rank 1 nothing. Rank 1's last Reduce
 * waits for those headers, so the root must send them when its stream runs out
 * of operations of the communicator (comm/exec.cc, check_later), not at its next
 * one, nor at destroy (which the root puts off): at once, with every result right. */
int run_held(HcclComm comm, aclrtStream s) {
  const int n = 10;
  float *x = alloc((n * 16 + 8) * sizeof(float));
  for (int i = 0; i < n * 16 + 8; ++i) x[i] = (float)(g_rank + 1 + i);
  HCCL_OK(HcclBarrier(comm, s));
  sync_ok(s, "barrier");
  const double t0 = now_s();
  static int go;
  __atomic_store_n(&go, 0, __ATOMIC_RELEASE);
  ACL_OK(aclrtLaunchHostFunc(s, hold_stream, &go));
  for (int i = 0; i < n; ++i) {
    float *b = x + i * 16;
    HCCL_OK(HcclReduce(b, b + 8, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, s));
  }
  float *p = x + n * 16;
  if (g_rank == 0) HCCL_OK(HcclSend(p, 8, HCCL_DATA_TYPE_FP32, 3, comm, s));
  if (g_rank == 3) HCCL_OK(HcclRecv(p, 8, HCCL_DATA_TYPE_FP32, 0, comm, s));
  if (g_rank == 0) usleep(200000);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  sync_ok(s, "reduces and send");
  const double took = now_s() - t0;
  if (g_rank == 0) usleep((useconds_t)(bound(1.5) * 1e6));
  int wrong = 0;
  for (int i = 0; g_rank == 0 && i < n; ++i)
    for (int j = 0; j < 8; ++j)
      if (x[i * 16 + 8 + j] != (float)(g_n * (g_n + 1) / 2 + g_n * (i * 16 + j))) ++wrong;
  for (int j = 0; g_rank == 3 && j < 8; ++j)
    if (p[j] != (float)(1 + n * 16 + j)) ++wrong;
  CHECK(wrong == 0, "%d wrong elements", wrong);
  CHECK(took < bound(1.2), "the queued operations took %.1f s", took);
  release(x);
  if (g_fail == 0) printf("rank %d: PASS held headers sent at the end (%.3f s)\n", g_rank, took);
  return g_fail != 0;
}

/* Rank 0 aborts while the others wait in a collective it never joins: they
 * fail within about a second naming it, its own operations fail with
 * HCCL_E_UNAVAIL, destroying is quick, and the survivors build a new
 * communicator (root info through ROOTFILE.2) and carry on. */
int run_abort(HcclComm comm, aclrtStream s, const char *rootfile) {
  float x[256];
  for (int i = 0; i < 256; ++i) x[i] = 1.0f;
  double t0 = now_s();
  if (g_rank == 0) {
    usleep(300000);
    HCCL_OK(PyhcclCommAbort(comm));
    HcclResult r = HcclAllReduce(x, x, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s);
    aclError e = r == HCCL_SUCCESS ? aclrtSynchronizeStream(s) : ACL_SUCCESS;
    HcclResult ae = HCCL_SUCCESS;
    HCCL_OK(HcclGetCommAsyncError(comm, &ae));
    CHECK(r != HCCL_SUCCESS || e != ACL_SUCCESS, "an operation after the abort succeeded");
    CHECK(ae == HCCL_E_UNAVAIL, "async error after abort %d, want HCCL_E_UNAVAIL", (int)ae);
  } else {
    HCCL_OK(HcclAllReduce(x, x, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    aclError e = aclrtSynchronizeStream(s);
    const char *msg = aclGetRecentErrMsg();
    CHECK(e != ACL_SUCCESS, "the abort was not noticed");
    CHECK(strstr(msg, "rank 0 aborted") != NULL, "message: %s", msg);
    CHECK(now_s() - t0 < bound(3.0), "noticing the abort took %.1f s", now_s() - t0);
    printf("rank %d: abort noticed after %.2f s: %s\n", g_rank, now_s() - t0, msg);
  }
  double t1 = now_s();
  HCCL_OK(HcclCommDestroy(comm));
  CHECK(now_s() - t1 < bound(1.5), "HcclCommDestroy after the abort took %.1f s", now_s() - t1);
  if (g_rank != 0) {  /* the survivors, ranks 1.. as ranks 0.. of a new communicator */
    char path[4096];
    snprintf(path, sizeof(path), "%s.2", rootfile);
    int old_rank = g_rank, old_n = g_n;
    g_rank -= 1;
    g_n -= 1;
    HcclComm again = make_comm(path, NULL, 0, 0);
    HCCL_OK(HcclAllReduce(x, x, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, again, s));
    sync_ok(s, "allreduce among the survivors");
    CHECK(x[0] == (float)g_n, "survivors' sum %f, want %d", x[0], g_n);
    HCCL_OK(HcclCommDestroy(again));
    g_rank = old_rank;
    g_n = old_n;
  }
  if (g_fail == 0) printf("rank %d: PASS abort\n", g_rank);
  return g_fail != 0;
}

/* One verdict: with a 2 s exec timeout, the last rank arrives 4 s late; the
 * others time out; the late rank must fail too (it cannot succeed alone on
 * data its peers gave up on), and the flight record shows the failed op. */
int run_late(HcclComm comm, aclrtStream s) {
  float x[16];
  for (int i = 0; i < 16; ++i) x[i] = 1.0f;
  if (g_rank == g_n - 1) sleep(4);
  double t0 = now_s();
  HCCL_OK(HcclAllReduce(x, x, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  struct Outcome o = outcome(comm, s, t0, "late");
  CHECK(o.e != ACL_SUCCESS, "the collective succeeded (late rank %d)", g_n - 1);
  PyhcclOpRecord rec[8];
  uint32_t n = 0;
  HCCL_OK(PyhcclCommGetFlightRecord(comm, rec, 8, &n));
  CHECK(n == 1 && rec[0].seq == 1 && rec[0].state == 3 && strcmp(rec[0].opName, "HcclAllReduce") == 0 &&
            rec[0].count == 16 && rec[0].endUs >= rec[0].startUs && rec[0].startUs >= rec[0].enqueueUs,
        "flight record: %u records, seq %llu state %d", n, n ? (unsigned long long)rec[0].seq : 0ull,
        n ? rec[0].state : -1);
  if (g_fail == 0) printf("rank %d: PASS late rank\n", g_rank);
  return g_fail != 0;
}

/* The last rank stops itself (SIGSTOP) in the middle of a loop of 16 MiB
 * AllReduces on device memory (the single-copy path); the harness resumes it
 * (SIGCONT) after the others (2 s exec timeout) gave up. Every result a rank
 * reports as a success must be right, and every rank must end with an error:
 * the resumed rank must not succeed on buffers its peers abandoned. */
static void *stop_self(void *arg) {
  usleep((useconds_t)(intptr_t)arg);
  raise(SIGSTOP);
  return NULL;
}

int run_sigstop(HcclComm comm, aclrtStream s) {
  const size_t n = 4u << 20;
  float *x = alloc(n * 4);
  if (g_rank == g_n - 1) {
    pthread_t th;
    pthread_create(&th, NULL, stop_self, (void *)(intptr_t)(200000 + 50000 * (getpid() % 7)));
  }
  double t0 = now_s();
  int iters = 0, wrong = 0;
  aclError e = ACL_SUCCESS;
  while (e == ACL_SUCCESS && now_s() - t0 < 30) {
    for (size_t i = 0; i < n; ++i) x[i] = (float)(g_rank + 1);
    HcclResult r = HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s);
    e = r == HCCL_SUCCESS ? aclrtSynchronizeStream(s) : ACL_ERROR_RT_INTERNAL_ERROR;
    if (e != ACL_SUCCESS) break;
    const float want = (float)(g_n * (g_n + 1) / 2);
    for (size_t i = 0; i < n; ++i) wrong += x[i] != want;
    ++iters;
  }
  CHECK(wrong == 0, "%d wrong elements in a collective reported successful", wrong);
  CHECK(e != ACL_SUCCESS, "no error after %.1f s (%d iterations)", now_s() - t0, iters);
  printf("rank %d: %d good iterations, then: %s\n", g_rank, iters, aclGetRecentErrMsg());
  release(x);
  if (g_fail == 0) printf("rank %d: PASS sigstop\n", g_rank);
  return g_fail != 0;
}

/* AllGatherV / ReduceScatterV where rank 0's counts array differs from the
 * others' (HOW "other": different sizes; "zero": all 0, so rank 0 alone would
 * need no data round): every rank gets HCCL_E_PARA, quickly, never stale data
 * or a hang. Counts are {0, 2, 3, ...} on the other ranks. */
int run_mismatch_v(HcclComm comm, aclrtStream s, const char *kind, const char *how) {
  uint64_t counts[64], displs[64];
  uint64_t total = 0;
  for (int p = 0; p < g_n; ++p) {
    counts[p] = p == 0 ? 0 : (uint64_t)p + 1;
    if (g_rank == 0 && p > 0) counts[p] = strcmp(how, "zero") == 0 ? 0 : 7;
    displs[p] = total;
    total += counts[p];
  }
  float *big = alloc((total + 1) * 4), *mine = alloc((counts[g_rank] + 1) * 4);
  for (uint64_t i = 0; i < total; ++i) big[i] = 1.0f;
  for (uint64_t i = 0; i < counts[g_rank]; ++i) mine[i] = 1.0f;
  double t0 = now_s();
  if (strcmp(kind, "allgatherv") == 0)
    HCCL_OK(HcclAllGatherV(mine, counts[g_rank], big, counts, displs, HCCL_DATA_TYPE_FP32, comm,
                           s));
  else
    HCCL_OK(HcclReduceScatterV(big, counts, displs, mine, counts[g_rank], HCCL_DATA_TYPE_FP32,
                               HCCL_REDUCE_SUM, comm, s));
  struct Outcome o = outcome(comm, s, t0, kind);
  CHECK(o.e == ACL_ERROR_RT_PARAM_INVALID, "%s with different counts: stream error %d", kind,
        (int)o.e);
  CHECK(strstr(o.msg, "differs between ranks"), "message: %s", o.msg);
  CHECK(o.async == HCCL_E_PARA, "async error %d, want HCCL_E_PARA", (int)o.async);
  CHECK(o.took < bound(5.0), "detection took %.1f s", o.took);
  release(big);
  release(mine);
  if (g_fail == 0) printf("rank %d: PASS %s mismatch detected\n", g_rank, kind);
  return g_fail != 0;
}
