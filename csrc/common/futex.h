// Futex wait/wake with timeouts (header-only). `shared` selects the
// cross-process form, needed when the word lives in MAP_SHARED memory that
// other processes wait on; otherwise the cheaper process-private form is used.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>
#include <sched.h>

#include "common/clock.h"

namespace common {

// One pause of a busy-wait loop (lets the sibling hyperthread run).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Sleeps while *word == expected, at most until deadline_ns (now_ns() units;
// INT64_MAX = no limit). Returns 0 when woken or the value differed, ETIMEDOUT
// at the deadline, EINTR on a signal. Spurious wake-ups are possible: callers
// re-check their condition.
inline int futex_wait(std::atomic<uint32_t> *word, uint32_t expected, int64_t deadline_ns,
                      bool shared = false) {
  timespec ts;
  timespec *tsp = nullptr;
  int op = shared ? FUTEX_WAIT_BITSET : (FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG);
  if (deadline_ns != INT64_MAX) {
    if (now_ns() >= deadline_ns) return ETIMEDOUT;
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time.
    ts.tv_sec = deadline_ns / 1000000000;
    ts.tv_nsec = deadline_ns % 1000000000;
    tsp = &ts;
  }
  long rc = syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op, expected, tsp, nullptr,
                    FUTEX_BITSET_MATCH_ANY);
  if (rc == 0) return 0;
  if (errno == EAGAIN) return 0;
  return errno;
}

// Wakes up to n waiters (INT_MAX = all).
inline void futex_wake(std::atomic<uint32_t> *word, int n = INT_MAX, bool shared = false) {
  int op = shared ? FUTEX_WAKE : (FUTEX_WAKE | FUTEX_PRIVATE_FLAG);
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op, n, nullptr, nullptr, 0);
}

// Waits until pred() holds or the deadline passes: spins briefly (yielding),
// then sleeps on *word (whose value changes, followed by futex_wake, whenever
// pred may have become true). Returns true if pred() held.
template <typename Pred>
inline bool wait_until(std::atomic<uint32_t> *word, Pred pred, int64_t deadline_ns,
                       bool shared = false) {
  for (int i = 0; i < 64; ++i) {
    if (pred()) return true;
    if (i >= 16) sched_yield();
  }
  for (;;) {
    uint32_t seen = word->load(std::memory_order_acquire);
    if (pred()) return true;
    if (futex_wait(word, seen, deadline_ns, shared) == ETIMEDOUT) return pred();
  }
}

}  // namespace common
