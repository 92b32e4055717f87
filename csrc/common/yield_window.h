// How long a wait yields before it sleeps (transport/waiter.cc): the
// configured time (PYHCCL_YIELD_US), stretched to twice the recent waits'
// average length while they are short, at most a configured maximum (kMax by
// default). Waking a sleeper costs more than yielding, the more so where
// ranks share cores; waits longer than the maximum are a late peer's, which
// the wait sleeps on after the configured time, so yielding costs at most the
// maximum of CPU time per wait.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace common {

class YieldWindow {
 public:
  static constexpr int64_t kMax = 2000000;  // ns

  void configure(int64_t base_ns, int64_t max_ns = kMax) {
    base_ = base_ns;
    max_ = max_ns;
    window_.store(base_ns, std::memory_order_relaxed);
    avg_.store(0, std::memory_order_relaxed);
  }
  int64_t ns() const { return window_.load(std::memory_order_relaxed); }
  int64_t base_ns() const { return base_; }  // the configured time
  int64_t max_ns() const { return base_ == 0 ? 0 : std::max(base_, max_); }  // the most it yields

  // Takes the idle time of a wait that ended (or moved on) into the average.
  // Relaxed: a hint, updated by whichever thread runs the communicator's waits.
  void learn(int64_t idle_ns) {
    if (base_ == 0 || base_ >= max_) return;  // never yield, or already as long
    int64_t avg = avg_.load(std::memory_order_relaxed);
    avg += (idle_ns - avg) / 8;
    avg_.store(avg, std::memory_order_relaxed);
    window_.store(avg > max_ ? base_ : std::min(max_, std::max(base_, 2 * avg)), std::memory_order_relaxed);
  }

 private:
  int64_t base_ = 0, max_ = kMax;
  std::atomic<int64_t> window_{0}, avg_{0};
};

}  // namespace common
