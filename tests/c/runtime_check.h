/*
 * What the files of runtime_check share (runtime_check.c: main, the host functions
 * and the first sections; runtime_memory.c, runtime_events.c, runtime_threads.c:
 * the other sections): the checking macros, time helpers, host functions for
 * aclrtLaunchHostFunc, and each section.
 */
#ifndef PYHCCL_TESTS_C_RUNTIME_CHECK_H_
#define PYHCCL_TESTS_C_RUNTIME_CHECK_H_

#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      const char *m_ = aclGetRecentErrMsg();                                         \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (recent error: %s)\n",                \
              __FILE__, __LINE__, #cond, m_ ? m_ : "(none)");                        \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)
#define OK(call) CHECK((call) == ACL_SUCCESS)
/* The call fails with `code` and leaves a message that names `api`. */
#define FAILS(call, code, api)                                                       \
  do {                                                                               \
    aclError e_ = (call);                                                            \
    if (e_ != (code)) {                                                              \
      fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n",                   \
              __FILE__, __LINE__, #call, e_, (int)(code), #code);                    \
      exit(1);                                                                       \
    }                                                                                \
    const char *m_ = aclGetRecentErrMsg();                                           \
    CHECK(m_ != NULL && strstr(m_, api) != NULL);                                    \
  } while (0)

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* The host runtime's Ctrl-C hooks (Python's synchronize uses them). */
extern void hostrtNoteInterrupt(void);
extern uint64_t hostrtInterruptCount(void);
extern aclError hostrtSynchronizeStreamInterruptible(aclrtStream, uint64_t, int32_t *);

/* runtime_check.c: host functions for aclrtLaunchHostFunc; host_sleep's argument
 * is milliseconds, host_count's an int to count in, the Flag ones a Flag. */
typedef struct {
  volatile int flag;
  volatile int observed;
} Flag;
void host_sleep(void *arg);
void host_sleep_then_set(void *arg);
void host_observe(void *arg);
void host_count(void *arg);
void host_note_interrupt(void *arg);

/* runtime_memory.c */
void check_memory(void);
void check_streams(void);

/* runtime_events.c */
void check_events(void);
void check_callbacks(void);

/* runtime_threads.c */
void check_threads(void);
void check_fork(void);
void check_prof_args(void);
void check_finalize(void);
void check_interrupts(void);

#endif /* PYHCCL_TESTS_C_RUNTIME_CHECK_H_ */
