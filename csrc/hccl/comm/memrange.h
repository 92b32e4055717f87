// HCCL memory ranges and activated communication memory
// (HcclCommSetMemoryRange, HcclCommActivateCommMemory and their inverses).
//
// A memory range is reserved virtual address space (aclrtReserveMemAddress)
// declared to HCCL; as on CANN it is visible to every communicator of the
// process. Activating memory inside a range (an aclrtMapMem mapping of a
// physical handle) makes it a communicator's communication memory: it stays
// pinned (aclrtUnmapMem refuses it) until deactivated or the communicator is
// destroyed. Collectives on it read peers' memory directly (single copy), as
// on any device memory of the host runtime.
//
// All of this is local bookkeeping: no call communicates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hccl/comm/comm.h"

namespace hccl {

HcclResult memrange_set(const Comm &c, void *base, size_t size, size_t alignment, uint64_t flags,
                        const char *api);
HcclResult memrange_unset(const Comm &c, void *base, const char *api);
HcclResult memory_activate(const Comm &c, void *ptr, size_t size, size_t offset,
                           aclrtDrvMemHandle handle, uint64_t flags, const char *api);
HcclResult memory_deactivate(const Comm &c, void *ptr, const char *api);
// Releases what a destroyed communicator activated.
void memory_drop_comm(uint64_t comm_id);

}  // namespace hccl
