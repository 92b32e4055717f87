/*
 * The data types collectives only move: INT128 (16-byte elements), HIF8 and
 * the FP8 types, in every data-movement collective at odd counts, in place and
 * not, on host or aclrtMalloc memory; their reductions fail with
 * HCCL_E_NOT_SUPPORT and a message that says why.
 *
 *   dtype_check dtypes RANK NRANKS ROOTFILE [host|device]
 *
 * Every byte pattern is used (FP8 NaN and infinity encodings included):
 * moving must not look at values.
 */
#define _DEFAULT_SOURCE
#include "rank_check.h"

static int g_device;

static const HcclDataType kTypes[] = {HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_HIF8,
                                      HCCL_DATA_TYPE_FP8E4M3, HCCL_DATA_TYPE_FP8E5M2,
                                      HCCL_DATA_TYPE_FP8E8M0};
static const uint64_t kCounts[] = {0, 1, 7, 1001, 100003};
#define N_TYPES (sizeof(kTypes) / sizeof(kTypes[0]))
#define N_COUNTS (sizeof(kCounts) / sizeof(kCounts[0]))

static size_t esize(HcclDataType t) { return t == HCCL_DATA_TYPE_INT128 ? 16 : 1; }

/* Byte b of element i as rank `from` wrote it (for `tag`, one per test). */
static uint8_t pat(int from, uint64_t i, size_t b, int tag) {
  return (uint8_t)(i * 131u + b * 7u + (unsigned)from * 29u + (unsigned)tag * 53u + 1u);
}

static void *alloc(size_t bytes) {
  void *p = NULL;
  if (bytes == 0) bytes = 64;
  if (g_device) ACL_OK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  else p = malloc(bytes);
  if (p == NULL) exit(3);
  memset(p, 0xee, bytes);
  return p;
}
static void release(void *p) {
  if (g_device) aclrtFree(p);
  else free(p);
}

/* elements [i0, i0 + count) of buf as rank `from` wrote elements [j0, ...). */
static void fill(void *buf, HcclDataType t, uint64_t i0, uint64_t count, int from, uint64_t j0,
                 int tag) {
  size_t es = esize(t);
  uint8_t *p = (uint8_t *)buf + i0 * es;
  for (uint64_t i = 0; i < count; ++i)
    for (size_t b = 0; b < es; ++b) p[i * es + b] = pat(from, j0 + i, b, tag);
}
static void expect(const char *what, const void *buf, HcclDataType t, uint64_t i0, uint64_t count,
                   int from, uint64_t j0, int tag) {
  size_t es = esize(t);
  const uint8_t *p = (const uint8_t *)buf + i0 * es;
  ++g_checks;
  for (uint64_t i = 0; i < count; ++i)
    for (size_t b = 0; b < es; ++b)
      if (p[i * es + b] != pat(from, j0 + i, b, tag)) {
        CHECK(0, "%s type %d: element %llu byte %zu from rank %d is 0x%02x, want 0x%02x", what,
              (int)t, (unsigned long long)(i0 + i), b, from, p[i * es + b],
              pat(from, j0 + i, b, tag));
        return;
      }
}

static void sync_ok(aclrtStream s, const char *what) {
  aclError e = aclrtSynchronizeStream(s);
  CHECK(e == ACL_SUCCESS, "%s: synchronize -> %d", what, (int)e);
}

static void t_allgather(HcclComm comm, aclrtStream s, HcclDataType t, uint64_t n, int in_place) {
  size_t es = esize(t);
  char *recv = alloc(n * es * g_n);
  char *send = in_place ? recv + g_rank * n * es : alloc(n * es);
  fill(send, t, 0, n, g_rank, 0, 1);
  HCCL_OK(HcclAllGather(send, recv, n, t, comm, s));
  sync_ok(s, "AllGather");
  for (int p = 0; p < g_n; ++p) expect("AllGather", recv, t, p * n, n, p, 0, 1);
  if (!in_place) release(send);
  release(recv);
}

static void t_broadcast(HcclComm comm, aclrtStream s, HcclDataType t, uint64_t n, int root) {
  char *buf = alloc(n * esize(t));
  if (g_rank == root) fill(buf, t, 0, n, root, 0, 2);
  HCCL_OK(HcclBroadcast(buf, n, t, (uint32_t)root, comm, s));
  sync_ok(s, "Broadcast");
  expect("Broadcast", buf, t, 0, n, root, 0, 2);
  release(buf);
}

static void t_scatter(HcclComm comm, aclrtStream s, HcclDataType t, uint64_t n, int root,
                      int in_place) {
  size_t es = esize(t);
  char *send = alloc(n * es * g_n);
  char *recv = in_place && g_rank == root ? send + root * n * es : alloc(n * es);
  if (g_rank == root) fill(send, t, 0, n * g_n, root, 0, 3);
  HCCL_OK(HcclScatter(send, recv, n, t, (uint32_t)root, comm, s));
  sync_ok(s, "Scatter");
  expect("Scatter", recv, t, 0, n, root, (uint64_t)g_rank * n, 3);
  if (recv < send || recv >= send + n * es * g_n) release(recv);
  release(send);
}

static void t_alltoall(HcclComm comm, aclrtStream s, HcclDataType t, uint64_t n) {
  size_t es = esize(t);
  char *send = alloc(n * es * g_n), *recv = alloc(n * es * g_n);
  fill(send, t, 0, n * g_n, g_rank, 0, 4);
  HCCL_OK(HcclAlltoAll(send, n, t, recv, n, t, comm, s));
  sync_ok(s, "AlltoAll");
  for (int p = 0; p < g_n; ++p) expect("AlltoAll", recv, t, p * n, n, p, (uint64_t)g_rank * n, 4);
  release(send);
  release(recv);
}

/* V variants: rank p sends (p + 2q) % 3 * base + (q & 1) elements to rank q. */
static uint64_t vc(int p, int q, uint64_t base) { return (uint64_t)((p + 2 * q) % 3) * base + (q & 1); }

static void t_alltoallv(HcclComm comm, aclrtStream s, HcclDataType t, uint64_t base, int matrix) {
  size_t es = esize(t);
  uint64_t sc[16], sd[16], rc[16], rd[16], stot = 0, rtot = 0, m[256];
  for (int q = 0; q < g_n; ++q) {
    sc[q] = vc(g_rank, q, base);
    sd[q] = stot;
    stot += sc[q];
    rc[q] = vc(q, g_rank, base);
    rd[q] = rtot;
    rtot += rc[q];
    for (int p = 0; p < g_n; ++p) m[p * g_n + q] = vc(p, q, base);
  }
  char *send = alloc(stot * es), *recv = alloc(rtot * es);
  fill(send, t, 0, stot, g_rank, 0, 5);
  if (matrix) HCCL_OK(HcclAlltoAllVC(send, m, t, recv, t, comm, s));
  else HCCL_OK(HcclAlltoAllV(send, sc, sd, t, recv, rc, rd, t, comm, s));
  sync_ok(s, matrix ? "AlltoAllVC" : "AlltoAllV");
  for (int p = 0; p < g_n; ++p) {
    uint64_t off = 0;  /* where p's block for this rank starts in p's send buffer */
    for (int q = 0; q < g_rank; ++q) off += vc(p, q, base);
    expect(matrix ? "AlltoAllVC" : "AlltoAllV", recv, t, rd[p], rc[p], p, off, 5);
  }
  release(send);
  release(recv);
}

static void t_allgatherv(HcclComm comm, aclrtStream s, HcclDataType t, uint64_t base,
                         int in_place) {
  size_t es = esize(t);
  uint64_t rc[16], rd[16], tot = 0;
  for (int p = 0; p < g_n; ++p) {
    rc[p] = vc(p, 0, base) + (uint64_t)p;
    rd[p] = tot + 1;  /* a gap before every block */
    tot = rd[p] + rc[p];
  }
  char *recv = alloc(tot * es);
  char *send = in_place ? recv + rd[g_rank] * es : alloc(rc[g_rank] * es);
  fill(send, t, 0, rc[g_rank], g_rank, 0, 6);
  HCCL_OK(HcclAllGatherV(send, rc[g_rank], recv, rc, rd, t, comm, s));
  sync_ok(s, "AllGatherV");
  for (int p = 0; p < g_n; ++p) expect("AllGatherV", recv, t, rd[p], rc[p], p, 0, 6);
  if (!in_place) release(send);
  release(recv);
}

/* A ring: every rank sends to the next and receives from the previous. */
static void t_sendrecv(HcclComm comm, aclrtStream s, HcclDataType t, uint64_t n, int batch) {
  size_t es = esize(t);
  int next = (g_rank + 1) % g_n, prev = (g_rank + g_n - 1) % g_n;
  char *send = alloc(n * es), *recv = alloc(n * es);
  fill(send, t, 0, n, g_rank, 0, 7);
  if (batch) {
    HcclSendRecvItem items[2] = {{HCCL_SEND, send, n, t, (uint32_t)next},
                                 {HCCL_RECV, recv, n, t, (uint32_t)prev}};
    HCCL_OK(HcclBatchSendRecv(items, 2, comm, s));
  } else {
    HCCL_OK(HcclGroupStart());
    HCCL_OK(HcclSend(send, n, t, (uint32_t)next, comm, s));
    HCCL_OK(HcclRecv(recv, n, t, (uint32_t)prev, comm, s));
    HCCL_OK(HcclGroupEnd());
  }
  sync_ok(s, batch ? "BatchSendRecv" : "Send/Recv");
  expect(batch ? "BatchSendRecv" : "Send/Recv", recv, t, 0, n, prev, 0, 7);
  release(send);
  release(recv);
}

/* CANN reduces none of these types: every reduction is refused at the call. */
static void t_reductions_refused(HcclComm comm, aclrtStream s, HcclDataType t) {
  char *a = alloc(64 * g_n), *b = alloc(64 * g_n);
  uint64_t counts[16], displs[16];
  for (int p = 0; p < g_n; ++p) {
    counts[p] = 1;
    displs[p] = (uint64_t)p;
  }
  for (int op = 0; op < 4; ++op) {
    HcclReduceOp o = (HcclReduceOp)op;
    HCCL_FAILS(HcclAllReduce(a, b, 1, t, o, comm, s), HCCL_E_NOT_SUPPORT, "is not supported for dataType");
    HCCL_FAILS(HcclReduce(a, b, 1, t, o, 0, comm, s), HCCL_E_NOT_SUPPORT, "CANN");
    HCCL_FAILS(HcclReduceScatter(a, b, 1, t, o, comm, s), HCCL_E_NOT_SUPPORT, "reduction op");
    HCCL_FAILS(HcclReduceScatterV(a, counts, displs, b, 1, t, o, comm, s), HCCL_E_NOT_SUPPORT,
               "is not supported for dataType");
  }
  /* Values that are no HcclDataType still are bad parameters. */
  HCCL_FAILS(HcclAllGather(a, b, 1, (HcclDataType)13, comm, s), HCCL_E_PARA, "is not an HcclDataType");
  HCCL_FAILS(HcclBroadcast(a, 1, (HcclDataType)18, 0, comm, s), HCCL_E_PARA, "is not an HcclDataType");
  release(a);
  release(b);
}

int main(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[1], "dtypes") != 0) {
    fprintf(stderr, "usage: %s dtypes RANK NRANKS ROOTFILE [host|device]\n", argv[0]);
    return 2;
  }
  g_rank = atoi(argv[2]);
  g_n = atoi(argv[3]);
  g_device = argc > 5 && strcmp(argv[5], "device") == 0;
  if (g_n > 16) return 2;
  ACL_OK(aclrtSetDevice(0));
  aclrtStream s;
  ACL_OK(aclrtCreateStream(&s));
  HcclComm comm = init_comm(argv[4], NULL);
  for (size_t ti = 0; ti < N_TYPES; ++ti) {
    HcclDataType t = kTypes[ti];
    for (size_t ci = 0; ci < N_COUNTS; ++ci) {
      uint64_t n = kCounts[ci];
      int root = (int)(ci % (size_t)g_n);
      t_allgather(comm, s, t, n, (int)(ci & 1));
      t_broadcast(comm, s, t, n, root);
      t_scatter(comm, s, t, n, root, (int)((ci >> 1) & 1));
      t_alltoall(comm, s, t, n);
      t_sendrecv(comm, s, t, n, (int)(ci & 1));
    }
    t_alltoallv(comm, s, t, 1001, 0);
    t_alltoallv(comm, s, t, 7, 1);
    t_allgatherv(comm, s, t, 1001, (int)(ti & 1));
    t_reductions_refused(comm, s, t);
  }
  HCCL_OK(HcclCommDestroy(comm));
  ACL_OK(aclrtDestroyStream(s));
  return finish();
}
