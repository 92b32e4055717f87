/*
 * Communicator creation beyond the root info, from C:
 *
 *   comm_api_check subcomm RANK NRANKS ROOTFILE     HcclCreateSubCommConfig
 *   comm_api_check initall 0 NDEV -                 HcclCommInitAll (one process),
 *                                                   HcclCommRegCommStateCallback
 *   comm_api_check ranktable RANK NRANKS FILE       HcclCommInitClusterInfo[Config]
 *   comm_api_check badtables 0 1 - FILE TEXT [FILE TEXT ...]
 *       each FILE must fail HcclCommInitClusterInfo with a message containing TEXT
 */
#define _DEFAULT_SOURCE
#include <pthread.h>

#include "rank_check.h"

static void sync_ok(aclrtStream s, const char *what) {
  aclError e = aclrtSynchronizeStream(s);
  CHECK(e == ACL_SUCCESS, "%s: synchronize -> %d", what, (int)e);
}

/* AllReduce of every member's `mine` over comm; returns the sum. */
static int64_t sum_over(HcclComm comm, aclrtStream s, int64_t mine) {
  int64_t *buf = NULL;
  ACL_OK(aclrtMalloc((void **)&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ACL_OK(aclrtMemcpy(buf, 8, &mine, 8, ACL_MEMCPY_HOST_TO_DEVICE));
  HCCL_OK(HcclAllReduce(buf, buf, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
  sync_ok(s, "AllReduce");
  int64_t out = 0;
  ACL_OK(aclrtMemcpy(&out, 8, buf, 8, ACL_MEMCPY_DEVICE_TO_HOST));
  ACL_OK(aclrtFree(buf));
  return out;
}

static void check_sub(HcclComm sub, aclrtStream s, const uint32_t *ids, uint32_t n, uint32_t me,
                      const char *name) {
  uint32_t size = 0, rank = 99;
  CHECK(sub != NULL, "sub-communicator expected");
  if (sub == NULL) return;
  HCCL_OK(HcclGetRankSize(sub, &size));
  HCCL_OK(HcclGetRankId(sub, &rank));
  CHECK(size == n && rank == me, "sub-communicator size %u rank %u, want %u %u", size, rank, n, me);
  int64_t want = 0;
  for (uint32_t k = 0; k < n; ++k) want += 100 + ids[k];
  int64_t got = sum_over(sub, s, 100 + g_rank);
  CHECK(got == want, "AllReduce over the sub-communicator: %lld, want %lld", (long long)got,
        (long long)want);
  if (name != NULL) {
    char got_name[COMM_NAME_MAX_LENGTH];
    HCCL_OK(HcclGetCommName(sub, got_name));
    CHECK(strcmp(got_name, name) == 0, "sub-communicator name \"%s\", want \"%s\"", got_name, name);
  }
}

static void run_subcomm(const char *rootfile) {
  aclrtStream s;
  ACL_OK(aclrtCreateStream(&s));
  HcclCommConfig pcfg;
  HcclCommConfigInit(&pcfg);
  snprintf(pcfg.hcclCommName, sizeof(pcfg.hcclCommName), "parent");
  HcclComm world = init_comm(rootfile, &pcfg);
  const uint32_t NONE = 0xFFFFFFFFu;
  uint32_t ids[16], n = 0, me = 0;

  /* Even and odd ranks, two groups in one call. */
  for (int r = g_rank % 2; r < g_n; r += 2) {
    if (r == g_rank) me = n;
    ids[n++] = (uint32_t)r;
  }
  HcclComm half = NULL;
  uint64_t id = 10 + (uint64_t)(g_rank % 2);
  HCCL_OK(HcclCreateSubCommConfig(&world, n, ids, id, me, NULL, &half));
  check_sub(half, s, ids, n, me, g_rank % 2 ? "parent_sub_11" : "parent_sub_10");

  /* The last and the first rank, in that order (index = sub rank); the
   * others are not members. A config names it. */
  uint32_t pair[2] = {(uint32_t)(g_n - 1), 0};
  uint32_t pn = g_n > 1 ? 2 : 1;
  int member = g_rank == 0 || g_rank == g_n - 1;
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  snprintf(cfg.hcclCommName, sizeof(cfg.hcclCommName), "pair");
  HcclComm two = (HcclComm)0x1;
  HCCL_OK(HcclCreateSubCommConfig(&world, pn, member ? (g_n > 1 ? pair : pair + 1) : NULL,
                                  member ? 12 : NONE, g_rank == g_n - 1 ? 0 : (g_n > 1 ? 1 : 0),
                                  &cfg, &two));
  if (member) check_sub(two, s, g_n > 1 ? pair : pair + 1, pn, g_rank == g_n - 1 ? 0 : 1, "pair");
  else CHECK(two == NULL, "a rank outside the group gets NULL");

  /* A sub-communicator of a sub-communicator: every rank alone (one group
   * per rank, so one subCommId per rank). */
  HcclComm nested = NULL;
  uint32_t only = me;
  HCCL_OK(HcclCreateSubCommConfig(&half, 1, &only, 100 + me, 0, NULL, &nested));
  uint32_t self_id = (uint32_t)g_rank;
  check_sub(nested, s, &self_id, 1, 0, NULL);

  /* Bad calls fail on every rank, with the message of the rank at fault. */
  uint32_t all[16];
  for (int r = 0; r < g_n; ++r) all[r] = (uint32_t)r;
  HcclComm bad = NULL;
  HCCL_FAILS(HcclCreateSubCommConfig(&world, (uint32_t)g_n, all, 20,
                                     g_rank == 0 ? (uint32_t)(g_n > 1 ? 1 : 5) : (uint32_t)g_rank,
                                     NULL, &bad),
             HCCL_E_PARA, "rank 0: subCommRankId");
  if (g_n > 1)
    HCCL_FAILS(HcclCreateSubCommConfig(&world, (uint32_t)g_n, g_rank == g_n - 1 ? NULL : all, 21,
                                       (uint32_t)g_rank, NULL, &bad),
               HCCL_E_PARA, "is listed in the rankIds of subCommId 21 but passed rankIds == NULL");
  HCCL_FAILS(HcclCreateSubCommConfig(&world, n, ids, id, me, NULL, &bad), HCCL_E_PARA,
             "was already used with this communicator");
  uint32_t twice[2] = {0, 0};
  if (g_n > 1)
    HCCL_FAILS(HcclCreateSubCommConfig(&world, 2, g_rank == 0 ? twice : all, 22, (uint32_t)g_rank,
                                       NULL, &bad), HCCL_E_PARA, "lists rank 0 twice");
  HCCL_FAILS(HcclCreateSubCommConfig(&world, (uint32_t)g_n, all, 23, (uint32_t)g_rank, NULL,
                                     g_rank == g_n - 1 ? NULL : &bad),
             HCCL_E_PARA, "subComm is NULL");
  HCCL_FAILS(HcclCreateSubCommConfig(NULL, 1, all, 24, 0, NULL, &bad), HCCL_E_PTR, "comm is NULL");
  CHECK(bad == NULL, "no communicator from a refused call");
  /* The parent still works. */
  CHECK(sum_over(world, s, 1) == g_n, "AllReduce on the parent after the refused calls");

  HCCL_OK(HcclCommDestroy(nested));
  if (member) HCCL_OK(HcclCommDestroy(two));
  HCCL_OK(HcclCommDestroy(half));
  HCCL_OK(HcclCommDestroy(world));
  ACL_OK(aclrtDestroyStream(s));
}

/* ---- HcclCommInitAll: one thread per device runs the collective ---------- */

struct Worker {
  HcclComm comm;
  int32_t device;
  int64_t got;
  int rank;
};

static void *worker(void *arg) {
  struct Worker *w = arg;
  aclrtStream s;
  ACL_OK(aclrtSetDevice(w->device));
  ACL_OK(aclrtCreateStream(&s));
  w->got = sum_over(w->comm, s, 100 + w->rank);
  ACL_OK(aclrtDestroyStream(s));
  ACL_OK(aclrtResetDevice(w->device));
  return NULL;
}

struct Seen {
  int pre, post;
  HcclComm last;
};

static HcclResult on_state(HcclComm comm, HcclCommStatePhase phase, void *args) {
  struct Seen *seen = args;
  if (phase == HCCL_COMM_STATE_PHASE_DESTROY_PRE) ++seen->pre;
  if (phase == HCCL_COMM_STATE_PHASE_DESTROY_POST) ++seen->post;
  seen->last = comm;
  return HCCL_SUCCESS;
}

static void run_initall(int ndev) {
  int32_t devs[16];
  HcclComm comms[16];
  for (int i = 0; i < ndev; ++i) devs[i] = (ndev - 1 - i) * 2 % 8;  /* any distinct devices */
  if (ndev > 4) exit(2);
  HCCL_FAILS(HcclCommInitAll(0, devs, comms), HCCL_E_PARA, "ndev (0)");
  HCCL_FAILS(HcclCommInitAll(1, NULL, comms), HCCL_E_PTR, "devices is NULL");
  HCCL_FAILS(HcclCommInitAll(1, devs, NULL), HCCL_E_PTR, "comms is NULL");
  int32_t dup[2] = {3, 3}, far[1] = {4096};
  HCCL_FAILS(HcclCommInitAll(2, dup, comms), HCCL_E_PARA, "is listed twice");
  HCCL_FAILS(HcclCommInitAll(1, far, comms), HCCL_E_PARA, "devices[0] (4096) is not a device");

  HCCL_OK(HcclCommInitAll((uint32_t)ndev, devs, comms));
  struct Worker w[16];
  pthread_t th[16];
  for (int i = 0; i < ndev; ++i) {
    uint32_t r = 99, n = 0;
    HCCL_OK(HcclGetRankId(comms[i], &r));
    HCCL_OK(HcclGetRankSize(comms[i], &n));
    CHECK(r == (uint32_t)i && n == (uint32_t)ndev, "comms[%d]: rank %u of %u", i, r, n);
    w[i] = (struct Worker){comms[i], devs[i], 0, i};
    pthread_create(&th[i], NULL, worker, &w[i]);
  }
  int64_t want = 0;
  for (int i = 0; i < ndev; ++i) want += 100 + i;
  for (int i = 0; i < ndev; ++i) {
    pthread_join(th[i], NULL);
    CHECK(w[i].got == want, "rank %d: AllReduce %lld, want %lld", i, (long long)w[i].got,
          (long long)want);
  }

  /* State callbacks run around HcclCommDestroy. */
  struct Seen seen = {0, 0, NULL};
  HCCL_FAILS(HcclCommRegCommStateCallback(NULL, on_state, &seen), HCCL_E_PTR, "regName is NULL");
  HCCL_FAILS(HcclCommRegCommStateCallback("", on_state, &seen), HCCL_E_PARA, "regName");
  HCCL_FAILS(HcclCommRegCommStateCallback("nobody", NULL, NULL), HCCL_E_NOT_FOUND, "no callback");
  HCCL_OK(HcclCommRegCommStateCallback("check", on_state, &seen));
  for (int i = 0; i < ndev; ++i) HCCL_OK(HcclCommDestroy(comms[i]));
  CHECK(seen.pre == ndev && seen.post == ndev && seen.last == comms[ndev - 1],
        "callbacks: %d pre, %d post", seen.pre, seen.post);
  HCCL_OK(HcclCommRegCommStateCallback("check", NULL, NULL));
  HCCL_FAILS(HcclCommSuspend(comms[0]), HCCL_E_NOT_SUPPORT, "aclrtDeviceTaskAbort");
  HCCL_FAILS(HcclCommResume(comms[0]), HCCL_E_NOT_SUPPORT, "destroy the communicator");
}

/* ---- rank tables ---------------------------------------------------------- */

static void run_ranktable(const char *path) {
  aclrtStream s;
  ACL_OK(aclrtCreateStream(&s));
  HcclComm comm = NULL;
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  snprintf(cfg.hcclCommName, sizeof(cfg.hcclCommName), "from-table");
  if (g_rank % 2) HCCL_OK(HcclCommInitClusterInfoConfig(path, (uint32_t)g_rank, &cfg, &comm));
  else HCCL_OK(HcclCommInitClusterInfo(path, (uint32_t)g_rank, &comm));
  uint32_t n = 0, r = 99;
  HCCL_OK(HcclGetRankSize(comm, &n));
  HCCL_OK(HcclGetRankId(comm, &r));
  CHECK(n == (uint32_t)g_n && r == (uint32_t)g_rank, "rank %u of %u", r, n);
  CHECK(sum_over(comm, s, 1 + g_rank) == (int64_t)g_n * (g_n + 1) / 2, "AllReduce");
  HcclComm other = NULL;
  HCCL_FAILS(HcclCommInitClusterInfo(path, (uint32_t)g_n, &other), HCCL_E_PARA,
             "is not in the rank table");
  HCCL_OK(HcclCommDestroy(comm));
  ACL_OK(aclrtDestroyStream(s));
}

static void run_badtables(int argc, char **argv, int first) {
  for (int i = first; i + 1 < argc; i += 2) {
    HcclComm comm = NULL;
    HcclResult r = HcclCommInitClusterInfo(argv[i], 0, &comm);
    const char *m = aclGetRecentErrMsg();
    CHECK(r != HCCL_SUCCESS && comm == NULL && m != NULL && strstr(m, argv[i + 1]) != NULL &&
              strstr(m, "HcclCommInitClusterInfo") != NULL,
          "%s: returned %d with \"%s\", want \"%s\"", argv[i], (int)r, m ? m : "", argv[i + 1]);
    printf("%s -> %d: %s\n", argv[i], (int)r, m ? m : "");
  }
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s MODE RANK NRANKS FILE [ARGS]\n", argv[0]);
    return 2;
  }
  g_rank = atoi(argv[2]);
  g_n = atoi(argv[3]);
  if (g_n > 16) return 2;
  ACL_OK(aclrtSetDevice(0));
  if (strcmp(argv[1], "subcomm") == 0) run_subcomm(argv[4]);
  else if (strcmp(argv[1], "initall") == 0) run_initall(g_n);
  else if (strcmp(argv[1], "ranktable") == 0) run_ranktable(argv[4]);
  else if (strcmp(argv[1], "badtables") == 0) run_badtables(argc, argv, 5);
  else return 2;
  return finish();
}
