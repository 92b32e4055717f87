// The flight recorder: per communicator, the last operations (enqueued,
// running, done, failed) with their timings, kept for post-mortems. On a
// failure every rank logs it; PyhcclCommGetFlightRecord returns it. Guarded
// by the communicator's mutex (Comm::mu), which every update already holds:
// no lock of its own on the path of each operation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hccl/op/op.h"

namespace hccl {

struct OpRecord {
  enum State : int32_t { kQueued = 0, kRunning = 1, kDone = 2, kFailed = 3 };
  uint64_t ticket = 0;  // enqueue order on the communicator
  uint64_t seq = 0;     // collective number once running (0 for send/recv)
  const char *api = "";
  uint64_t count = 0;
  int32_t dtype = 0, root = 0, op = 0;
  bool rooted = false;  // its spec's: whether `root` means anything
  State state = kQueued;
  // Monotonic clock. An op its call ran itself was enqueued when it started.
  int64_t enqueue_ns = 0, start_ns = 0, end_ns = 0;
  const char *algo = "";
};

class FlightRecorder {
 public:
  explicit FlightRecorder(size_t capacity);
  // `at`: the enqueue time, or 0 when the op starts at once on this thread
  // (its start time then; one clock read fewer on the path of small ops).
  void enqueued(uint64_t ticket, const OpDesc &op, int64_t at);
  void set_enqueued_at(uint64_t ticket, int64_t at);
  void started(uint64_t ticket, uint64_t seq);
  void ended(uint64_t ticket, bool ok, const char *algo);
  // A copy of the record of `ticket` (false once it left the ring).
  bool get(uint64_t ticket, OpRecord *out) const;
  // Oldest first.
  std::vector<OpRecord> snapshot() const;
  // One line per record, for the log.
  static std::string dump(const std::vector<OpRecord> &records);

 private:
  const OpRecord *find(uint64_t ticket) const;
  OpRecord *find(uint64_t ticket) {
    return const_cast<OpRecord *>(static_cast<const FlightRecorder *>(this)->find(ticket));
  }
  std::vector<OpRecord> ring_;
  uint64_t next_ = 0;  // records ever made
};

}  // namespace hccl
