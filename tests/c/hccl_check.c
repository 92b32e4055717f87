/*
 * Multi-process check of libhccl's communicators and collectives, without MPI.
 * This file holds main and the mode table (kModes); the checks are in
 * hccl_values.c (typed values, buffers), hccl_modes_coll.c (one check per
 * collective), hccl_modes_suite.c (suite, config, perf), hccl_modes_faults.c
 * (kill, timeout, abort, sigstop, late, mismatch) and hccl_modes_p2p.c
 * (p2pring, order, inline), sharing hccl_check.h. Build them together:
 *   gcc -std=c99 -I include tests/c/hccl_check.c tests/c/hccl_values.c
 *       tests/c/hccl_modes_*.c -lhccl -lascendcl -lpthread -lm
 *
 *   hccl_check MODE RANK NRANKS ROOTFILE [ARGS]
 *   hccl_check --list           the names of the modes (the table kModes, at the end)
 *
 * Rank 0 writes HcclGetRootInfo's blob to ROOTFILE (ROOTFILE.b for a second
 * communicator); the other ranks poll for it. Modes:
 *   suite [host|device]   every collective x dtypes x ops x counts, in place and
 *                         not, on two communicators at once; argument errors
 *   initfail              set-up fails on every rank with one message (a fault
 *                         set in the environment of one rank)
 *   timeout [cfg]         the last rank never calls the collective: the others
 *                         must fail within seconds (HCCL_EXEC_TIMEOUT=2, or
 *                         with "cfg" the config's hcclExecTimeOut = 2)
 *   kill [COUNT host|device]  the last rank SIGKILLs itself mid-collective: the
 *                         others must fail, not hang
 *   abort                 rank 0 aborts (PyhcclCommAbort) while the others wait
 *   sigstop               the last rank stops itself mid-collective (SIGCONT by
 *                         the driver): no rank succeeds on abandoned buffers
 *   late                  the last rank comes after the others timed out
 *   mismatch WHAT         rank 0 calls something else (another count, root,
 *                         dtype, op...): all ranks must fail fast
 *   mismatch_v KIND HOW   KIND allgatherv|reducescatterv: rank 0 passes other
 *                         counts (HOW "other", or "zero": all 0): HCCL_E_PARA
 *                         on every rank, fast
 *   config DET            HcclGetConfig reads HCCL_DETERMINISTIC (DET expected);
 *                         HcclSetConfig is the default of later communicators
 *   perf BYTES ITERS [host|device]  time of a float32 sum AllReduce
 *   inline WHAT           small operations that may run on the calling thread:
 *                         "crossed" two communicators called in opposite orders
 *                         on two streams, joined by an event; "late" rank 0
 *                         calls only after the others' calls have returned;
 *                         "done" (with PYHCCL_INLINE_US=1000000) the op
 *                         has completed when the call returns
 *   p2pring WHAT COUNT    a ring of HcclSend then HcclRecv of COUNT floats:
 *                         "ring" without a group is a deadlock above the
 *                         channel size: every rank fails within seconds saying
 *                         so; "timeout" the same where it cannot be seen (other
 *                         hosts): the timeout names group(); "group" inside
 *                         HcclGroupStart/End delivers; "late" rank 0 receives
 *                         first, 1 s late: no deadlock, everything arrives
 *   order WHAT COUNT      two communicators (order_a, order_b), an AllReduce of
 *                         COUNT floats on each, both enqueued on one stream:
 *                         "opposite" rank 0 calls a then b, the others b then
 *                         a: every rank fails within seconds naming both;
 *                         "off" the same with PYHCCL_ORDER_CHECK=0: it times out
 *                         (HCCL_EXEC_TIMEOUT); "same" every rank a then b: it works
 * Each rank prints "rank R: PASS ..." and exits 0 when all went well.
 */

#include "hccl_check.h"

int g_device_mem;

HcclComm make_comm(const char *path, const char *name, uint32_t buffer_mb, int32_t exec_timeout) {
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  if (name != NULL) snprintf(cfg.hcclCommName, sizeof(cfg.hcclCommName), "%s", name);
  if (buffer_mb) cfg.hcclBufferSize = buffer_mb;
  if (exec_timeout) cfg.hcclExecTimeOut = exec_timeout;
  HcclComm comm = init_comm(path, name != NULL ? &cfg : NULL);
  uint32_t size = 0, rank = 99;
  HCCL_OK(HcclGetRankSize(comm, &size));
  HCCL_OK(HcclGetRankId(comm, &rank));
  CHECK(size == (uint32_t)g_n && rank == (uint32_t)g_rank, "rank %u size %u", rank, size);
  return comm;
}

/* ---- the modes: one table ------------------------------------------------ */

/* What main hands a mode: its own arguments (those after ROOTFILE), the stream,
 * and the communicator main made where the table asks for one (a mode that
 * destroys it sets it to NULL). */
struct Run {
  const char *rootfile;
  int argc;
  char **argv;
  aclrtStream s;
  HcclComm comm;
};

/* The COUNT argument of timeout and kill: given when more arguments follow it. */
static size_t count_arg(const struct Run *r) {
  return r->argc > 1 ? (size_t)atoll(r->argv[0]) : (size_t)1 << 20;
}

static int mode_suite(struct Run *r) {
  const char *mem = g_device_mem ? "device" : "host";
  char path_b[4096];
  snprintf(path_b, sizeof(path_b), "%s.b", r->rootfile);
  HcclComm comm = make_comm(r->rootfile, "check_a", 0, 0);
  HcclComm comm_b = make_comm(path_b, "check_b", 1, 0); /* 1 MB: smaller slots */
  aclrtStream sb;
  ACL_OK(aclrtCreateStream(&sb));
  t_errors(comm, r->s);
  run_suite(comm, r->s, 1);
  run_suite(comm_b, NULL, 0); /* NULL = the default stream */
  run_two_comms(comm, comm_b, r->s, sb);
  HCCL_OK(HcclCommDestroy(comm_b));
  uint32_t u;
  expect_err(HcclGetRankSize(comm_b, &u), HCCL_E_PARA, "HcclGetRankSize", "not a live");
  ACL_OK(aclrtDestroyStream(sb));
  HCCL_OK(HcclCommDestroy(comm));
  if (g_fail == 0) printf("rank %d: PASS suite %d checks (%s memory)\n", g_rank, g_checks, mem);
  return g_fail != 0;
}

/* Set-up must fail on every rank with one verdict, which the test reads. */
static int mode_initfail(struct Run *r) {
  HcclRootInfo ri;
  HcclComm bad = NULL;
  get_root_info(r->rootfile, &ri);
  double t0 = now_s();
  HcclResult res = HcclCommInitRootInfo(g_n, &ri, g_rank, &bad);
  CHECK(res != HCCL_SUCCESS && bad == NULL, "set-up succeeded (%d)", (int)res);
  printf("rank %d: init failed %d after %.1f s: %s\n", g_rank, (int)res, now_s() - t0,
         aclGetRecentErrMsg());
  if (g_fail == 0) printf("rank %d: PASS init failed\n", g_rank);
  return g_fail != 0;
}

/* timeout cfg: the 2 s limit comes from the config, not HCCL_EXEC_TIMEOUT. */
static int mode_timeout(struct Run *r) {
  int cfg = r->argc > 0 && strcmp(r->argv[0], "cfg") == 0;
  HcclComm comm = make_comm(r->rootfile, cfg ? "check_a" : NULL, 0, cfg ? 2 : 0);
  return run_failure(comm, r->s, 0, count_arg(r)); /* destroys comm */
}
static int mode_kill(struct Run *r) {
  int rc = run_failure(r->comm, r->s, 1, count_arg(r));
  r->comm = NULL; /* destroyed there */
  return rc;
}
static int mode_abort(struct Run *r) {
  int rc = run_abort(r->comm, r->s, r->rootfile);
  r->comm = NULL; /* destroyed there */
  return rc;
}
static int mode_sigstop(struct Run *r) { return run_sigstop(r->comm, r->s); }
static int mode_late(struct Run *r) { return run_late(r->comm, r->s); }
static int mode_mismatch(struct Run *r) { return run_mismatch(r->comm, r->s, r->argv[0]); }
static int mode_pipeline(struct Run *r) { return run_pipeline(r->comm, r->s, r->argv[0]); }
static int mode_held(struct Run *r) { return run_held(r->comm, r->s); }
static int mode_mismatch_v(struct Run *r) {
  return run_mismatch_v(r->comm, r->s, r->argv[0], r->argv[1]);
}
static int mode_config(struct Run *r) { return run_config(atoi(r->argv[0])); }
static int mode_perf(struct Run *r) {
  return run_perf(r->comm, r->s, (size_t)atoll(r->argv[0]), atoi(r->argv[1]));
}
static int mode_inline(struct Run *r) { return run_inline(r->comm, r->rootfile, r->s, r->argv[0]); }
static int mode_p2pring(struct Run *r) {
  return run_p2p_ring(r->comm, r->s, r->argv[0], (size_t)atoll(r->argv[1]));
}
static int mode_order(struct Run *r) {
  return run_order(r->rootfile, r->s, r->argv[0], (size_t)atoll(r->argv[1]));
}

/* Every mode: its name, its arguments (a last "host" or "device" picks the
 * memory of its buffers), how many it needs, whether main first makes a
 * communicator over every rank, and its function. `hccl_check --list` prints
 * the names; tests/c/test_c_hccl.py runs every one of them. */
static const struct Mode {
  const char *name, *args;
  int nargs, comm;
  int (*run)(struct Run *r);
} kModes[] = {
    {"suite", "[host|device]", 0, 0, mode_suite},
    {"initfail", "", 0, 0, mode_initfail},
    {"timeout", "[cfg]", 0, 0, mode_timeout},
    {"kill", "[COUNT host|device]", 0, 1, mode_kill},
    {"abort", "", 0, 1, mode_abort},
    {"sigstop", "[host|device]", 0, 1, mode_sigstop},
    {"late", "", 0, 1, mode_late},
    {"mismatch", "WHAT", 1, 1, mode_mismatch},
    {"pipeline", "broadcast|reduce", 1, 1, mode_pipeline},
    {"held", "", 0, 1, mode_held},
    {"mismatch_v", "KIND HOW", 2, 1, mode_mismatch_v},
    {"config", "DET", 1, 0, mode_config},
    {"perf", "BYTES ITERS [host|device]", 2, 1, mode_perf},
    {"inline", "WHAT", 1, 1, mode_inline},
    {"p2pring", "WHAT COUNT [host|device]", 2, 1, mode_p2pring},
    {"order", "WHAT COUNT [host|device]", 2, 0, mode_order},
};
#define NMODES (sizeof(kModes) / sizeof(kModes[0]))

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < NMODES; ++i) printf("%s\n", kModes[i].name);
    return 0;
  }
  const struct Mode *mode = NULL;
  for (size_t i = 0; argc > 1 && i < NMODES; ++i)
    if (strcmp(argv[1], kModes[i].name) == 0) mode = &kModes[i];
  if (mode == NULL || argc < 5 + mode->nargs) {
    fprintf(stderr, "usage: %s MODE RANK NRANKS ROOTFILE [ARGS], or --list; MODE ARGS:\n", argv[0]);
    for (size_t i = 0; i < NMODES; ++i) fprintf(stderr, "  %s %s\n", kModes[i].name, kModes[i].args);
    return 2;
  }
  g_rank = atoi(argv[2]);
  g_n = atoi(argv[3]);
  g_device_mem = argc > 5 && strcmp(argv[argc - 1], "device") == 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  ACL_OK(aclInit(NULL));
  ACL_OK(aclrtSetDevice(0));
  struct Run run = {argv[4], argc - 5, argv + 5, NULL, NULL};
  ACL_OK(aclrtCreateStream(&run.s));
  if (mode->comm) run.comm = make_comm(run.rootfile, NULL, 0, 0);
  int rc = mode->run(&run);
  if (run.comm) HCCL_OK(HcclCommDestroy(run.comm));
  ACL_OK(aclrtDestroyStream(run.s));
  aclrtResetDevice(0);
  aclFinalize();
  return rc;
}
