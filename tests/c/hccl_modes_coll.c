/*
 * hccl_check's collective checks (part of hccl_check, see hccl_check.c): one
 * function per collective, each checking its results for a dtype, op, count
 * and root, and the determinism check of the floating-point reductions.
 */
#define RANK_CHECK_PART /* rank_check.h's counters live in hccl_check.c */
#include "hccl_check.h"

static const char *kOpNames[] = {"sum", "prod", "max", "min"};

/* ---- collectives ------------------------------------------------------- */

void sync_ok(aclrtStream s, const char *what) {
  aclError e = aclrtSynchronizeStream(s);
  CHECK(e == ACL_SUCCESS, "%s: synchronize -> %d (%s)", what, (int)e, aclGetRecentErrMsg());
}

/* How the operations enqueued on `s` since t0 ended: the stream's error, the
 * message it left, the communicator's async error; printed as one line. */
struct Outcome outcome(HcclComm comm, aclrtStream s, double t0, const char *what) {
  struct Outcome o;
  o.e = aclrtSynchronizeStream(s);
  o.took = now_s() - t0;
  const char *m = aclGetRecentErrMsg();
  snprintf(o.msg, sizeof(o.msg), "%s", m ? m : "");
  o.async = HCCL_SUCCESS;
  HCCL_OK(HcclGetCommAsyncError(comm, &o.async));
  printf("rank %d: %s: aclError %d, async error %d after %.2f s: %s\n", g_rank, what, (int)o.e,
         (int)o.async, o.took, o.msg);
  return o;
}

void t_allreduce(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count,
                        int in_place) {
  size_t es = esize(t);
  char what[128];
  snprintf(what, sizeof(what), "AllReduce t=%d op=%s count=%zu inplace=%d", (int)t,
           kOpNames[op], count, in_place);
  char *send = alloc(count * es), *recv = in_place ? send : alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclAllReduce(send, recv, count, t, (HcclReduceOp)op, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, 0};
  compare(what, t, recv, 0, count, want_reduced, &w);
  if (!in_place) release(recv);
  release(send);
}

void t_reduce(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count, int root,
                     int in_place) {
  size_t es = esize(t);
  char what[128];
  snprintf(what, sizeof(what), "Reduce t=%d op=%s count=%zu root=%d", (int)t, kOpNames[op], count,
           root);
  char *send = alloc(count * es), *recv = in_place ? send : alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclReduce(send, g_rank == root ? recv : NULL, count, t, (HcclReduceOp)op, root, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, 0};
  if (g_rank == root) compare(what, t, recv, 0, count, want_reduced, &w);
  if (!in_place) release(recv);
  release(send);
}

void t_broadcast(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root) {
  char what[96];
  snprintf(what, sizeof(what), "Broadcast t=%d count=%zu root=%d", (int)t, count, root);
  char *buf = alloc(count * esize(t));
  for (size_t i = 0; i < count; ++i) store(t, buf, i, g_rank == root ? gen(-1, t, root, i) : 99);
  HCCL_OK(HcclBroadcast(buf, count, t, root, comm, s));
  sync_ok(s, what);
  struct Want w = {-1, t, root, 0};
  compare(what, t, buf, 0, count, want_plain, &w);
  release(buf);
}

void t_allgather(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int in_place) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "AllGather t=%d count=%zu inplace=%d", (int)t, count, in_place);
  char *recv = alloc(count * es * g_n);
  char *send = in_place ? recv + g_rank * count * es : alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(HcclAllGather(send, recv, count, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p, 0};
    compare(what, t, recv, p * count, count, want_plain, &w);
  }
  if (!in_place) release(send);
  release(recv);
}

void t_reducescatter(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t count,
                            int in_place) {
  size_t es = esize(t);
  char what[128];
  snprintf(what, sizeof(what), "ReduceScatter t=%d op=%s count=%zu inplace=%d", (int)t,
           kOpNames[op], count, in_place);
  char *send = alloc(count * es * g_n);
  char *recv = in_place ? send + g_rank * count * es : alloc(count * es);
  for (size_t i = 0; i < count * g_n; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclReduceScatter(send, recv, count, t, (HcclReduceOp)op, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, g_rank * count};
  compare(what, t, recv, 0, count, want_reduced, &w);
  if (!in_place) release(recv);
  release(send);
}

void t_scatter(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "Scatter t=%d count=%zu root=%d", (int)t, count, root);
  char *send = alloc(count * es * g_n), *recv = alloc(count * es);
  for (size_t i = 0; i < count * g_n; ++i) store(t, send, i, gen(-1, t, root, i));
  HCCL_OK(HcclScatter(send, recv, count, t, root, comm, s));
  sync_ok(s, what);
  struct Want w = {-1, t, root, g_rank * count};
  compare(what, t, recv, 0, count, want_plain, &w);
  release(send);
  release(recv);
}

/* Gather, Scatter's mirror image: rank p's block lands at p * count on the root only,
 * whose recvBuf is the only one (NULL elsewhere); in place, the root's sendBuf is its block. */
void t_gather(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int root, int in_place) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "Gather t=%d count=%zu root=%d inplace=%d", (int)t, count, root, in_place);
  const int at_root = g_rank == root, own = !(at_root && in_place);
  char *recv = at_root ? alloc(count * es * g_n) : NULL;
  char *send = own ? alloc(count * es) : recv + root * count * es;
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(PyhcclGather(send, recv, count, t, root, comm, s));
  sync_ok(s, what);
  for (int p = 0; at_root && p < g_n; ++p) {
    struct Want w = {-1, t, p, 0};
    compare(what, t, recv, p * count, count, want_plain, &w);
  }
  if (own) release(send);
  if (recv) release(recv);
}

/* AlltoAll: rank p sends block q = gen(p, q*count + i); rank q gets block p from p. */
void t_alltoall(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int in_place) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "AlltoAll t=%d count=%zu inplace=%d", (int)t, count, in_place);
  char *send = alloc(count * es * g_n), *recv = in_place ? send : alloc(count * es * g_n);
  for (size_t i = 0; i < count * g_n; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(HcclAlltoAll(send, count, t, recv, count, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p, g_rank * count};
    compare(what, t, recv, p * count, count, want_plain, &w);
  }
  if (!in_place) release(recv);
  release(send);
}

/* V variants: rank p's block for q has (p + 2 q) % 5 * base elements. */
static uint64_t vcount(int p, int q, size_t base) { return (uint64_t)((p + 2 * q) % 5) * base; }

void t_alltoallv(HcclComm comm, aclrtStream s, HcclDataType t, size_t base) {
  size_t es = esize(t);
  uint64_t sc[64], sd[64], rc[64], rd[64], stot = 0, rtot = 0;
  char what[96];
  snprintf(what, sizeof(what), "AlltoAllV t=%d base=%zu", (int)t, base);
  for (int q = 0; q < g_n; ++q) {
    sc[q] = vcount(g_rank, q, base);
    sd[q] = stot + 3;  /* gaps between blocks */
    stot += sc[q] + 3;
    rc[q] = vcount(q, g_rank, base);
    rd[q] = rtot + 1;
    rtot += rc[q] + 1;
  }
  char *send = alloc(stot * es), *recv = alloc(rtot * es);
  for (int q = 0; q < g_n; ++q)
    for (size_t i = 0; i < sc[q]; ++i) store(t, send, sd[q] + i, gen(-1, t, g_rank * 64 + q, i));
  HCCL_OK(HcclAlltoAllV(send, sc, sd, t, recv, rc, rd, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p * 64 + g_rank, 0};
    compare(what, t, recv, rd[p], rc[p], want_plain, &w);
  }
  release(send);
  release(recv);
}

void t_allgatherv(HcclComm comm, aclrtStream s, HcclDataType t, size_t base) {
  size_t es = esize(t);
  uint64_t rc[64], rd[64], tot = 0;
  char what[96];
  snprintf(what, sizeof(what), "AllGatherV t=%d base=%zu", (int)t, base);
  for (int p = 0; p < g_n; ++p) {
    rc[p] = vcount(p, 1, base);
    rd[p] = tot + 2;
    tot += rc[p] + 2;
  }
  char *recv = alloc(tot * es), *send = alloc(rc[g_rank] * es);
  for (size_t i = 0; i < rc[g_rank]; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  HCCL_OK(HcclAllGatherV(send, rc[g_rank], recv, rc, rd, t, comm, s));
  sync_ok(s, what);
  for (int p = 0; p < g_n; ++p) {
    struct Want w = {-1, t, p, 0};
    compare(what, t, recv, rd[p], rc[p], want_plain, &w);
  }
  release(send);
  release(recv);
}

void t_reducescatterv(HcclComm comm, aclrtStream s, HcclDataType t, int op, size_t base) {
  size_t es = esize(t);
  uint64_t sc[64], sd[64], tot = 0;
  char what[96];
  snprintf(what, sizeof(what), "ReduceScatterV t=%d op=%s base=%zu", (int)t, kOpNames[op], base);
  for (int q = 0; q < g_n; ++q) {
    sc[q] = vcount(0, q, base) + 1;
    sd[q] = tot;
    tot += sc[q];
  }
  char *send = alloc(tot * es), *recv = alloc(sc[g_rank] * es);
  for (size_t i = 0; i < tot; ++i) store(t, send, i, gen(op, t, g_rank, i));
  HCCL_OK(HcclReduceScatterV(send, sc, sd, recv, sc[g_rank], t, (HcclReduceOp)op, comm, s));
  sync_ok(s, what);
  struct Want w = {op, t, 0, sd[g_rank]};
  compare(what, t, recv, 0, sc[g_rank], want_reduced, &w);
  release(send);
  release(recv);
}

/* Ring exchange: send to rank+1, receive from rank-1, as a batch and as a group. */
void t_sendrecv(HcclComm comm, aclrtStream s, HcclDataType t, size_t count, int grouped) {
  size_t es = esize(t);
  int to = (g_rank + 1) % g_n, from = (g_rank + g_n - 1) % g_n;
  char what[96];
  snprintf(what, sizeof(what), "SendRecv t=%d count=%zu grouped=%d", (int)t, count, grouped);
  char *send = alloc(count * es), *recv = alloc(count * es);
  for (size_t i = 0; i < count; ++i) store(t, send, i, gen(-1, t, g_rank, i));
  if (grouped) {
    HCCL_OK(HcclGroupStart());
    HCCL_OK(HcclSend(send, count, t, to, comm, s));
    HCCL_OK(HcclRecv(recv, count, t, from, comm, s));
    HCCL_OK(HcclGroupEnd());
  } else {
    HcclSendRecvItem items[2] = {{HCCL_SEND, send, count, t, (uint32_t)to},
                                 {HCCL_RECV, recv, count, t, (uint32_t)from}};
    HCCL_OK(HcclBatchSendRecv(items, 2, comm, s));
  }
  sync_ok(s, what);
  struct Want w = {-1, t, from, 0};
  compare(what, t, recv, 0, count, want_plain, &w);
  release(send);
  release(recv);
}

/* ---- determinism ------------------------------------------------------- */

static uint64_t fnv(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Fractional inputs, so rounding depends on the order of the fold: on one
 * host every path must give exactly ((x0 + x1) + x2) + ... in rank order
 * (across hosts, or on a ring, the order is fixed by the job shape instead:
 * CHECK_FOLD_ORDER=any), every rank the same bits (compared through an
 * AllGather of hashes), and a second run the same bits as the first. */
void t_determinism(HcclComm comm, aclrtStream s, HcclDataType t, size_t count) {
  size_t es = esize(t);
  char what[96];
  snprintf(what, sizeof(what), "determinism t=%d count=%zu", (int)t, count);
  char *buf = alloc(count * es), *ref = malloc(count * es + 8);
  for (size_t i = 0; i < count; ++i) {
    double acc = 0;
    float facc = 0;
    for (int r = 0; r < g_n; ++r) {
      double v = (double)((i * 37 + (size_t)r * 101) % 1000) * 0.0013 + r * 0.3337;
      if (r == g_rank) store(t, buf, i, v);
      float fv = (float)v;
      facc = r == 0 ? fv : facc + fv;
      acc = r == 0 ? v : acc + v;
    }
    if (t == HCCL_DATA_TYPE_FP32) ((float *)ref)[i] = facc;
    if (t == HCCL_DATA_TYPE_FP64) ((double *)ref)[i] = acc;
  }
  char *again = alloc(count * es);
  memcpy(again, buf, count * es);
  HCCL_OK(HcclAllReduce(buf, buf, count, t, HCCL_REDUCE_SUM, comm, s));
  HCCL_OK(HcclAllReduce(again, again, count, t, HCCL_REDUCE_SUM, comm, s));
  sync_ok(s, what);
  CHECK(memcmp(buf, again, count * es) == 0, "%s: a second run gave other bits", what);
  const char *order = getenv("CHECK_FOLD_ORDER");
  int rank_order = order == NULL || strcmp(order, "any") != 0;
  if (rank_order && (t == HCCL_DATA_TYPE_FP32 || t == HCCL_DATA_TYPE_FP64))
    CHECK(memcmp(buf, ref, count * es) == 0, "%s: not the rank-order fold", what);
  release(again);
  uint64_t *hashes = alloc(8 * g_n), *mine = alloc(8);
  *mine = fnv(buf, count * es);
  HCCL_OK(HcclAllGather(mine, hashes, 1, HCCL_DATA_TYPE_UINT64, comm, s));
  sync_ok(s, what);
  for (int r = 0; r < g_n; ++r) CHECK(hashes[r] == *mine, "%s: rank %d has other bits", what, r);
  release(hashes);
  release(mine);
  release(buf);
  free(ref);
}
