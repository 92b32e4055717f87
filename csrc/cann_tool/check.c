/* cann_tool check: a self test of the toolkit through its C libraries.
 *
 * Starts RANKS processes (fork; default 1), one device each, joins them into one HCCL
 * communicator (rank 0's root info reaches the others through pipes), runs AllReduce,
 * Broadcast, AllGather, ReduceScatter and Barrier at several sizes on device buffers
 * and compares every element with the value computed here; then the same ranks meet
 * again by group name through the acltdt communicator API (tdt.c). Exit status 0 when every
 * rank agrees, 1 when any result is wrong or any call fails, 2 on bad usage. A rank
 * that does not finish within the time limit is killed and named. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "cann_tool.h"
#include "check.h"
#include "hccl/hccl.h"

#define MAX_RANKS 64

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* One rank, in its own process: returns the exit status. */
static int rank_main(int rank, int nranks, int pipes[][2], int verbose, pid_t job) {
  struct check_ctx ctx = {.rank = rank, .nranks = nranks, .verbose = verbose};
  HcclRootInfo root;
  /* Keep only this rank's end: rank 0 the write ends, the others their read end, so a
   * rank 0 that dies early is seen as end of file rather than a wait forever. */
  for (int r = 0; r < nranks; r++) {
    if (rank != 0) close(pipes[r][1]);
    if (rank == 0 || r != rank) close(pipes[r][0]);
  }
  if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(rank) != ACL_SUCCESS) {
    const char *msg = aclGetRecentErrMsg();
    fprintf(stderr, "cann_tool check: rank %d: device %d: %s\n", rank, rank, msg ? msg : "");
    return 1;
  }
  if (rank == 0) {
    HcclResult res = HcclGetRootInfo(&root);
    if (res != HCCL_SUCCESS) {
      fprintf(stderr, "cann_tool check: HcclGetRootInfo: %s\n", HcclGetErrorString(res));
      return 1;
    }
    for (int r = 1; r < nranks; r++)
      if (write_all(pipes[r][1], &root, sizeof(root)) != 0) return 1;
  } else if (read_all(pipes[rank][0], &root, sizeof(root)) != 0) {
    fprintf(stderr, "cann_tool check: rank %d: rank 0 ended before sending its root info\n",
            rank);
    return 1;
  }
  if (rank == 0)
    for (int r = 0; r < nranks; r++) close(pipes[r][1]);
  else
    close(pipes[rank][0]);
  HcclResult res = HcclCommInitRootInfo((uint32_t)nranks, &root, (uint32_t)rank, &ctx.comm);
  if (res != HCCL_SUCCESS) {
    const char *msg = aclGetRecentErrMsg();
    fprintf(stderr, "cann_tool check: rank %d: HcclCommInitRootInfo: %s %s\n", rank,
            HcclGetErrorString(res), msg ? msg : "");
    return 1;
  }
  if (aclrtCreateStream(&ctx.stream) != ACL_SUCCESS) return 1;
  run_collective_checks(&ctx);
  HcclCommDestroy(ctx.comm);
  char group[64];  /* unique to this run of the tool */
  snprintf(group, sizeof(group), "cann_tool_check.%ld", (long)job);
  run_tdt_checks(&ctx, group);
  aclrtDestroyStream(ctx.stream);
  aclrtResetDevice(rank);
  aclFinalize();
  if (rank == 0)
    printf("cann_tool check: %d of %d checks passed on %d rank%s\n", ctx.passed,
           ctx.passed + ctx.failed, nranks, nranks == 1 ? "" : "s");
  fflush(stdout);
  return ctx.failed == 0 ? 0 : 1;
}

static int usage(FILE *out, int status) {
  fprintf(out,
          "usage: cann_tool check [-n RANKS] [-t SECONDS] [-v]\n"
          "Self test through the C libraries: RANKS processes (default 1, at most %d) join one\n"
          "HCCL communicator and run AllReduce, Broadcast, AllGather, ReduceScatter and\n"
          "Barrier at 1, 1031 and 262147 elements, then through the acltdt communicator\n"
          "API (ranks meeting by group name); every element is checked. -t: seconds\n"
          "before a rank that has not finished is killed (default 120). -v: every rank prints.\n"
          "Exit status: 0 all passed, 1 a check failed, 2 bad usage.\n",
          MAX_RANKS);
  return status;
}

static int parse_int(const char *text, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || *text == '\0' || *end != '\0' || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

int cmd_check(int argc, char **argv) {
  int nranks = 1, limit = 120, verbose = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return usage(stdout, 0);
    if (strcmp(a, "-v") == 0) {
      verbose = 1;
    } else if ((strcmp(a, "-n") == 0 || strcmp(a, "-t") == 0) && i + 1 < argc) {
      int is_n = a[1] == 'n';
      if (parse_int(argv[++i], 1, is_n ? MAX_RANKS : 86400, is_n ? &nranks : &limit) != 0) {
        fprintf(stderr, "cann_tool check: %s %s: expected an integer from 1 to %d\n", a,
                argv[i], is_n ? MAX_RANKS : 86400);
        return 2;
      }
    } else {
      fprintf(stderr, "cann_tool check: unexpected argument '%s'\n", a);
      return usage(stderr, 2);
    }
  }
  uint32_t ndev = 0;  /* reads PYHCCL_DEVICE_COUNT only: safe before fork */
  if (aclrtGetDeviceCount(&ndev) != ACL_SUCCESS || (uint32_t)nranks > ndev) {
    fprintf(stderr, "cann_tool check: -n %d: the runtime has %u devices, one per rank "
            "(PYHCCL_DEVICE_COUNT sets how many)\n", nranks, ndev);
    return 2;
  }
  printf("cann_tool check: %d rank%s (a process each), toolkit %s\n", nranks,
         nranks == 1 ? "" : "s", tool_prefix());
  fflush(stdout);

  int pipes[MAX_RANKS][2];
  for (int r = 0; r < nranks; r++)
    if (pipe(pipes[r]) != 0) {
      perror("cann_tool check: pipe");
      return 1;
    }
  pid_t pids[MAX_RANKS];
  int status[MAX_RANKS], done[MAX_RANKS] = {0};
  pid_t parent = getpid();
  for (int r = 0; r < nranks; r++) {
    pids[r] = fork();
    if (pids[r] < 0) {
      perror("cann_tool check: fork");
      for (int k = 0; k < r; k++) kill(pids[k], SIGKILL);
      return 1;
    }
    if (pids[r] == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  /* never outlive the tool */
      if (getppid() != parent) _exit(1);
      _exit(rank_main(r, nranks, pipes, verbose, parent));
    }
  }
  for (int r = 0; r < nranks; r++) {
    close(pipes[r][0]);
    close(pipes[r][1]);
  }

  /* Wait without spinning; after a failure the others get a short grace period. */
  int left = nranks, failed = 0;
  double deadline = now_s() + limit;
  while (left > 0) {
    int st;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < nranks; r++)
        if (pids[r] == pid) {
          done[r] = 1;
          status[r] = st;
          left--;
          if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            if (WIFSIGNALED(st))
              fprintf(stderr, "cann_tool check: rank %d was killed by signal %d\n", r,
                      WTERMSIG(st));
            if (!failed && now_s() + 10 < deadline) deadline = now_s() + 10;
            failed = 1;
          }
        }
      continue;
    }
    if (now_s() > deadline) {
      for (int r = 0; r < nranks; r++)
        if (!done[r]) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], NULL, 0);
          fprintf(stderr, "cann_tool check: rank %d did not finish %s; killed\n", r,
                  failed ? "after another rank failed" : "in time (-t)");
        }
      return 1;
    }
    sleep_ms(20);
  }
  for (int r = 0; r < nranks; r++)
    if (!(WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0)) return 1;
  return 0;
}
