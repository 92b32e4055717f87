// Events: generation counters so that "the most recent record as of the call"
// is well defined even when records on several streams complete out of order.
// A wait is for one generation: a later record completing first (on another
// stream) does not release it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

namespace hostrt {

struct Event {
  Event(uint64_t id_, uint32_t flags_) : id(id_), flags(flags_) {}

  // Called when aclrtRecordEvent / aclrtResetEvent is issued; returns the
  // generation the enqueued task will complete.
  uint64_t issue(bool record);
  // Run by the stream task: generation g is done (stamps the time for records).
  void complete(uint64_t g, bool record);
  // Waits until generation g itself is done or deadline_ns; true if done.
  bool wait(uint64_t g, int64_t deadline_ns);
  // Latest issued generation (0 = never recorded or reset).
  uint64_t latest();

  struct Snapshot {
    uint64_t gen;          // latest issued generation
    bool last_is_record;   // latest issued operation was a record
    uint64_t done_gen;     // latest completed generation
    int64_t done_ns;       // completion time of the latest completed record
  };
  Snapshot snapshot();

  const uint64_t id;
  const uint32_t flags;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t gen_ = 0;
  bool last_is_record_ = false;
  uint64_t done_gen_ = 0;      // newest completed generation
  int64_t done_ns_ = 0;
  std::set<uint64_t> pending_;  // issued, not yet completed
  uint32_t waiters_ = 0;
};

}  // namespace hostrt
