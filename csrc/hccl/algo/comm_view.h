// What the algorithms see of a communicator: its identity, the tuning and
// topology agreed at set-up, its transport and scratch memory. comm/comm.h's
// Comm is one (it fills these at set-up); algo/ includes nothing from comm/.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hccl/algo/topology.h"
#include "hccl/algo/tuning.h"
#include "hccl/transport/engine.h"
#include "runtime/hostrt.h"

namespace hccl {

struct CommView {
  uint32_t rank = 0;
  uint32_t nranks = 1;
  std::string name;
  AlgoTuning tuning;  // agreed at set-up (rank 0's environment)
  Topology topo;
  std::unique_ptr<Engine> engine;  // connections to every peer
  bool single_copy_ok = false;  // every rank can map its local peers' device memory
  std::atomic<uint64_t> op_seq{0};  // collectives started so far
  // Live communicators of this process (comm_count), for a deadlock hint.
  size_t (*live_comms)() = nullptr;

  // Whether the stream's task after the running one is an operation of this
  // communicator (its tasks carry their CommView as tag, comm/exec.cc) and
  // no operation was enqueued on another stream since the running one: it
  // runs next, so what the running one leaves to finish can wait for it. (An
  // operation on another stream could wait there for what this rank holds
  // back: a task of another communicator in front of it, say.)
  bool next_queued() const {
    return hostrt::next_task_tag() == this && switched_at.load(std::memory_order_relaxed) <= running_ticket;
  }
  uint64_t running_ticket = 0;  // the running operation's (set by the turn's holder)
  // The last ticket enqueued on another stream than the one before it.
  std::atomic<uint64_t> switched_at{0};

  // Scratch memory of the running operation (operations of a communicator
  // run one at a time): kept between operations, so that large temporary
  // buffers are not faulted in anew every time.
  char *scratch(int which, size_t bytes) {
    std::vector<char> &s = scratch_[which];
    if (s.size() < bytes) s.resize(bytes);
    return s.data();
  }

 private:
  std::vector<char> scratch_[2];
};

}  // namespace hccl
