// Virtual memory management (aclrtReserveMemAddress, aclrtMallocPhysical,
// aclrtMapMem and their inverses) on the host.
//
// A reservation is a real address range: an mmap(PROT_NONE) placeholder, so
// nothing else in the process lands there and a stray access faults. A
// physical handle is a memfd of its own (sparse until touched). aclrtMapMem
// maps the memfd over part of a reservation with MAP_FIXED|MAP_SHARED, so the
// memory is shareable exactly like the aclrtMalloc arena: a peer on the same
// host maps it through /proc/<pid>/fd/<fd>. aclrtUnmapMem puts the
// placeholder back.
//
// Runtime tasks that touch mapped memory pin their mapping (pin_memory); a
// pinned mapping cannot be unmapped, so a queued aclrtMemcpyAsync never runs
// on memory pulled from under it: aclrtUnmapMem fails with a message instead.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/hostrt.h"

namespace hostrt {

template <typename T>
class ForkLocal;

// What a pointer range is, with the detail the runtime's own checks report.
struct Located {
  MemKind kind = MemKind::kHost;
  MemRegion region{};
  uint64_t avail = 0;     // bytes from p to the end of its allocation / mapping
  bool reserved = false;  // p lies in an aclrtReserveMemAddress range
  bool unmapped = false;  // ... where nothing is mapped
};

class Vmm {
 public:
  static Vmm &get();
  static constexpr uint64_t kGranularity = 2ull << 20;

  aclError reserve(void **out, size_t size, size_t alignment, void *expect, uint64_t flags,
                   const char *api);
  aclError release(void *p, const char *api);
  aclError alloc_physical(aclrtDrvMemHandle *out, size_t size, const aclrtPhysicalMemProp *prop,
                          uint64_t flags, const char *api);
  aclError free_physical(aclrtDrvMemHandle h, const char *api);
  aclError map(void *p, size_t size, size_t offset, aclrtDrvMemHandle h, uint64_t flags,
               const char *api);
  aclError unmap(void *p, const char *api);

  // Fills *out and returns true if p lies in a reservation (false: not ours).
  // With `pin`, a kDevice result also pins the mapping into *pin.
  bool locate(const void *p, size_t bytes, Located *out, std::shared_ptr<const void> *pin);
  // hostrt::vmm_describe.
  bool describe(const void *p, VmmInfo *out);

 private:
  friend class ForkLocal<Vmm>;
  Vmm() = default;

  struct Physical {
    uint64_t id;
    int fd;
    uint64_t size;
    uint32_t maps = 0;  // live mappings of it
  };
  struct Mapping {
    uintptr_t res;  // base of its reservation
    uint64_t size;
    uint64_t offset;  // into the physical memory's file
    std::shared_ptr<Physical> phys;
    uint32_t pins = 0;  // queued or running tasks using it
  };
  struct Reservation {
    uint64_t size;  // bytes asked for: mappings must fit in [base, base + size)
    uint64_t span;  // bytes of the placeholder mapping (size rounded up)
    uint32_t maps = 0;
  };

  struct PinHolder;
  std::shared_ptr<Physical> physical_locked(aclrtDrvMemHandle h);
  // The reservation holding p, or end().
  std::map<uintptr_t, Reservation>::iterator reservation_locked(uintptr_t p);
  void unpin(uintptr_t base);

  std::mutex mu_;
  std::atomic<size_t> live_reservations_{0};  // lets locate() skip the lock when 0
  std::map<uintptr_t, Reservation> reservations_;           // by base
  std::map<uintptr_t, Mapping> mappings_;                   // by base
  std::unordered_map<uint64_t, std::shared_ptr<Physical>> physical_;  // by handle id
};

// Classifies [p, p + bytes) over the arena and the reservations (the full
// answer behind hostrt::locate_memory); pins a mapping when `pin` is given.
Located locate_range(const void *p, size_t bytes, std::shared_ptr<const void> *pin);

}  // namespace hostrt
