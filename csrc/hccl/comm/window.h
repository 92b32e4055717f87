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

#include "hccl/algo/windows.h"
#include "hccl/comm/comm.h"

namespace hccl {

// The communicator's current windows (never null).
std::shared_ptr<const WindowSet> comm_windows(const Comm &c);

// HcclCommSymWinRegister / HcclCommSymWinDeregister (collective).
HcclResult window_register(const std::shared_ptr<Comm> &c, void *addr, uint64_t size,
                           uint32_t flag, HcclCommSymWindow *out, const char *api);
HcclResult window_deregister(HcclCommSymWindow handle, const char *api);
// Drops every window of a destroyed communicator (no communication).
void windows_drop(Comm &c);

}  // namespace hccl
