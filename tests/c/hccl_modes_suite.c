/*
 * hccl_check's healthy-path modes (part of hccl_check, see hccl_check.c): the
 * suite (every collective, argument errors, topology, two communicators at
 * once) and the config and perf modes.
 */
#define RANK_CHECK_PART /* rank_check.h's counters live in hccl_check.c */
#include "hccl_check.h"

static const HcclDataType kTypes[] = {
    HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_INT16,  HCCL_DATA_TYPE_INT32,  HCCL_DATA_TYPE_INT64,
    HCCL_DATA_TYPE_UINT8,  HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64,
    HCCL_DATA_TYPE_FP16,   HCCL_DATA_TYPE_FP32,   HCCL_DATA_TYPE_FP64,   HCCL_DATA_TYPE_BFP16};
#define NTYPES (sizeof(kTypes) / sizeof(kTypes[0]))

/* ---- argument errors ---------------------------------------------------- */

void expect_err(HcclResult got, HcclResult want, const char *call, const char *word) {
  const char *msg = aclGetRecentErrMsg();
  CHECK(got == want, "%s returned %d, want %d (%s)", call, (int)got, (int)want, msg ? msg : "");
  CHECK(msg && strstr(msg, call), "%s: message \"%s\" does not name the call", call, msg ? msg : "");
  if (word) CHECK(msg && strstr(msg, word), "%s: message \"%s\" lacks \"%s\"", call, msg ? msg : "", word);
}

/* A grouped op whose stream is destroyed before HcclGroupEnd: a clean error
 * naming HcclGroupEnd and the stream, and the (private) comm is failed. */
static void t_group_stream_destroyed(void) {
  HcclRootInfo ri;
  HcclComm c1 = NULL;
  HCCL_OK(HcclGetRootInfo(&ri));
  HCCL_OK(HcclCommInitRootInfo(1, &ri, 0, &c1));
  float a[8] = {0}, b[8];
  aclrtStream tmp;
  ACL_OK(aclrtCreateStream(&tmp));
  HCCL_OK(HcclGroupStart());
  HCCL_OK(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c1, tmp));
  HCCL_OK(HcclSend(a, 8, HCCL_DATA_TYPE_FP32, 0, c1, tmp));
  HCCL_OK(HcclRecv(b, 8, HCCL_DATA_TYPE_FP32, 0, c1, tmp));
  ACL_OK(aclrtDestroyStream(tmp));
  expect_err(HcclGroupEnd(), HCCL_E_PARA, "HcclGroupEnd", "is not a live stream");
  char want[64];
  snprintf(want, sizeof(want), "%p", (void *)tmp);
  const char *msg = aclGetRecentErrMsg();
  CHECK(msg && strstr(msg, want), "HcclGroupEnd message \"%s\" does not name stream %s",
        msg ? msg : "", want);
  HcclResult ae = HCCL_SUCCESS;
  HCCL_OK(HcclGetCommAsyncError(c1, &ae));
  CHECK(ae == HCCL_E_PARA, "comm of the failed group: async error %d", (int)ae);
  bool active = true;
  HCCL_OK(HcclGroupStatusGet(&active));
  CHECK(active == 0, "group still active after a failed HcclGroupEnd");
  HCCL_OK(HcclCommDestroy(c1));
}

/* The NULL (default) stream on a thread with no device set. */
struct NullStreamArg {
  HcclComm comm;
  HcclResult r;
  char msg[512];
};
static void *null_stream_thread(void *p) {
  struct NullStreamArg *arg = (struct NullStreamArg *)p;
  float a[8] = {0}, b[8];
  arg->r = HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, arg->comm, NULL);
  const char *m = aclGetRecentErrMsg();
  snprintf(arg->msg, sizeof(arg->msg), "%s", m ? m : "");
  return NULL;
}
static void t_null_stream_no_device(HcclComm comm) {
  struct NullStreamArg arg;
  memset(&arg, 0, sizeof(arg));
  arg.comm = comm;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, null_stream_thread, &arg) == 0, "pthread_create");
  pthread_join(th, NULL);
  CHECK(arg.r == HCCL_E_PARA, "NULL stream, no device: returned %d (%s)", (int)arg.r, arg.msg);
  CHECK(strstr(arg.msg, "HcclAllReduce") && strstr(arg.msg, "stream is NULL") &&
            strstr(arg.msg, "aclrtSetDevice"),
        "NULL stream, no device: message \"%s\"", arg.msg);
}

void t_errors(HcclComm comm, aclrtStream s) {
  float a[8], b[8];
  uint32_t u;
  expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, NULL, s), HCCL_E_PTR,
             "HcclAllReduce", "comm");
  expect_err(HcclAllReduce(NULL, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s), HCCL_E_PTR,
             "HcclAllReduce", "sendBuf");
  expect_err(HcclAllReduce(a, b, 8, (HcclDataType)99, HCCL_REDUCE_SUM, comm, s), HCCL_E_PARA,
             "HcclAllReduce", "dataType");
  expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM, comm, s),
             HCCL_E_NOT_SUPPORT, "HcclAllReduce", "dataType");
  expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, (HcclReduceOp)7, comm, s), HCCL_E_PARA,
             "HcclAllReduce", "op");
  expect_err(HcclAllReduce(a, a + 1, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s),
             HCCL_E_PARA, "HcclAllReduce", "overlap");
  expect_err(HcclBroadcast(a, 8, HCCL_DATA_TYPE_FP32, (uint32_t)g_n, comm, s), HCCL_E_PARA,
             "HcclBroadcast", "root");
  expect_err(HcclSend(a, 8, HCCL_DATA_TYPE_FP32, (uint32_t)g_n + 3, comm, s), HCCL_E_PARA,
             "HcclSend", "destRank");
  /* Gather: every rank its own root where only the root's recvBuf is checked. */
  float g[16];
  expect_err(PyhcclGather(a, b, 2, HCCL_DATA_TYPE_FP32, (uint32_t)g_n, comm, s), HCCL_E_PARA,
             "PyhcclGather", "root");
  expect_err(PyhcclGather(NULL, b, 2, HCCL_DATA_TYPE_FP32, 0, comm, s), HCCL_E_PTR, "PyhcclGather",
             "sendBuf");
  expect_err(PyhcclGather(a, NULL, 2, HCCL_DATA_TYPE_FP32, (uint32_t)g_rank, comm, s), HCCL_E_PTR,
             "PyhcclGather", "recvBuf");
  expect_err(PyhcclGather(g + 2 * g_rank + 1, g, 2, HCCL_DATA_TYPE_FP32, (uint32_t)g_rank, comm, s),
             HCCL_E_PARA, "PyhcclGather", "root * sendCount");
  expect_err(HcclAlltoAll(a, 1, HCCL_DATA_TYPE_FP32, b, 2, HCCL_DATA_TYPE_FP32, comm, s),
             HCCL_E_PARA, "HcclAlltoAll", "recvCount");
  expect_err(HcclGetRankSize(comm, NULL), HCCL_E_PTR, "HcclGetRankSize", "rankSize");
  expect_err(HcclGetRankSize((HcclComm)(uintptr_t)0x1234, &u), HCCL_E_PARA, "HcclGetRankSize",
             "comm");
  HcclComm none = NULL;
  expect_err(HcclCommInitClusterInfo("/nonexistent/rank_table.json", 0, &none),
             HCCL_E_OPEN_FILE_FAILURE, "HcclCommInitClusterInfo", "cannot read the rank table");
  expect_err(HcclGroupEnd(), HCCL_E_PARA, "HcclGroupEnd", NULL);
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  memset(cfg.reserved + 8, 0, 4); /* bad magic */
  HcclRootInfo ri;
  memset(&ri, 0, sizeof(ri));
  HcclComm c2;
  expect_err(HcclCommInitRootInfoConfig(1, &ri, 0, &cfg, &c2), HCCL_E_PARA,
             "HcclCommInitRootInfoConfig", "magic");
  HcclCommConfigInit(&cfg); /* a good config, a bad root info: named after the Config call */
  expect_err(HcclCommInitRootInfoConfig(1, &ri, 0, &cfg, &c2), HCCL_E_PARA,
             "HcclCommInitRootInfoConfig", "rootInfo");
  t_group_stream_destroyed();
  t_null_stream_no_device(comm);
  CHECK(strlen(HcclGetErrorString(HCCL_E_TIMEOUT)) > 0, "error string");
  CHECK(HcclGetCommConfigCapability() == HCCL_COMM_CONFIG_RESERVED, "capability");
  HcclConfigValue v = {1};
  HCCL_OK(HcclSetConfig(HCCL_DETERMINISTIC, v));
  v.value = -5;
  HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &v));
  CHECK(v.value == 1, "HcclGetConfig deterministic = %d", v.value);
  uint32_t ndev = 0;
  ACL_OK(aclrtGetDeviceCount(&ndev));
  if (ndev >= 2) { /* a stream of another device is refused */
    aclrtStream other;
    ACL_OK(aclrtSetDevice(1));
    ACL_OK(aclrtCreateStream(&other));
    expect_err(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, other),
               HCCL_E_PARA, "HcclAllReduce", "stream belongs to device 1, communicator to device 0");
    ACL_OK(aclrtDestroyStream(other));
    ACL_OK(aclrtSetDevice(0));
  }
  HcclResult ae = HCCL_E_INTERNAL;
  HCCL_OK(HcclGetCommAsyncError(comm, &ae));
  CHECK(ae == HCCL_SUCCESS, "async error %d on a healthy comm", (int)ae);
}

/* ---- topology (pyhccl extension) --------------------------------------- */

/* Consistent with itself, with the transports, and with CHECK_HOSTS (the
 * number of hosts the test laid out) when set. */
static void t_topology(HcclComm comm) {
  PyhcclTopology t;
  uint32_t host_of[64];
  HCCL_OK(PyhcclCommGetTopology(comm, &t, host_of, (uint32_t)g_n));
  const char *want = getenv("CHECK_HOSTS");
  CHECK(want == NULL || t.nHosts == (uint32_t)atoi(want), "topology: %u hosts, want %s", t.nHosts, want);
  CHECK(host_of[g_rank] == t.hostId, "topology: host of own rank");
  uint32_t local = 0, below = 0;
  for (int r = 0; r < g_n; ++r) {
    char kind[8];
    HCCL_OK(PyhcclCommGetTransport(comm, (uint32_t)r, kind, sizeof(kind)));
    const char *expect = r == g_rank ? "self" : host_of[r] == t.hostId ? "shm" : "tcp";
    if (getenv("PYHCCL_TRANSPORT") != NULL && r != g_rank) expect = "tcp";
    CHECK(strcmp(kind, expect) == 0, "transport to rank %d is %s, want %s", r, kind, expect);
    if (host_of[r] == t.hostId) {
      ++local;
      if (r < g_rank) ++below;
    }
  }
  CHECK(t.localSize == local && t.localRank == below, "topology: local %u/%u, want %u/%u",
        t.localRank, t.localSize, below, local);
  char name[256];
  HCCL_OK(PyhcclCommGetHostName(comm, t.hostId, name, sizeof(name)));
  CHECK(name[0] != '\0', "host name empty");
  expect_err(PyhcclCommGetHostName(comm, t.nHosts, name, sizeof(name)), HCCL_E_PARA,
             "PyhcclCommGetHostName", "hostId");
  expect_err(PyhcclCommGetHostName(comm, t.hostId, name, 1), HCCL_E_PARA,
             "PyhcclCommGetHostName", "nameLen");
  expect_err(PyhcclCommGetTopology(comm, &t, host_of, (uint32_t)g_n + 1), HCCL_E_PARA,
             "PyhcclCommGetTopology", "rankCount");
  expect_err(PyhcclCommGetTopology(comm, NULL, NULL, 0), HCCL_E_PTR, "PyhcclCommGetTopology", "topo");
  expect_err(PyhcclCommGetTransport(comm, (uint32_t)g_n, name, sizeof(name)), HCCL_E_PARA,
             "PyhcclCommGetTransport", "peer");
}

void run_suite(HcclComm comm, aclrtStream s, int big) {
  t_topology(comm);
  static const size_t counts[] = {0, 1, 7, 1000};
  size_t nc = sizeof(counts) / sizeof(counts[0]);
  for (size_t ti = 0; ti < NTYPES; ++ti) {
    HcclDataType t = kTypes[ti];
    for (size_t ci = 0; ci < nc; ++ci) {
      size_t c = counts[ci];
      for (int op = 0; op < 4; ++op) {
        if (!reducible(t, op)) continue;
        t_allreduce(comm, s, t, op, c, (int)(ci & 1));
        t_reducescatter(comm, s, t, op, c, (int)((ci >> 1) & 1));
        t_reduce(comm, s, t, op, c, (int)(ci % g_n), 0);
      }
      t_broadcast(comm, s, t, c, (int)(ci % g_n));
      t_allgather(comm, s, t, c, (int)(ci & 1));
      t_scatter(comm, s, t, c, g_n - 1);
      t_gather(comm, s, t, c, (int)(ci % g_n), (int)((ci >> 1) & 1));
      t_alltoall(comm, s, t, c, (int)(ci & 1));
      t_sendrecv(comm, s, t, c, (int)(ci & 1));
    }
    t_alltoallv(comm, s, t, 3);
    t_allgatherv(comm, s, t, 5);
    if (reducible(t, 0)) t_reducescatterv(comm, s, t, (int)(ti % 4), 4);
  }
  HCCL_OK(HcclBarrier(comm, s));
  sync_ok(s, "Barrier");
  static const HcclDataType ftypes[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP64,
                                        HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16};
  for (int k = 0; k < 4; ++k) {
    t_determinism(comm, s, ftypes[k], 1000);   /* latency path */
    t_determinism(comm, s, ftypes[k], 100003); /* chunked, or single copy */
  }
  if (!big) return;
  const size_t n = 1000003;
  t_allreduce(comm, s, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, n, 0);
  t_allreduce(comm, s, HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, n, 1);
  t_allreduce(comm, s, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, n, 0);
  t_allreduce(comm, s, HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, n, 1);
  t_allreduce(comm, s, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_MIN, n, 0);
  t_reduce(comm, s, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_SUM, n, g_n - 1, 1);
  t_reducescatter(comm, s, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, n, 0);
  t_reducescatter(comm, s, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_MIN, n, 1);
  t_broadcast(comm, s, HCCL_DATA_TYPE_INT64, n, g_n - 1);
  t_allgather(comm, s, HCCL_DATA_TYPE_FP32, n, 1);
  t_allgather(comm, s, HCCL_DATA_TYPE_UINT8, n, 0);
  t_scatter(comm, s, HCCL_DATA_TYPE_FP16, n, 0);
  t_gather(comm, s, HCCL_DATA_TYPE_INT32, n, g_n - 1, 1);
  t_alltoall(comm, s, HCCL_DATA_TYPE_FP32, n / 3, 1);
  t_alltoall(comm, s, HCCL_DATA_TYPE_INT16, n / 5, 0);
  t_alltoallv(comm, s, HCCL_DATA_TYPE_INT32, 100003);
  t_allgatherv(comm, s, HCCL_DATA_TYPE_UINT16, 200001);
  t_reducescatterv(comm, s, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, 200001);
  t_sendrecv(comm, s, HCCL_DATA_TYPE_FP64, n, 1);
  t_sendrecv(comm, s, HCCL_DATA_TYPE_INT8, n, 0);
}

/* Two communicators at once: interleaved ops on both, on two streams. */
void run_two_comms(HcclComm a, HcclComm b, aclrtStream sa, aclrtStream sb) {
  const size_t n = 300001;
  float *x = alloc(n * 4), *y = alloc(n * 4);
  for (int it = 0; it < 3; ++it) {
    for (size_t i = 0; i < n; ++i) {
      x[i] = (float)gen(0, HCCL_DATA_TYPE_FP32, g_rank, i);
      y[i] = (float)gen(0, HCCL_DATA_TYPE_FP32, g_rank, i + 1);
    }
    HCCL_OK(HcclAllReduce(x, x, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, a, sa));
    HCCL_OK(HcclAllReduce(y, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, b, sb));
    sync_ok(sa, "two comms a");
    sync_ok(sb, "two comms b");
    struct Want wa = {0, HCCL_DATA_TYPE_FP32, 0, 0}, wb = {0, HCCL_DATA_TYPE_FP32, 0, 1};
    compare("two comms a", HCCL_DATA_TYPE_FP32, x, 0, n, want_reduced, &wa);
    compare("two comms b", HCCL_DATA_TYPE_FP32, y, 0, n, want_reduced, &wb);
  }
  char na[128] = "", nb[128] = "";
  HCCL_OK(HcclGetCommName(a, na));
  HCCL_OK(HcclGetCommName(b, nb));
  CHECK(strcmp(na, "check_a") == 0 && strcmp(nb, "check_b") == 0, "names %s %s", na, nb);
  HcclComm found = NULL;
  HCCL_OK(HcclCommGetHandleWithName("check_b", &found));
  CHECK(found == b, "HcclCommGetHandleWithName");
  release(x);
  release(y);
}

/* HCCL_DETERMINISTIC is what HcclGetConfig reports until HcclSetConfig; the
 * global value is the default of communicators created afterwards. */
static HcclComm one_rank_comm(int det_cfg) {
  HcclRootInfo ri;
  HcclComm c = NULL;
  HCCL_OK(HcclGetRootInfo(&ri));
  if (det_cfg < 0) {
    HCCL_OK(HcclCommInitRootInfo(1, &ri, 0, &c));
  } else {
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclDeterministic = (uint32_t)det_cfg;
    HCCL_OK(HcclCommInitRootInfoConfig(1, &ri, 0, &cfg, &c));
  }
  return c;
}
static int comm_det(HcclComm c) {
  HcclConfigValue v = {-1};
  HCCL_OK(HcclGetCommConfig(c, HCCL_DETERMINISTIC, &v));
  return v.value;
}
int run_config(int expect_env) {
  HcclConfigValue v = {-1};
  HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &v));
  CHECK(v.value == expect_env, "HcclGetConfig before HcclSetConfig = %d, want %d", v.value,
        expect_env);
  HcclComm a = one_rank_comm(-1), b = one_rank_comm(0);
  CHECK(comm_det(a) == expect_env, "comm without hcclDeterministic: %d, want %d", comm_det(a),
        expect_env);
  CHECK(comm_det(b) == 0, "comm with hcclDeterministic 0: %d", comm_det(b));
  v.value = 2;
  HCCL_OK(HcclSetConfig(HCCL_DETERMINISTIC, v));
  v.value = -1;
  HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &v));
  CHECK(v.value == 2, "HcclGetConfig after HcclSetConfig(2) = %d", v.value);
  HcclComm c = one_rank_comm(-1), d = one_rank_comm(1);
  CHECK(comm_det(c) == 2, "comm created after HcclSetConfig(2): %d", comm_det(c));
  CHECK(comm_det(d) == 1, "comm with hcclDeterministic 1: %d", comm_det(d));
  CHECK(comm_det(a) == expect_env, "earlier comm changed to %d", comm_det(a));
  v.value = 3;
  expect_err(HcclSetConfig(HCCL_DETERMINISTIC, v), HCCL_E_PARA, "HcclSetConfig", NULL);
  HCCL_OK(HcclCommDestroy(a));
  HCCL_OK(HcclCommDestroy(b));
  HCCL_OK(HcclCommDestroy(c));
  HCCL_OK(HcclCommDestroy(d));
  if (g_fail == 0) printf("rank %d: PASS config\n", g_rank);
  return g_fail != 0;
}

int run_perf(HcclComm comm, aclrtStream s, size_t bytes, int iters) {
  size_t n = bytes / 4;
  float *x = alloc(n * 4), *y = alloc(n * 4);
  for (size_t i = 0; i < n; ++i) x[i] = (float)(i % 7);
  for (int i = 0; i < 3; ++i)
    HCCL_OK(HcclAllReduce(x, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  HCCL_OK(HcclBarrier(comm, s));
  ACL_OK(aclrtSynchronizeStream(s));
  double t0 = now_s();
  for (int i = 0; i < iters; ++i)
    HCCL_OK(HcclAllReduce(x, y, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  ACL_OK(aclrtSynchronizeStream(s));
  double us = (now_s() - t0) / iters * 1e6;
  int bad = 0;
  for (size_t i = 0; i < n; ++i) bad += y[i] != (float)(i % 7) * g_n;
  CHECK(bad == 0, "perf result wrong in %d elements", bad);
  printf("rank %d: PASS perf bytes=%zu time_us=%.1f busbw_GBps=%.3f\n", g_rank, bytes, us,
         bytes / us * 1e-3 * 2.0 * (g_n - 1) / g_n);
  release(x);
  release(y);
  return g_fail != 0;
}
