// Where a pointer range lives (arena, mapped virtual memory, host memory), the
// range checks of the ACL memory calls, and pins that keep mappings mapped.
#include "runtime/arena.h"
#include "runtime/internal.h"
#include "runtime/vmm.h"

namespace hostrt {

Located locate_range(const void *p, size_t bytes, std::shared_ptr<const void> *pin) {
  Located l;
  Arena &arena = Arena::get();
  if (arena.in_range(p)) {
    l.kind = arena.locate(p, bytes, &l.region, &l.avail);
    return l;
  }
  if (!Vmm::get().locate(p, bytes, &l, pin)) l = Located{};
  return l;
}

MemKind locate_memory(const void *p, size_t bytes, MemRegion *region, uint64_t *avail) {
  Located l = locate_range(p, bytes, nullptr);
  if (l.kind == MemKind::kDevice && region) *region = l.region;
  if (l.kind != MemKind::kHost && avail) *avail = l.avail;
  return l.kind;
}

std::shared_ptr<const void> pin_memory(const void *p, size_t bytes) {
  std::shared_ptr<const void> pin;
  Located l;
  if (!Arena::get().in_range(p)) Vmm::get().locate(p, bytes, &l, &pin);
  return pin;
}

aclError check_device_range(const void *p, size_t bytes, const char *api, const char *what,
                            std::shared_ptr<const void> *pin) {
  if (bytes == 0) return ACL_SUCCESS;  // touches nothing
  Located l = locate_range(p, bytes, pin);
  const unsigned long long left = l.avail;
  switch (l.kind) {
    case MemKind::kDevice:
      return ACL_SUCCESS;
    case MemKind::kHost:
      // Outside the arena: host memory, which cannot be checked. Inside it
      // but in no live allocation: freed memory.
      if (!Arena::get().in_range(p)) return ACL_SUCCESS;
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                  "%s: %s (%p, %zu bytes) is not inside a live aclrtMalloc allocation (freed?)",
                  api, what, p, bytes);
    case MemKind::kOutOfBounds:
      break;
  }
  if (l.unmapped) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: %s %p lies in reserved address space (aclrtReserveMemAddress) with no "
                "memory mapped there (aclrtMapMem)",
                api, what, p);
  }
  if (l.reserved) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: %s (%p, %zu bytes) runs past the end of its mapping (%llu bytes left); a "
                "range must lie within one aclrtMapMem mapping",
                api, what, p, bytes, left);
  }
  return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
              "%s: %s (%p, %zu bytes) runs past the end of its aclrtMalloc allocation (%llu bytes "
              "left)",
              api, what, p, bytes, left);
}

}  // namespace hostrt
