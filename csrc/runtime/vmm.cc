// Reservations, physical handles and mappings (see vmm.h).
#include "runtime/vmm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace hostrt {
namespace {

// Never destroyed: tasks may pin mappings until exit. A fork child starts
// empty: the inherited reservations and mappings stay (MAP_SHARED with the
// parent) but belong to the parent.
ForkLocal<Vmm> g_vmm;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

void *placeholder(void *at, size_t bytes, int extra_flags) {
  return mmap(at, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra_flags, -1,
              0);
}

// Physical RAM in bytes (0 if unknown): no handle may be larger.
uint64_t physical_ram() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

}  // namespace

Vmm &Vmm::get() { return g_vmm.get(); }

void vmm_after_fork() { g_vmm.drop(); }

aclError check_physical_prop(const aclrtPhysicalMemProp *prop, const char *api) {
  if (prop == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: prop is NULL", api);
  // The enum fields are read as raw integers: loading an out-of-range value
  // through its enum type is undefined behaviour (UBSan's -fsanitize=enum).
  auto raw = [](const auto &field) {
    static_assert(sizeof(field) == sizeof(int32_t), "32-bit enum");
    int32_t v;
    std::memcpy(&v, &field, sizeof(v));
    return v;
  };
  const int handle_type = raw(prop->handleType);
  if (handle_type != ACL_MEM_HANDLE_TYPE_NONE) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: prop->handleType (%d) must be ACL_MEM_HANDLE_TYPE_NONE (0)", api, handle_type);
  }
  const int alloc_type = raw(prop->allocationType);
  if (alloc_type != ACL_MEM_ALLOCATION_TYPE_PINNED) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: prop->allocationType (%d) must be ACL_MEM_ALLOCATION_TYPE_PINNED (0)", api,
                alloc_type);
  }
  const int attr = raw(prop->memAttr);
  if (attr < ACL_DDR_MEM || attr > ACL_MEM_P2P_HUGE1G) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: prop->memAttr (%d) is not an aclrtMemAttr", api,
                attr);
  }
  const int type = raw(prop->location.type);
  if (type == ACL_MEM_LOCATION_TYPE_DEVICE) {
    if (prop->location.id >= static_cast<uint32_t>(device_count())) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                  "%s: prop->location.id (%u) is not a device (there are %d)", api,
                  prop->location.id, device_count());
    }
  } else if (type != ACL_MEM_LOCATION_TYPE_HOST) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: prop->location.type (%d) must be ACL_MEM_LOCATION_TYPE_HOST (0) or "
                "ACL_MEM_LOCATION_TYPE_DEVICE (1)",
                api, type);
  }
  return ACL_SUCCESS;
}

aclError Vmm::reserve(void **out, size_t size, size_t alignment, void *expect, uint64_t flags,
                      const char *api) {
  if (out == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: virPtr is NULL", api);
  if (size == 0) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: size is 0", api);
  if (flags > 1) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: flags (%llu) must be 0 (normal pages) or 1 (huge pages)", api,
                static_cast<unsigned long long>(flags));
  }
  // CANN reserves `alignment` (0); a power of two is honoured as well.
  if ((alignment & (alignment - 1)) != 0 || alignment > (1ull << 30)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: alignment (%zu) must be 0 or a power of two up to 1 GiB", api, alignment);
  }
  const uint64_t align = alignment > kGranularity ? alignment : kGranularity;
  if (size > (1ull << 46)) {
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: size (%zu) exceeds the 64 TiB limit", api,
                size);
  }
  const uint64_t span = align_up(size, kGranularity);
  char *base = nullptr;
  if (expect != nullptr) {
    if (reinterpret_cast<uintptr_t>(expect) % align != 0) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                  "%s: expectPtr %p is not aligned to %llu bytes",
                  api, expect, static_cast<unsigned long long>(align));
    }
    void *m = placeholder(expect, span, MAP_FIXED_NOREPLACE);
    if (m == MAP_FAILED || m != expect) {
      if (m != MAP_FAILED) munmap(m, span);  // kernel without MAP_FIXED_NOREPLACE
      return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION,
                  "%s: cannot reserve size (%zu) at expectPtr %p: the range is in use", api, size,
                  expect);
    }
    base = static_cast<char *>(m);
  } else {
    // Over-reserve, then trim to the alignment.
    void *m = placeholder(nullptr, span + align, 0);
    if (m == MAP_FAILED) {
      return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot reserve size (%zu): %s", api, size,
                  std::strerror(errno));
    }
    const uintptr_t raw = reinterpret_cast<uintptr_t>(m);
    const uintptr_t start = align_up(raw, align);
    if (start > raw) munmap(m, start - raw);
    const uintptr_t end = raw + span + align;
    if (end > start + span) munmap(reinterpret_cast<void *>(start + span), end - (start + span));
    base = reinterpret_cast<char *>(start);
  }
  std::lock_guard<std::mutex> lk(mu_);
  reservations_.emplace(reinterpret_cast<uintptr_t>(base), Reservation{size, span, 0});
  live_reservations_.fetch_add(1, std::memory_order_release);
  *out = base;
  return ACL_SUCCESS;
}

aclError Vmm::release(void *p, const char *api) {
  if (p == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: virPtr is NULL", api);
  std::lock_guard<std::mutex> lk(mu_);
  auto it = reservations_.find(reinterpret_cast<uintptr_t>(p));
  if (it == reservations_.end()) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: virPtr %p is not the start of a range reserved by aclrtReserveMemAddress",
                api, p);
  }
  if (it->second.maps > 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: virPtr %p still has %u mapping(s); unmap them first (aclrtUnmapMem)", api, p,
                it->second.maps);
  }
  munmap(p, it->second.span);
  reservations_.erase(it);
  live_reservations_.fetch_sub(1, std::memory_order_release);
  return ACL_SUCCESS;
}

aclError Vmm::alloc_physical(aclrtDrvMemHandle *out, size_t size,
                             const aclrtPhysicalMemProp *prop, uint64_t flags, const char *api) {
  if (out == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL", api);
  if (size == 0) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: size is 0", api);
  if (size % kGranularity != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: size (%zu) is not a multiple of the allocation granularity (%llu bytes, "
                "aclrtMemGetAllocationGranularity)",
                api, size, static_cast<unsigned long long>(kGranularity));
  }
  aclError rc = check_physical_prop(prop, api);
  if (rc != ACL_SUCCESS) return rc;
  if (flags != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: flags (%llu) must be 0", api,
                static_cast<unsigned long long>(flags));
  }
  const uint64_t ram = physical_ram();
  if (ram > 0 && size > ram) {
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: size (%zu) exceeds physical memory (%llu bytes)",
                api, size, static_cast<unsigned long long>(ram));
  }
  int fd = static_cast<int>(memfd_create("pyhccl-physical", MFD_CLOEXEC));
  if (fd < 0) {
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: memfd_create failed: %s", api,
                std::strerror(errno));
  }
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int e = errno;
    close(fd);
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot size the memory to %zu bytes: %s", api,
                size, std::strerror(e));
  }
  auto phys = std::make_shared<Physical>(Physical{next_handle_id(), fd, size, 0});
  std::lock_guard<std::mutex> lk(mu_);
  physical_.emplace(phys->id, phys);
  *out = make_handle(HandleKind::kPhysical, phys->id);
  return ACL_SUCCESS;
}

std::shared_ptr<Vmm::Physical> Vmm::physical_locked(aclrtDrvMemHandle h) {
  uint64_t id = handle_id(HandleKind::kPhysical, h);
  auto it = id ? physical_.find(id) : physical_.end();
  return it == physical_.end() ? nullptr : it->second;
}

aclError Vmm::free_physical(aclrtDrvMemHandle h, const char *api) {
  if (h == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL", api);
  std::lock_guard<std::mutex> lk(mu_);
  std::shared_ptr<Physical> phys = physical_locked(h);
  if (!phys) {
    return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE,
                "%s: handle %p is not live physical memory from aclrtMallocPhysical", api, h);
  }
  if (phys->maps > 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: handle %p is still mapped (%u mapping(s)); unmap it first (aclrtUnmapMem)",
                api, h, phys->maps);
  }
  physical_.erase(phys->id);
  // Peers that mapped the file keep their own reference: closing the fd does
  // not pull memory from under them.
  close(phys->fd);
  phys->fd = -1;
  return ACL_SUCCESS;
}

std::map<uintptr_t, Vmm::Reservation>::iterator Vmm::reservation_locked(uintptr_t p) {
  auto it = reservations_.upper_bound(p);
  if (it == reservations_.begin()) return reservations_.end();
  --it;
  return p - it->first < it->second.span ? it : reservations_.end();
}

aclError Vmm::map(void *p, size_t size, size_t offset, aclrtDrvMemHandle h, uint64_t flags,
                  const char *api) {
  if (p == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: virPtr is NULL", api);
  if (h == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: handle is NULL", api);
  if (size == 0) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: size is 0", api);
  if (flags != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: flags (%llu) must be 0", api,
                static_cast<unsigned long long>(flags));
  }
  if (offset != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: offset (%zu) must be 0 (as on CANN)", api, offset);
  }
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  if (at % kGranularity != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: virPtr %p is not aligned to the allocation granularity (%llu bytes)", api, p,
                static_cast<unsigned long long>(kGranularity));
  }
  std::lock_guard<std::mutex> lk(mu_);
  std::shared_ptr<Physical> phys = physical_locked(h);
  if (!phys) {
    return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE,
                "%s: handle %p is not live physical memory from aclrtMallocPhysical", api, h);
  }
  if (size != phys->size) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: size (%zu) must equal the size of the physical memory (%llu, "
                "aclrtMallocPhysical)",
                api, size, static_cast<unsigned long long>(phys->size));
  }
  auto res = reservation_locked(at);
  if (res == reservations_.end()) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: virPtr %p is not inside a range reserved by aclrtReserveMemAddress", api, p);
  }
  const uint64_t into = at - res->first;
  if (into >= res->second.size || size > res->second.size - into) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: [virPtr %p, +size %zu) runs past the end of its reservation (%p, %llu bytes)",
                api, p, size, reinterpret_cast<void *>(res->first),
                static_cast<unsigned long long>(res->second.size));
  }
  // Overlap with the mapping before (if it reaches us) or any starting inside.
  auto next = mappings_.lower_bound(at);
  if (next != mappings_.end() && next->first < at + size) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: [virPtr %p, +size %zu) overlaps the mapping at %p (%llu bytes)", api, p, size,
                reinterpret_cast<void *>(next->first),
                static_cast<unsigned long long>(next->second.size));
  }
  if (next != mappings_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > at) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                  "%s: [virPtr %p, +size %zu) overlaps the mapping at %p (%llu bytes)", api, p,
                  size, reinterpret_cast<void *>(prev->first),
                  static_cast<unsigned long long>(prev->second.size));
    }
  }
  void *m = mmap(p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, phys->fd,
                 static_cast<off_t>(offset));
  if (m == MAP_FAILED) {
    int e = errno;
    placeholder(p, size, MAP_FIXED);  // a failed MAP_FIXED may have dropped the placeholder
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot map %zu bytes at %p: %s", api, size, p,
                std::strerror(e));
  }
  mappings_.emplace(at, Mapping{res->first, size, offset, phys, 0});
  ++phys->maps;
  ++res->second.maps;
  return ACL_SUCCESS;
}

aclError Vmm::unmap(void *p, const char *api) {
  if (p == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: virPtr is NULL", api);
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lk(mu_);
  auto it = mappings_.find(at);
  if (it == mappings_.end()) {
    if (reservation_locked(at) == reservations_.end()) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                  "%s: virPtr %p is not inside a range reserved by aclrtReserveMemAddress", api,
                  p);
    }
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: virPtr %p is not the start of a mapping (aclrtMapMem); nothing to unmap", api,
                p);
  }
  Mapping &m = it->second;
  if (m.pins > 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: virPtr %p is in use by %u queued or running task(s) or HCCL registration(s) "
                "(aclrtMemcpyAsync, aclrtMemsetAsync, collectives; HcclCommSymWinRegister, "
                "HcclCommActivateCommMemory); synchronize their streams, or deregister, first",
                api, p, m.pins);
  }
  if (placeholder(p, m.size, MAP_FIXED) == MAP_FAILED) {
    return ACL_FAIL(ACL_ERROR_RT_INTERNAL_ERROR, "%s: cannot unmap %p: %s", api, p,
                std::strerror(errno));
  }
  --m.phys->maps;
  auto res = reservations_.find(m.res);
  if (res != reservations_.end()) --res->second.maps;
  mappings_.erase(it);
  return ACL_SUCCESS;
}

void Vmm::unpin(uintptr_t base) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = mappings_.find(base);
  if (it != mappings_.end() && it->second.pins > 0) --it->second.pins;
}

// Holds one pin of a mapping; allocated before the lock is taken, armed under it.
struct Vmm::PinHolder {
  Vmm *vmm = nullptr;
  uintptr_t base = 0;
  ~PinHolder() {
    if (vmm != nullptr) vmm->unpin(base);
  }
};

bool Vmm::locate(const void *p, size_t bytes, Located *out, std::shared_ptr<const void> *pin) {
  if (live_reservations_.load(std::memory_order_acquire) == 0) return false;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::shared_ptr<PinHolder> holder = pin != nullptr ? std::make_shared<PinHolder>() : nullptr;
  std::lock_guard<std::mutex> lk(mu_);
  if (reservation_locked(at) == reservations_.end()) return false;
  out->reserved = true;
  auto it = mappings_.upper_bound(at);
  if (it != mappings_.begin()) {
    --it;
    Mapping &m = it->second;
    if (at - it->first < m.size) {
      out->avail = m.size - (at - it->first);
      if (bytes > out->avail) {
        out->kind = MemKind::kOutOfBounds;  // a located range lies within one mapping
        return true;
      }
      out->kind = MemKind::kDevice;
      out->region = MemRegion{m.phys->fd, m.phys->size, m.offset + (at - it->first), m.phys->id};
      if (holder) {
        ++m.pins;
        holder->vmm = this;
        holder->base = it->first;
        *pin = std::move(holder);
      }
      return true;
    }
  }
  // Reserved address space with nothing mapped: no memory behind it.
  out->unmapped = true;
  out->avail = 0;
  out->kind = MemKind::kOutOfBounds;
  return true;
}

bool Vmm::describe(const void *p, VmmInfo *out) {
  if (live_reservations_.load(std::memory_order_acquire) == 0) return false;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lk(mu_);
  auto res = reservation_locked(at);
  if (res == reservations_.end()) return false;
  VmmInfo info;
  info.reserved = true;
  info.res_base = reinterpret_cast<void *>(res->first);
  info.res_size = res->second.size;
  auto it = mappings_.upper_bound(at);
  if (it != mappings_.begin()) {
    --it;
    if (at - it->first < it->second.size) {
      info.mapped = true;
      info.map_base = reinterpret_cast<void *>(it->first);
      info.map_size = it->second.size;
      info.handle = make_handle(HandleKind::kPhysical, it->second.phys->id);
    }
  }
  *out = info;
  return true;
}

bool vmm_describe(const void *p, VmmInfo *out) { return Vmm::get().describe(p, out); }

}  // namespace hostrt
