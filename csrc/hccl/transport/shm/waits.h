// Where this process is blocked, for telling two communicators used in
// opposite orders from a peer that is merely late (transport/order.cc).
// A process-wide registry of live hubs and of the waits that sleep now,
// under a mutex: every change rewrites the process's Blocked record
// (layout.h) in each hub's segment, so a peer blocked in one communicator
// sees that this process is blocked in another. Only waits that sleep
// publish: an operation that does not block costs nothing.
#pragma once

#include <cstdint>
#include <string>

namespace hccl {
namespace shm {

class Hub;

// A snapshot of a Blocked record.
struct BlockedAt {
  uint64_t gen = 0, comm = 0, seq = 0;
  uint32_t pid = 0, waits = 0, flags = 0;
};

// Hub::set_identity and ~Hub.
void waits_add_hub(Hub *hub);
void waits_remove_hub(Hub *hub);

// One wait of this process, published from begin() until end() (or its
// destruction): the first of the process's blocked waits is the record, and
// `waits` counts them all.
class BlockedWait {
 public:
  BlockedWait() = default;
  BlockedWait(const BlockedWait &) = delete;
  BlockedWait &operator=(const BlockedWait &) = delete;
  ~BlockedWait() { end(); }

  // This thread waits in collective `seq` of communicator `comm` for process `pid`.
  void begin(uint64_t comm, uint64_t seq, uint32_t pid, uint32_t flags);
  void set_flags(uint32_t flags);  // republishes when they change
  void end();
  bool active() const { return active_; }

  uint64_t comm = 0, seq = 0;
  uint32_t pid = 0, flags = 0;

 private:
  bool active_ = false;
};

// Waits of this process blocked now.
int waits_blocked();
// This process's part in communicator `comm`: the last collective it began
// (or announced) and the communicator's name. False when not a member.
bool waits_member(uint64_t comm, uint64_t *begun, std::string *name);

}  // namespace shm
}  // namespace hccl
