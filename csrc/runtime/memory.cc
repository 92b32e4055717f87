// aclrtMalloc/Free (arena), host memory, memset/memcpy (sync and async),
// aclrtGetMemInfo.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "runtime/arena.h"
#include "runtime/internal.h"
#include "runtime/stream.h"
#include "runtime/vmm.h"

namespace hostrt {
namespace {

constexpr uint32_t kPolicyFlags = ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH |
                                  ACL_MEM_ACCESS_USER_SPACE_READONLY;

// Live aclrtMallocHost blocks, so aclrtFreeHost can reject anything else.
struct HostBlocks {
  std::mutex mu;
  std::unordered_set<void *> live;
};
// A fork child starts with an empty set: the inherited blocks stay readable,
// but only the parent frees them.
ForkLocal<HostBlocks> g_host_blocks;

HostBlocks &host_blocks() { return g_host_blocks.get(); }

using Pin = std::shared_ptr<const void>;

// Device ranges are checked against the size asked for (aclrtMalloc) or the
// mapping (aclrtMapMem); mapped ranges stay pinned while *pin lives.
aclError check_memset(void *dev, size_t max_count, size_t count, const char *api, Pin *pin) {
  if (dev == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: devPtr is NULL", api);
  if (count > max_count) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: count (%zu) exceeds maxCount (%zu)", api, count,
                max_count);
  }
  return check_device_range(dev, count, api, "devPtr", pin);
}

aclError check_memcpy(void *dst, size_t dest_max, const void *src, size_t count,
                      aclrtMemcpyKind kind, const char *api, Pin *dst_pin, Pin *src_pin) {
  if (dst == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: dst is NULL", api);
  if (src == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: src is NULL", api);
  if (static_cast<int>(kind) < ACL_MEMCPY_HOST_TO_HOST ||
      static_cast<int>(kind) > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: kind (%d) is not an aclrtMemcpyKind", api,
                static_cast<int>(kind));
  }
  if (count > dest_max) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: count (%zu) exceeds destMax (%zu)", api, count,
                dest_max);
  }
  aclError rc = check_device_range(dst, count, api, "dst", dst_pin);
  if (rc != ACL_SUCCESS) return rc;
  return check_device_range(src, count, api, "src", src_pin);
}

// MemAvailable from /proc/meminfo in bytes (0 if unknown).
size_t mem_available() {
  FILE *f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  size_t kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "MemAvailable: %zu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

}  // namespace

void host_blocks_after_fork() { g_host_blocks.drop(); }

}  // namespace hostrt

using namespace hostrt;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  const char *api = "aclrtMalloc";
  if (devPtr == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: devPtr is NULL", api);
  if (size == 0) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: size is 0", api);
  uint32_t p = static_cast<uint32_t>(policy);
  if ((p & 0xff) > ACL_MEM_MALLOC_HUGE1G_ONLY_P2P || (p & ~(0xffu | kPolicyFlags)) != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: policy (0x%x) is not an aclrtMemMallocPolicy", api, p);
  }
  if (aclError rc = check_not_finalized(api)) return rc;
  return Arena::get().alloc(size, devPtr, api);
}

ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr) {
  if (devPtr == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is NULL");
  return Arena::get().free(devPtr, "aclrtFree");
}

ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size) {
  const char *api = "aclrtMallocHost";
  if (hostPtr == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: hostPtr is NULL", api);
  if (size == 0) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: size is 0", api);
  void *p = nullptr;
  size_t align = size >= 4096 ? 4096 : 64;
  if (posix_memalign(&p, align, size) != 0) {
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot allocate size (%zu)", api, size);
  }
  HostBlocks &h = host_blocks();
  std::lock_guard<std::mutex> lk(h.mu);
  h.live.insert(p);
  *hostPtr = p;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr) {
  const char *api = "aclrtFreeHost";
  if (hostPtr == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: hostPtr is NULL", api);
  HostBlocks &h = host_blocks();
  {
    std::lock_guard<std::mutex> lk(h.mu);
    if (h.live.erase(hostPtr) == 0) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                  "%s: hostPtr %p is not a live aclrtMallocHost allocation", api, hostPtr);
    }
  }
  std::free(hostPtr);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
  Pin pin;  // held across the fill: another thread cannot unmap the range meanwhile
  aclError rc = check_memset(devPtr, maxCount, count, "aclrtMemset", &pin);
  if (rc != ACL_SUCCESS) return rc;
  std::memset(devPtr, value & 0xff, count);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
                                              size_t count, aclrtStream stream) {
  const char *api = "aclrtMemsetAsync";
  Pin pin;  // released when the task has run: aclrtUnmapMem refuses until then
  aclError rc = check_memset(devPtr, maxCount, count, api, &pin);
  if (rc != ACL_SUCCESS) return rc;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &rc);
  if (!s) return rc;
  return s->push(
      [devPtr, value, count, pin]() {
        std::memset(devPtr, value & 0xff, count);
        return ACL_SUCCESS;
      },
      false, api, nullptr, count);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind) {
  Pin dst_pin, src_pin;  // held across the copy
  aclError rc = check_memcpy(dst, destMax, src, count, kind, "aclrtMemcpy", &dst_pin, &src_pin);
  if (rc != ACL_SUCCESS) return rc;
  if (count > 0 && dst != src) std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream) {
  const char *api = "aclrtMemcpyAsync";
  Pin dst_pin, src_pin;  // released when the task has run
  aclError rc = check_memcpy(dst, destMax, src, count, kind, api, &dst_pin, &src_pin);
  if (rc != ACL_SUCCESS) return rc;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &rc);
  if (!s) return rc;
  return s->push(
      [dst, src, count, dst_pin, src_pin]() {
        if (count > 0 && dst != src) std::memmove(dst, src, count);
        return ACL_SUCCESS;
      },
      false, api, nullptr, count);
}

ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total) {
  const char *api = "aclrtGetMemInfo";
  if (static_cast<int>(attr) < ACL_DDR_MEM || static_cast<int>(attr) > ACL_MEM_P2P_HUGE1G) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: attr (%d) is not an aclrtMemAttr", api,
                static_cast<int>(attr));
  }
  if (free == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: free is NULL", api);
  if (total == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: total is NULL", api);
  // "Device" memory is host RAM behind the arena: report the smaller of the
  // arena and physical memory, and never more free than the host has.
  Arena &a = Arena::get();
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t phys = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
  size_t cap = a.capacity();
  size_t t = phys > 0 && phys < cap ? phys : cap;
  size_t used = a.used();
  size_t f = used < t ? t - used : 0;
  size_t avail = mem_available();
  if (avail > 0 && avail < f) f = avail;
  *free = f;
  *total = t;
  return ACL_SUCCESS;
}

}  // extern "C"
