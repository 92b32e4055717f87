// Cancelling a communicator set-up that blocks in another thread (Ctrl-C in
// Python): the thread doing set-up notes a generation when it starts; any
// thread may bump it; the set-up's waits (slices of at most 100 ms) notice
// the change and give up. Header-only: libhccl is its only user.
#pragma once

#include <atomic>
#include <cstdint>

namespace common {

inline std::atomic<uint64_t> &cancel_generation() {
  static std::atomic<uint64_t> generation{0};
  return generation;
}
inline thread_local uint64_t t_setup_generation = ~0ull;  // ~0: not in a set-up

inline void setup_begin() { t_setup_generation = cancel_generation().load(); }
inline void setup_end() { t_setup_generation = ~0ull; }
inline bool setup_cancelled() {
  return t_setup_generation != ~0ull && cancel_generation().load() != t_setup_generation;
}
// Makes every set-up in progress give up.
inline void cancel_setups() { cancel_generation().fetch_add(1); }

}  // namespace common
