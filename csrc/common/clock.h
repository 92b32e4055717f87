// Monotonic time and millisecond-timeout helpers (header-only).
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace common {

// Nanoseconds on the monotonic clock (same clock as std::chrono::steady_clock).
inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Deadline in now_ns() units for an ACL-style timeout in ms: -1 (any negative)
// means forever (INT64_MAX), 0 means "already expired" (poll).
inline int64_t deadline_after_ms(int64_t timeout_ms) {
  if (timeout_ms < 0) return INT64_MAX;
  return now_ns() + timeout_ms * 1000000;
}

// std::chrono time point for a now_ns() deadline (for condition_variable::wait_until).
inline std::chrono::steady_clock::time_point to_time_point(int64_t deadline_ns) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline_ns));
}

}  // namespace common
