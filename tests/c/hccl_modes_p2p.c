/*
 * hccl_check's ordering modes (part of hccl_check, see hccl_check.c): rings of
 * HcclSend/HcclRecv (p2pring), two communicators called in different orders
 * (order), and small operations run on the calling thread (inline).
 */
#define RANK_CHECK_PART /* rank_check.h's counters live in hccl_check.c */
#include "hccl_check.h"

/* A ring of point-to-point messages, each rank sending to the next and
 * receiving from the previous one (see the mode list at the top). */
int run_p2p_ring(HcclComm comm, aclrtStream s, const char *what, size_t count) {
  const HcclDataType f32 = HCCL_DATA_TYPE_FP32;
  const int to = (g_rank + 1) % g_n, from = (g_rank + g_n - 1) % g_n;
  const int group = strcmp(what, "group") == 0, late = strcmp(what, "late") == 0;
  const int fails = strcmp(what, "ring") == 0 || strcmp(what, "timeout") == 0;
  float *send = alloc(count * 4), *recv = alloc(count * 4);
  for (size_t i = 0; i < count; ++i) send[i] = (float)(g_rank * 1000 + i % 1000);
  double t0 = now_s();
  if (group) HCCL_OK(HcclGroupStart());
  if (late && g_rank == 0) { /* the others wait in their blocking sends meanwhile */
    usleep(1000000);
    HCCL_OK(HcclRecv(recv, count, f32, from, comm, s));
    HCCL_OK(HcclSend(send, count, f32, to, comm, s));
  } else {
    HCCL_OK(HcclSend(send, count, f32, to, comm, s));
    HCCL_OK(HcclRecv(recv, count, f32, from, comm, s));
  }
  if (group) HCCL_OK(HcclGroupEnd());
  char label[64];
  snprintf(label, sizeof(label), "p2pring %s count %zu", what, count);
  struct Outcome o = outcome(comm, s, t0, label);
  const aclError e = o.e;
  const HcclResult ae = o.async;
  const char *msg = o.msg;
  if (fails) {
    CHECK(e != ACL_SUCCESS, "the ring without a group succeeded");
    CHECK(strstr(msg, "HcclGroupStart/HcclGroupEnd (pyhccl.group())") != NULL,
          "the message does not say to use a group: %s", msg);
    if (strcmp(what, "ring") == 0) {
      CHECK(ae == HCCL_E_INTERNAL, "async error %d, want HCCL_E_INTERNAL", (int)ae);
      CHECK(strstr(msg, "deadlock: ranks ") != NULL, "no deadlock named: %s", msg);
      CHECK(o.took < bound(5.0), "the deadlock took %.1f s to be reported", o.took);
    } else {
      CHECK(ae == HCCL_E_TIMEOUT, "async error %d, want HCCL_E_TIMEOUT", (int)ae);
      CHECK(strstr(msg, "timed out") != NULL, "no timeout: %s", msg);
    }
  } else {
    CHECK(e == ACL_SUCCESS && ae == HCCL_SUCCESS, "%s ring failed: %s", what, msg);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += recv[i] != (float)(from * 1000 + i % 1000);
    CHECK(wrong == 0, "%s ring: %zu wrong elements", what, wrong);
  }
  release(send);
  release(recv);
  if (g_fail == 0) printf("rank %d: PASS p2pring %s\n", g_rank, what);
  return g_fail != 0;
}

/* Two communicators used in opposite orders (see the mode list at the top). */
int run_order(const char *rootfile, aclrtStream s, const char *what, size_t count) {
  const int off = strcmp(what, "off") == 0, opposite = off || strcmp(what, "opposite") == 0;
  char path_b[4096];
  snprintf(path_b, sizeof(path_b), "%s.b", rootfile);
  HcclComm a = make_comm(rootfile, "order_a", 0, 0), b = make_comm(path_b, "order_b", 0, 0);
  float *x = alloc(count * 4), *y = alloc(count * 4);
  for (size_t i = 0; i < count; ++i) x[i] = y[i] = 1.0f;
  HcclComm first = opposite && g_rank != 0 ? b : a, second = first == a ? b : a;
  double t0 = now_s();
  HCCL_OK(HcclAllReduce(x, x, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, first, s));
  HCCL_OK(HcclAllReduce(y, y, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, second, s));
  char label[64];
  snprintf(label, sizeof(label), "order %s count %zu", what, count);
  struct Outcome o = outcome(first, s, t0, label);
  const aclError e = o.e;
  const HcclResult ae = o.async;
  const char *msg = o.msg;
  if (off) {
    /* Both time out. The first to word it names the likely cause (the peer sent nothing
     * on this communicator); it may then go on into the other's wait and send there
     * before the other words its own, which then names no cause: test_c_hccl.py checks
     * that one rank does (outcome() printed each message). */
    CHECK(e != ACL_SUCCESS, "aclError %d, async error %d", (int)e, (int)ae);
    CHECK(strstr(msg, "timed out") != NULL, "not a timeout: %s", msg);
  } else if (opposite) {
    char want[256];
    snprintf(want, sizeof(want), "is blocked in communicator %s's collective #1 while this rank "
             "waits in %s's #1; use one order on every rank", first == a ? "order_b" : "order_a",
             first == a ? "order_a" : "order_b");
    CHECK(e != ACL_SUCCESS && ae == HCCL_E_INTERNAL, "aclError %d, async error %d", (int)e, (int)ae);
    CHECK(strstr(msg, want) != NULL, "the message does not say \"%s\": %s", want, msg);
    CHECK(o.took < bound(5.0), "the deadlock took %.1f s to be reported", o.took);
  } else {
    CHECK(e == ACL_SUCCESS && ae == HCCL_SUCCESS, "same order failed: %s", msg);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += x[i] != (float)g_n || y[i] != (float)g_n;
    CHECK(wrong == 0, "same order: %zu wrong elements", wrong);
  }
  release(x);
  release(y);
  HCCL_OK(HcclCommDestroy(b));
  HCCL_OK(HcclCommDestroy(a));
  if (g_fail == 0) printf("rank %d: PASS order %s\n", g_rank, what);
  return g_fail != 0;
}

/* Small operations may run on the calling thread when every peer is there
 * (PYHCCL_INLINE_BYTES / PYHCCL_INLINE_US); the calling thread must never wait
 * for a peer that is busy elsewhere, nor return before the results are right. */
int run_inline(HcclComm a, const char *rootfile, aclrtStream sa, const char *what) {
  char path_b[4096];
  snprintf(path_b, sizeof(path_b), "%s.b", rootfile);
  HcclComm b = make_comm(path_b, NULL, 0, 0);
  aclrtStream sb;
  aclrtEvent ev;
  ACL_OK(aclrtCreateStream(&sb));
  ACL_OK(aclrtCreateEvent(&ev));
  float x[1024], y[1024];
  const float tri = (float)(g_n * (g_n + 1) / 2);
  if (strcmp(what, "crossed") == 0) {
    /* Even ranks call a then b, odd ranks b then a: an inline op on a must not
     * wait for a peer whose thread sits in b. Then b (on sb) reduces a's result
     * once the event recorded after a on sa has fired. */
    for (int it = 0; it < 200; ++it) {
      size_t n = (size_t)1 << (it % 11); /* 4 B .. 4 KiB */
      for (size_t i = 0; i < n; ++i) x[i] = (float)(g_rank + 1), y[i] = (float)(i % 5);
      if (g_rank % 2 == 0) {
        HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
        HCCL_OK(HcclAllReduce(y, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
      } else {
        HCCL_OK(HcclAllReduce(y, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
        HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
      }
      ACL_OK(aclrtRecordEvent(ev, sa));
      ACL_OK(aclrtStreamWaitEvent(sb, ev));
      HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
      sync_ok(sb, "crossed b");
      sync_ok(sa, "crossed a");
      int bad = 0;
      for (size_t i = 0; i < n; ++i)
        bad += x[i] != tri * (float)g_n || y[i] != (float)(i % 5) * (float)g_n;
      CHECK(bad == 0, "crossed iteration %d (%zu floats): %d wrong", it, n, bad);
    }
  } else if (strcmp(what, "late") == 0) {
    /* Rank 0 calls only once every other rank's call has returned (each leaves
     * a file ROOTFILE.back.R): an order, not a time bound. A call that waited
     * for the late peer would keep rank 0 away until its generous limit. */
    sync_ok(sa, "late warm-up");
    for (int i = 0; i < 8; ++i) x[i] = (float)(g_rank + 1);
    char back[4200];
    if (g_rank == 0) {
      int returned = 0;
      for (double until = now_s() + bound(10.0); returned < g_n - 1 && now_s() < until;) {
        usleep(10000);
        returned = 0;
        for (int r = 1; r < g_n; ++r) {
          snprintf(back, sizeof(back), "%s.back.%d", rootfile, r);
          returned += access(back, F_OK) == 0;
        }
      }
      CHECK(returned == g_n - 1, "only %d of %d calls returned before the late rank called",
            returned, g_n - 1);
    }
    HCCL_OK(HcclAllReduce(x, x, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
    if (g_rank != 0) {
      snprintf(back, sizeof(back), "%s.back.%d", rootfile, g_rank);
      FILE *f = fopen(back, "w");
      CHECK(f != NULL && fclose(f) == 0, "cannot write %s", back);
    }
    sync_ok(sa, "late");
    for (int i = 0; i < 8; ++i) CHECK(x[i] == tri, "late x[%d] = %f, want %f", i, x[i], tri);
  } else if (strcmp(what, "done") == 0) {
    /* Every rank is there (a barrier first) and PYHCCL_INLINE_US is long: the
     * op runs on this thread, so the stream is idle when the call returns. */
    int inline_done = 0;
    for (int it = 0; it < 20; ++it) {
      HCCL_OK(HcclBarrier(a, sa));
      sync_ok(sa, "done barrier");
      for (int i = 0; i < 8; ++i) x[i] = (float)(g_rank + 1);
      HCCL_OK(HcclAllReduce(x, x, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
      aclrtStreamStatus st = ACL_STREAM_STATUS_NOT_READY;
      ACL_OK(aclrtStreamQuery(sa, &st));
      inline_done += st == ACL_STREAM_STATUS_COMPLETE && x[0] == tri;
      sync_ok(sa, "done");
      for (int i = 0; i < 8; ++i) CHECK(x[i] == tri, "done x[%d] = %f, want %f", i, x[i], tri);
    }
    /* Another process may delay a peer now and then; most calls must be inline. */
    CHECK(inline_done >= 15, "only %d of 20 small AllReduces completed inside the call", inline_done);
  } else {
    CHECK(0, "unknown inline case %s", what);
  }
  ACL_OK(aclrtDestroyEvent(ev));
  HCCL_OK(HcclCommDestroy(b));
  ACL_OK(aclrtDestroyStream(sb));
  if (g_fail == 0) printf("rank %d: PASS inline %s\n", g_rank, what);
  return g_fail != 0;
}
