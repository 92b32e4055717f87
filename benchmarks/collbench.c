/* pyhccl beside MPI, from C, for every collective, data type and size, in one run.
 *
 *   make benchmarks/collbench
 *   mpiexec -n 2 benchmarks/collbench [-o allreduce,broadcast] [-d float32,float16,bfloat16]
 *                                     [-b 8] [-e 64M] [-f 4] [-t 0.03] [--tsv]
 *
 * Per size and collective, three timings, each the slowest rank's time per operation
 * (ranks start together after a barrier):
 *   rtt     one pyhccl operation, then aclrtSynchronizeStream, repeated (what a caller
 *           that needs the result at once feels: inference, a loss value)
 *   queued  pyhccl operations enqueued 50 at a time, one synchronize after each 50
 *           (throughput, as a training step that queues its gradient buckets feels it)
 *   mpi     the MPI call on the same bytes, repeated (MPI's calls are blocking: its round
 *           trip and its throughput are the same number)
 * Three trials alternate which library goes first; each number is the median trial.
 * Sizes follow nccl-tests: the larger buffer (AllGather's output, ReduceScatter's and
 * AlltoAll's input); busbw = size / time x the collective's factor. Every pyhccl result is
 * checked once per size (small integers, exact in every type); a wrong element fails the run.
 * First line: the memcpy ceiling (every rank copying at once, the bandwidth one rank gets)
 * and the single-copy AllReduce bound 4(n-1)/(3n-1) times it (docs/performance.rst). */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define CHECK_ACL(call)                                                                       \
  do {                                                                                        \
    aclError e_ = (call);                                                                     \
    if (e_ != ACL_SUCCESS) die(#call, aclGetRecentErrMsg());                                  \
  } while (0)
#define CHECK_HCCL(call)                                                                      \
  do {                                                                                        \
    HcclResult r_ = (call);                                                                   \
    if (r_ != HCCL_SUCCESS) die(#call, aclGetRecentErrMsg());                                 \
  } while (0)

static int g_rank, g_n;

static void die(const char *what, const char *msg) {
  fprintf(stderr, "collbench rank %d: %s failed: %s\n", g_rank, what, msg ? msg : "");
  MPI_Abort(MPI_COMM_WORLD, 2);
}

enum op_kind { ALLREDUCE, REDUCESCATTER, ALLGATHER, BROADCAST, REDUCE, ALLTOALL, N_OPS };
static const char *const OP_NAMES[N_OPS] = {"allreduce", "reducescatter", "allgather",
                                            "broadcast", "reduce",        "alltoall"};

struct dtype {
  const char *name;
  HcclDataType hccl;
  MPI_Datatype mpi; /* MPI_DATATYPE_NULL: MPI cannot reduce it (16-bit floats) */
  MPI_Datatype mpi_move; /* same-width type for collectives that only move bytes */
  size_t size;
};

static struct dtype dtypes_table(const char *name) {
  if (!strcmp(name, "float32")) return (struct dtype){name, HCCL_DATA_TYPE_FP32, MPI_FLOAT, MPI_FLOAT, 4};
  if (!strcmp(name, "float16")) return (struct dtype){name, HCCL_DATA_TYPE_FP16, MPI_DATATYPE_NULL, MPI_SHORT, 2};
  if (!strcmp(name, "bfloat16")) return (struct dtype){name, HCCL_DATA_TYPE_BFP16, MPI_DATATYPE_NULL, MPI_SHORT, 2};
  if (!strcmp(name, "int32")) return (struct dtype){name, HCCL_DATA_TYPE_INT32, MPI_INT, MPI_INT, 4};
  if (!strcmp(name, "float64")) return (struct dtype){name, HCCL_DATA_TYPE_FP64, MPI_DOUBLE, MPI_DOUBLE, 8};
  if (g_rank == 0) fprintf(stderr, "collbench: unknown data type %s\n", name);
  MPI_Abort(MPI_COMM_WORLD, 2);
  return (struct dtype){0};
}

/* ---- values: small integers, exact in every type --------------------------------- */
static uint16_t half_of(float f) { /* exact for the small integers used here */
  uint32_t b;
  memcpy(&b, &f, 4);
  if (f == 0.0f) return 0;
  int exp = (int)((b >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(((b >> 16) & 0x8000) | (exp << 10) | ((b >> 13) & 0x3ff));
}
static float float_of_half(uint16_t h) {
  if ((h & 0x7fff) == 0) return 0.0f;
  uint32_t b = ((uint32_t)(h & 0x8000) << 16) | ((uint32_t)(((h >> 10) & 0x1f) - 15 + 127) << 23) |
               ((uint32_t)(h & 0x3ff) << 13);
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static void store(const struct dtype *t, void *p, size_t i, double v) {
  float f = (float)v;
  uint32_t b;
  switch (t->hccl) {
    case HCCL_DATA_TYPE_FP32: ((float *)p)[i] = f; break;
    case HCCL_DATA_TYPE_FP64: ((double *)p)[i] = v; break;
    case HCCL_DATA_TYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case HCCL_DATA_TYPE_FP16: ((uint16_t *)p)[i] = half_of(f); break;
    default: memcpy(&b, &f, 4); ((uint16_t *)p)[i] = (uint16_t)(b >> 16); break;
  }
}
static double load(const struct dtype *t, const void *p, size_t i) {
  uint32_t b;
  float f;
  switch (t->hccl) {
    case HCCL_DATA_TYPE_FP32: return ((const float *)p)[i];
    case HCCL_DATA_TYPE_FP64: return ((const double *)p)[i];
    case HCCL_DATA_TYPE_INT32: return ((const int32_t *)p)[i];
    case HCCL_DATA_TYPE_FP16: return float_of_half(((const uint16_t *)p)[i]);
    default: b = (uint32_t)((const uint16_t *)p)[i] << 16; memcpy(&f, &b, 4); return f;
  }
}
static double value(int rank, size_t j) { return (double)((j + (size_t)rank) % 5 + 1); }

/* ---- one collective, one size ----------------------------------------------------- */
struct point {
  enum op_kind op;
  const struct dtype *t;
  size_t bytes;  /* nccl-tests' size */
  uint64_t count; /* the count argument */
  size_t in_bytes, out_bytes;
  void *dsend, *drecv; /* device (aclrtMalloc) */
  void *hsend, *hrecv; /* host, for MPI */
  HcclComm comm;
  aclrtStream stream;
};

static void hccl_once(const struct point *p) {
  HcclDataType d = p->t->hccl;
  switch (p->op) {
    case ALLREDUCE: CHECK_HCCL(HcclAllReduce(p->dsend, p->drecv, p->count, d, HCCL_REDUCE_SUM, p->comm, p->stream)); break;
    case REDUCESCATTER: CHECK_HCCL(HcclReduceScatter(p->dsend, p->drecv, p->count, d, HCCL_REDUCE_SUM, p->comm, p->stream)); break;
    case ALLGATHER: CHECK_HCCL(HcclAllGather(p->dsend, p->drecv, p->count, d, p->comm, p->stream)); break;
    case BROADCAST: CHECK_HCCL(HcclBroadcast(p->drecv, p->count, d, 0, p->comm, p->stream)); break;
    case REDUCE: CHECK_HCCL(HcclReduce(p->dsend, p->drecv, p->count, d, HCCL_REDUCE_SUM, 0, p->comm, p->stream)); break;
    case ALLTOALL: CHECK_HCCL(HcclAlltoAll(p->dsend, p->count, d, p->drecv, p->count, d, p->comm, p->stream)); break;
    default: break;
  }
}

static int mpi_supported(const struct point *p) {
  int reduces = p->op == ALLREDUCE || p->op == REDUCESCATTER || p->op == REDUCE;
  return !reduces || p->t->mpi != MPI_DATATYPE_NULL;
}

static void mpi_once(const struct point *p) {
  MPI_Datatype d = p->t->mpi, m = p->t->mpi_move;
  int c = (int)p->count;
  switch (p->op) {
    case ALLREDUCE: MPI_Allreduce(p->hsend, p->hrecv, c, d, MPI_SUM, MPI_COMM_WORLD); break;
    case REDUCESCATTER: MPI_Reduce_scatter_block(p->hsend, p->hrecv, c, d, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(p->hsend, c, m, p->hrecv, c, m, MPI_COMM_WORLD); break;
    case BROADCAST: MPI_Bcast(p->hrecv, c, m, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(p->hsend, p->hrecv, c, d, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(p->hsend, c, m, p->hrecv, c, m, MPI_COMM_WORLD); break;
    default: break;
  }
}

/* The expected output element i (of out_bytes / size), or NAN where nothing is defined. */
static double expected(const struct point *p, size_t i) {
  size_t c = p->count;
  double s = 0;
  switch (p->op) {
    case ALLREDUCE:
      for (int r = 0; r < g_n; r++) s += value(r, i);
      return s;
    case REDUCE:
      if (g_rank != 0) return NAN;
      for (int r = 0; r < g_n; r++) s += value(r, i);
      return s;
    case REDUCESCATTER:
      for (int r = 0; r < g_n; r++) s += value(r, (size_t)g_rank * c + i);
      return s;
    case ALLGATHER: return value((int)(i / c), i % c);
    case BROADCAST: return value(0, i);
    case ALLTOALL: return value((int)(i / c), (size_t)g_rank * c + i % c);
    default: return NAN;
  }
}

static void fill_inputs(const struct point *p, void *host) {
  size_t n_in = p->in_bytes / p->t->size;
  for (size_t j = 0; j < n_in; j++) store(p->t, host, j, value(g_rank, j));
  CHECK_ACL(aclrtMemcpy(p->dsend, p->in_bytes, host, p->in_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  if (p->op == BROADCAST) /* in place: the root's buffer is the input */
    CHECK_ACL(aclrtMemcpy(p->drecv, p->out_bytes, host, p->in_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
}

/* Wrong elements of the first operation's result, over all ranks. */
static long check(const struct point *p, void *host) {
  fill_inputs(p, host);
  hccl_once(p);
  CHECK_ACL(aclrtSynchronizeStream(p->stream));
  CHECK_ACL(aclrtMemcpy(host, p->out_bytes, p->drecv, p->out_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  long wrong = 0, all;
  for (size_t i = 0; i < p->out_bytes / p->t->size; i++) {
    double e = expected(p, i);
    if (!isnan(e) && load(p->t, host, i) != e) wrong++;
  }
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

enum mode { RTT, QUEUED, MPI_CALL };
#define QUEUE_DEPTH 50 /* queued: operations in flight before a synchronize (a training step's worth) */

/* Seconds per operation, the slowest rank's. */
static double timed(const struct point *p, enum mode m, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (m == MPI_CALL) {
      mpi_once(p);
    } else {
      hccl_once(p);
      if (m == RTT || (i + 1) % QUEUE_DEPTH == 0) CHECK_ACL(aclrtSynchronizeStream(p->stream));
    }
  }
  if (m == QUEUED) CHECK_ACL(aclrtSynchronizeStream(p->stream));
  double t = (MPI_Wtime() - t0) / iters, slowest;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double bus_factor(enum op_kind op) {
  switch (op) {
    case ALLREDUCE: return 2.0 * (g_n - 1) / g_n;
    case REDUCESCATTER: case ALLGATHER: case ALLTOALL: return (double)(g_n - 1) / g_n;
    default: return 1.0;
  }
}

/* ---- the memcpy ceiling ----------------------------------------------------------- */
static double memcpy_bandwidth(size_t bytes) {
  char *a = malloc(bytes), *b = malloc(bytes);
  if (!a || !b) die("malloc", "out of memory");
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  double best = 0;
  for (int trial = 0; trial < 5; trial++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    memcpy(trial & 1 ? a : b, trial & 1 ? b : a, bytes);
    double t = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (bytes / slowest > best) best = bytes / slowest;
  }
  free(a);
  free(b);
  return best;
}

/* ---- arguments -------------------------------------------------------------------- */
static size_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

static void split(char *list, const char **out, int *n, int max) {
  *n = 0;
  for (char *tok = strtok(list, ","); tok && *n < max; tok = strtok(NULL, ",")) out[(*n)++] = tok;
}

static int iterations(double budget, double est) {
  int iters = (int)(budget / (est > 1e-7 ? est : 1e-7));
  return iters < 3 ? 3 : iters > 20000 ? 20000 : iters;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_n);

  char ops_arg[256] = "allreduce,reducescatter,allgather,broadcast,reduce,alltoall";
  char types_arg[256] = "float32";
  size_t min_bytes = 8, max_bytes = 64u << 20;
  int factor = 4, tsv = 0;
  double budget = 0.03; /* seconds per timing */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(a, "-o")) snprintf(ops_arg, sizeof ops_arg, "%s", v), i++;
    else if (!strcmp(a, "-d")) snprintf(types_arg, sizeof types_arg, "%s", v), i++;
    else if (!strcmp(a, "-b")) min_bytes = parse_size(v), i++;
    else if (!strcmp(a, "-e")) max_bytes = parse_size(v), i++;
    else if (!strcmp(a, "-f")) factor = atoi(v), i++;
    else if (!strcmp(a, "-t")) budget = atof(v), i++;
    else if (!strcmp(a, "--tsv")) tsv = 1;
    else {
      if (g_rank == 0) fprintf(stderr, "collbench: unknown argument %s (see the header of benchmarks/collbench.c)\n", a);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (factor < 2 || min_bytes < 1 || max_bytes < min_bytes) die("arguments", "need -f >= 2 and 1 <= -b <= -e");
  const char *op_names[N_OPS], *type_names[8];
  int n_ops, n_types;
  split(ops_arg, op_names, &n_ops, N_OPS);
  split(types_arg, type_names, &n_types, 8);

  /* One device per rank on its host; rank 0's root info travels over MPI. */
  MPI_Comm node;
  int local;
  uint32_t ndev;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  CHECK_ACL(aclInit(NULL));
  CHECK_ACL(aclrtGetDeviceCount(&ndev));
  CHECK_ACL(aclrtSetDevice((int32_t)(local % (int)ndev)));
  HcclRootInfo root;
  if (g_rank == 0) CHECK_HCCL(HcclGetRootInfo(&root));
  MPI_Bcast(&root, HCCL_ROOT_INFO_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
  struct point p = {0};
  CHECK_HCCL(HcclCommInitRootInfo((uint32_t)g_n, &root, (uint32_t)g_rank, &p.comm));
  CHECK_ACL(aclrtCreateStream(&p.stream));

  /* Buffers for the largest size; AllGather's and AlltoAll's outputs are n blocks. */
  size_t cap = max_bytes + 64;
  CHECK_ACL(aclrtMalloc(&p.dsend, cap, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&p.drecv, cap, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMemset(p.dsend, cap, 0, cap));
  CHECK_ACL(aclrtMemset(p.drecv, cap, 0, cap));
  p.hsend = malloc(cap);
  p.hrecv = malloc(cap);
  void *host = malloc(cap);
  if (!p.hsend || !p.hrecv || !host) die("malloc", "out of memory");
  memset(p.hsend, 0, cap);
  memset(p.hrecv, 0, cap);

  double mem_bw = memcpy_bandwidth(max_bytes);
  if (g_rank == 0) {
    printf("# collbench: %d rank%s; memcpy with every rank copying %zu bytes at once: %.2f GB/s per rank; "
           "single-copy AllReduce ceiling 4(n-1)/(3n-1) x that = %.2f GB/s busbw\n",
           g_n, g_n == 1 ? "" : "s", max_bytes, mem_bw / 1e9, g_n > 1 ? mem_bw * 4.0 * (g_n - 1) / (3.0 * g_n - 1) / 1e9 : 0.0);
    if (tsv) printf("op\tdtype\tbytes\trtt_us\tqueued_us\tmpi_us\tmpi_over_rtt\tmpi_over_queued\tbusbw_queued\tbusbw_mpi\n");
    else printf("%-13s %-8s %10s %10s %10s %10s %8s %8s %9s %9s\n", "op", "dtype", "bytes", "rtt us",
                "queued us", "mpi us", "mpi/rtt", "mpi/q", "busbw q", "busbw mpi");
    fflush(stdout);
  }

  int failed = 0;
  for (int oi = 0; oi < n_ops; oi++) {
    int op = -1;
    for (int k = 0; k < N_OPS; k++)
      if (!strcmp(op_names[oi], OP_NAMES[k])) op = k;
    if (op < 0) die("-o", "unknown collective (allreduce, reducescatter, allgather, broadcast, reduce, alltoall)");
    for (int ti = 0; ti < n_types; ti++) {
      struct dtype t = dtypes_table(type_names[ti]);
      p.op = (enum op_kind)op;
      p.t = &t;
      for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= (size_t)factor) {
        int blocks = (op == REDUCESCATTER || op == ALLGATHER || op == ALLTOALL) ? g_n : 1;
        size_t unit = t.size * (size_t)blocks; /* bytes per element of `count` */
        if (bytes < unit) continue;
        p.count = bytes / unit;
        p.bytes = p.count * unit;
        p.in_bytes = (op == ALLGATHER) ? p.count * t.size : p.bytes;
        p.out_bytes = (op == REDUCESCATTER) ? p.count * t.size : p.bytes;
        long wrong = check(&p, host);
        if (wrong) failed = 1;
        /* iterations for about `budget` seconds each, agreed by all ranks (timed() takes the
         * slowest rank's time); MPI gets its own count, as it may be far slower or faster */
        int with_mpi = mpi_supported(&p);
        int iters = iterations(budget, timed(&p, RTT, 3));
        int mpi_iters = with_mpi ? iterations(budget, timed(&p, MPI_CALL, 3)) : 0;
        double rtt[3], q[3], mpi[3];
        for (int trial = 0; trial < 3; trial++) {
          if (with_mpi && trial % 2 == 1) mpi[trial] = timed(&p, MPI_CALL, mpi_iters);
          rtt[trial] = timed(&p, RTT, iters);
          q[trial] = timed(&p, QUEUED, iters);
          if (with_mpi && trial % 2 == 0) mpi[trial] = timed(&p, MPI_CALL, mpi_iters);
        }
        qsort(rtt, 3, sizeof(double), cmp_double);
        qsort(q, 3, sizeof(double), cmp_double);
        qsort(mpi, 3, sizeof(double), cmp_double);
        if (g_rank == 0) {
          double bw = bus_factor(p.op) * (double)p.bytes / 1e9;
          char mpi_us[32] = "-", r1[32] = "-", r2[32] = "-", bmpi[32] = "-";
          if (with_mpi) {
            snprintf(mpi_us, sizeof mpi_us, "%.2f", mpi[1] * 1e6);
            snprintf(r1, sizeof r1, "%.2f", mpi[1] / rtt[1]);
            snprintf(r2, sizeof r2, "%.2f", mpi[1] / q[1]);
            snprintf(bmpi, sizeof bmpi, "%.2f", bw / mpi[1]);
          }
          const char *fmt = tsv ? "%s\t%s\t%zu\t%.2f\t%.2f\t%s\t%s\t%s\t%.2f\t%s%s\n"
                                : "%-13s %-8s %10zu %10.2f %10.2f %10s %8s %8s %9.2f %9s%s\n";
          printf(fmt, OP_NAMES[op], t.name, p.bytes, rtt[1] * 1e6, q[1] * 1e6, mpi_us, r1, r2, bw / q[1], bmpi,
                 wrong ? "  WRONG RESULT" : "");
          fflush(stdout);
        }
      }
    }
  }

  CHECK_HCCL(HcclCommDestroy(p.comm));
  CHECK_ACL(aclrtFree(p.dsend));
  CHECK_ACL(aclrtFree(p.drecv));
  CHECK_ACL(aclrtDestroyStream(p.stream));
  free(p.hsend);
  free(p.hrecv);
  free(host);
  CHECK_ACL(aclFinalize());
  MPI_Finalize();
  return failed;
}
