// Symmetric windows as the algorithms see them (algo/window_direct.cc):
// registered by comm/window.cc (HcclCommSymWinRegister), read here.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace hccl {

struct SymWindow {
  uint64_t id = 0;       // handle id (HcclCommSymWindow)
  uint64_t seq = 0;      // registration number in its communicator, same on every rank
  uint64_t comm_id = 0;  // the communicator's registry id
  char *base = nullptr;
  uint64_t size = 0;     // same on every rank
  std::shared_ptr<const void> pin;  // keeps the mapping mapped while registered
  bool direct = false;   // every rank maps every other rank's window (one host)
  std::vector<char *> peers;  // direct: rank r's window as mapped here (own: base)
};

// The windows of a communicator, replaced as a whole on every change so that
// an operation can keep the set it was enqueued with.
struct WindowSet {
  std::vector<std::shared_ptr<SymWindow>> list;  // registration order
  uint64_t next_seq = 1;
  // The window holding [p, p + bytes) (bytes may be 0), or null; *off = p - base.
  const SymWindow *find(const void *p, uint64_t bytes, uint64_t *off) const;
  const SymWindow *by_seq(uint64_t seq) const;
  bool any_direct() const;
};

}  // namespace hccl
