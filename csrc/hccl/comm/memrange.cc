#include "hccl/comm/memrange.h"

#include <map>
#include <memory>
#include <mutex>

#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

struct Active {
  uint64_t size;
  std::shared_ptr<const void> pin;  // keeps the mapping mapped
};

struct Table {
  std::mutex mu;
  std::map<uintptr_t, uint64_t> ranges;                    // base -> size (process-wide)
  std::map<uint64_t, std::map<uintptr_t, Active>> active;  // comm id -> base -> activation
};

Table &table() {
  static Table *t = new Table;  // never destroyed: pins may outlive static destruction order
  return *t;
}

uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }

bool overlaps(uintptr_t a, uint64_t an, uintptr_t b, uint64_t bn) { return a < b + bn && b < a + an; }

}  // namespace

HcclResult memrange_set(const Comm &c, void *base, size_t size, size_t alignment, uint64_t flags,
                        const char *api) {
  if (base == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: baseVirPtr is NULL", api);
  }
  if (size == 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: size is 0", api);
  }
  if (alignment != 0 || flags != 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: %s (%llu) must be 0 (reserved, as on CANN)", api,
                                  alignment != 0 ? "alignment" : "flags",
                                  static_cast<unsigned long long>(alignment != 0 ? alignment : flags));
  }
  if (c.topo.nhosts() > 1) {
    return HCCL_FAIL(HCCL_E_NOT_SUPPORT, "%s: the communicator spans %d hosts; memory ranges are for communicators "
                                         "within one server (as on CANN)", api, c.topo.nhosts());
  }
  hostrt::VmmInfo info;
  if (!hostrt::vmm_describe(base, &info) || info.res_base != base) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: baseVirPtr %p is not the start of a range reserved with "
                                  "aclrtReserveMemAddress", api, base);
  }
  if (size > info.res_size) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: size (%zu) exceeds the reservation at %p (%llu bytes)", api, size, base,
                                  static_cast<unsigned long long>(info.res_size));
  }
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (const auto &r : t.ranges) {
    if (overlaps(addr(base), size, r.first, r.second)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: [baseVirPtr %p, +%zu) overlaps the memory range set at [%p, +%llu)",
                                    api, base, size, reinterpret_cast<void *>(r.first),
                                    static_cast<unsigned long long>(r.second));
    }
  }
  t.ranges[addr(base)] = size;
  return HCCL_SUCCESS;
}

HcclResult memrange_unset(const Comm &c, void *base, const char *api) {
  (void)c;
  if (base == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: baseVirPtr is NULL", api);
  }
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ranges.find(addr(base));
  if (it == t.ranges.end()) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: no memory range was set at baseVirPtr %p (HcclCommSetMemoryRange)", api,
                                  base);
  }
  for (const auto &per_comm : t.active) {
    for (const auto &a : per_comm.second) {
      if (overlaps(a.first, a.second.size, it->first, it->second)) {
        return HCCL_FAIL(HCCL_E_PARA, "%s: memory at %p inside the range is still activated "
                                      "(HcclCommDeactivateCommMemory first)", api,
                                      reinterpret_cast<void *>(a.first));
      }
    }
  }
  t.ranges.erase(it);
  return HCCL_SUCCESS;
}

HcclResult memory_activate(const Comm &c, void *ptr, size_t size, size_t offset,
                           aclrtDrvMemHandle handle, uint64_t flags, const char *api) {
  if (ptr == nullptr || handle == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: %s is NULL", api, ptr == nullptr ? "virPtr" : "handle");
  }
  if (size == 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: size is 0", api);
  }
  if (offset != 0 || flags != 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: %s (%llu) must be 0 (reserved, as on CANN)", api,
                                  offset != 0 ? "offset" : "flags",
                                  static_cast<unsigned long long>(offset != 0 ? offset : flags));
  }
  hostrt::VmmInfo info;
  if (!hostrt::vmm_describe(ptr, &info) || !info.mapped) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: nothing is mapped at virPtr %p (aclrtMapMem it first)", api, ptr);
  }
  if (info.map_base != ptr) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: virPtr %p is inside the mapping at %p; pass the address given to "
                                  "aclrtMapMem", api, ptr, info.map_base);
  }
  if (info.handle != handle) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: handle %p is not the physical memory mapped at virPtr %p (%p is)", api,
                                  handle, ptr, info.handle);
  }
  if (size > info.map_size) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: size (%zu) exceeds the mapping at %p (%llu bytes)", api, size, ptr,
                                  static_cast<unsigned long long>(info.map_size));
  }
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  bool in_range = false;
  for (const auto &r : t.ranges)
    in_range = in_range || (addr(ptr) >= r.first && addr(ptr) + size <= r.first + r.second);
  if (!in_range) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: [virPtr %p, +%zu) is not inside a memory range set with "
                                  "HcclCommSetMemoryRange", api, ptr, size);
  }
  auto &mine = t.active[c.id];
  for (const auto &a : mine) {
    if (overlaps(addr(ptr), size, a.first, a.second.size)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: [virPtr %p, +%zu) overlaps memory already activated at [%p, +%llu)",
                                    api, ptr, size, reinterpret_cast<void *>(a.first),
                                    static_cast<unsigned long long>(a.second.size));
    }
  }
  std::shared_ptr<const void> pin = hostrt::pin_memory(ptr, size);
  if (!pin) {
    return HCCL_FAIL(HCCL_E_INTERNAL, "%s: cannot pin the mapping at %p", api, ptr);
  }
  mine[addr(ptr)] = Active{size, std::move(pin)};
  return HCCL_SUCCESS;
}

HcclResult memory_deactivate(const Comm &c, void *ptr, const char *api) {
  if (ptr == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: virPtr is NULL", api);
  }
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto per = t.active.find(c.id);
  auto it = per == t.active.end() ? std::map<uintptr_t, Active>::iterator()
                                  : per->second.find(addr(ptr));
  if (per == t.active.end() || it == per->second.end()) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: virPtr %p is not memory this communicator activated "
                                  "(HcclCommActivateCommMemory)", api, ptr);
  }
  per->second.erase(it);
  if (per->second.empty()) t.active.erase(per);
  return HCCL_SUCCESS;
}

void memory_drop_comm(uint64_t comm_id) {
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.active.erase(comm_id);
}

}  // namespace hccl
