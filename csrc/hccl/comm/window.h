// Symmetric windows (HcclCommSymWinRegister): memory every rank of a
// communicator registers collectively, with the same size. At registration
// the ranks exchange where their windows live once, and on one host every
// rank maps every peer's window; collectives whose buffers lie in windows
// then read peers' memory through those mappings (algo/window_direct.cc),
// with no per-operation descriptor exchange and no staging copy.
//
// A window pins its aclrtMapMem mapping (hostrt::pin_memory): aclrtUnmapMem
// refuses it, and so aclrtFreePhysical and aclrtReleaseMemAddress too, until
// the window is deregistered or its communicator destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hccl/comm/comm.h"

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

// The communicator's current windows (never null).
std::shared_ptr<const WindowSet> comm_windows(const Comm &c);

// HcclCommSymWinRegister / HcclCommSymWinDeregister (collective).
HcclResult window_register(const std::shared_ptr<Comm> &c, void *addr, uint64_t size,
                           uint32_t flag, HcclCommSymWindow *out, const char *api);
HcclResult window_deregister(HcclCommSymWindow handle, const char *api);
// Drops every window of a destroyed communicator (no communication).
void windows_drop(Comm &c);

}  // namespace hccl
