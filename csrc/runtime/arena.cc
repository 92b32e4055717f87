// Arena allocator. Small blocks are 64-byte aligned, blocks of 64 KiB and
// more page aligned so that freeing them can punch whole pages out of the
// memfd (fallocate PUNCH_HOLE) and give the memory back.
#include "runtime/arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/env.h"
#include "runtime/internal.h"
#include "common/log.h"

namespace hostrt {
namespace {

constexpr uint64_t kDefaultBytes = 64ull << 30;
constexpr uint64_t kMinAlign = 64;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kPageAlignFrom = 64 << 10;  // blocks this big are page aligned
constexpr uint64_t kPunchMin = 1 << 20;        // return freed runs of at least 1 MiB
constexpr uint64_t kMinReserve = 2ull << 20;   // arena sizes are multiples of this

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }
uint64_t align_down(uint64_t v, uint64_t a) { return v & ~(a - 1); }

}  // namespace

namespace {
// Never destroyed: peers and tasks may use it until exit. A fork child gets
// its own arena (the inherited mapping is MAP_SHARED with the parent's).
ForkLocal<Arena> g_arena;
}  // namespace

Arena &Arena::get() { return g_arena.get(); }

void arena_after_fork() { g_arena.drop(); }

// Maps `bytes` of the memfd (or anonymous shared memory when fd < 0).
static void *map_arena(int fd, uint64_t bytes) {
  if (fd >= 0) {
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) return MAP_FAILED;
    return mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  }
  return mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
              -1, 0);
}

Arena::Arena() {
  const uint64_t want =
      align_up(common::env_bytes("PYHCCL_ARENA_BYTES", kDefaultBytes), kMinReserve);
  int fd = static_cast<int>(memfd_create("pyhccl-arena", MFD_CLOEXEC));
  // Without memfd (old kernel, sandbox) the arena is process-local: peers
  // cannot map it. When the address space is limited (ulimit -v, valgrind),
  // reserve less rather than nothing.
  for (int attempt = 0; attempt < 2 && base_ == nullptr; ++attempt) {
    for (uint64_t bytes = want; bytes >= kMinReserve; bytes /= 2) {
      void *p = map_arena(fd, bytes);
      if (p != MAP_FAILED) {
        base_ = static_cast<char *>(p);
        capacity_ = bytes;
        break;
      }
      if (bytes == kMinReserve) break;
    }
    if (base_ == nullptr && fd >= 0) {
      close(fd);
      fd = -1;
    } else {
      break;
    }
  }
  if (base_ == nullptr) return;  // alloc reports the failure
  if (capacity_ < want) {
    PYHCCL_NOTICE(common::kRuntime, "reserved a %llu MiB memory arena (wanted %llu MiB)",
                 static_cast<unsigned long long>(capacity_ >> 20),
                 static_cast<unsigned long long>(want >> 20));
  }
  fd_ = fd;
  file_id_ = next_handle_id();
  insert_free(0, capacity_);
}

void Arena::insert_free(uint64_t off, uint64_t size) {
  free_by_off_.emplace(off, size);
  free_by_size_.emplace(size, off);
}

void Arena::erase_free(std::map<uint64_t, uint64_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_off_.erase(it);
}

aclError Arena::alloc(size_t size, void **out, const char *api) {
  if (base_ == nullptr) {
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: the memory arena could not be mapped", api);
  }
  if (size > capacity_) {
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: size (%zu) exceeds the arena (%zu bytes)",
                api, size, capacity_);
  }
  const uint64_t need = align_up(align_up(size, 32) + 32, kMinAlign);
  const uint64_t align = need >= kPageAlignFrom ? kPage : kMinAlign;
  std::lock_guard<std::mutex> lk(mu_);
  // Best fit: the smallest blocks that can hold `need` at the alignment.
  auto it = free_by_size_.lower_bound({need, 0});
  auto fits = [&](uint64_t off, uint64_t sz) { return align_up(off, align) + need <= off + sz; };
  for (int tries = 0; it != free_by_size_.end() && !fits(it->second, it->first) && tries < 16;
       ++tries) {
    ++it;
  }
  if (it != free_by_size_.end() && !fits(it->second, it->first)) {
    it = free_by_size_.lower_bound({need + align - kMinAlign, 0});  // always fits
  }
  if (it == free_by_size_.end()) {
    return ACL_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION,
                "%s: out of arena memory for size (%zu); %zu of %zu bytes in use "
                "(PYHCCL_ARENA_BYTES sets the arena size)",
                api, size, used_, capacity_);
  }
  const uint64_t off = it->second, sz = it->first;
  erase_free(free_by_off_.find(off));
  const uint64_t start = align_up(off, align);
  if (start > off) insert_free(off, start - off);
  if (start + need < off + sz) insert_free(start + need, off + sz - (start + need));
  live_.emplace(start, Live{need, size});
  used_ += need;
  *out = base_ + start;
  return ACL_SUCCESS;
}

aclError Arena::free(void *p, const char *api) {
  const char *cp = static_cast<const char *>(p);
  if (!in_range(p)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: devPtr %p was not returned by aclrtMalloc", api, p);
  }
  uint64_t off = static_cast<uint64_t>(cp - base_);
  std::lock_guard<std::mutex> lk(mu_);
  auto lit = live_.find(off);
  if (lit == live_.end()) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: devPtr %p is not a live aclrtMalloc allocation (already freed or interior)",
                api, p);
  }
  const uint64_t size = lit->second.block;
  live_.erase(lit);
  used_ -= size;
  // Coalesce with the free neighbours.
  uint64_t blk_off = off, blk_size = size;
  auto next = free_by_off_.lower_bound(off);
  if (next != free_by_off_.end() && next->first == off + size) {
    blk_size += next->second;
    erase_free(next);
  }
  auto after = free_by_off_.lower_bound(off);
  if (after != free_by_off_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == off) {
      blk_off = prev->first;
      blk_size += prev->second;
      erase_free(prev);
    }
  }
  insert_free(blk_off, blk_size);
  release_pages(blk_off, blk_size, off, size);
  return ACL_SUCCESS;
}

// Punches the pages of the free block [blk_off, +blk_size) that the freed
// range touches (under mu_, so nobody reallocates them meanwhile).
void Arena::release_pages(uint64_t blk_off, uint64_t blk_size, uint64_t freed_off,
                          uint64_t freed_size) {
  uint64_t lo = align_down(freed_off, kPage);
  if (lo < blk_off) lo += kPage;
  uint64_t hi = align_up(freed_off + freed_size, kPage);
  if (hi > blk_off + blk_size) hi -= kPage;
  if (hi <= lo || hi - lo < kPunchMin) return;
  if (fd_ >= 0) {
    fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(lo),
              static_cast<off_t>(hi - lo));
  } else {
    madvise(base_ + lo, hi - lo, MADV_REMOVE);
  }
}

bool Arena::in_range(const void *p) const {
  const char *cp = static_cast<const char *>(p);
  return base_ != nullptr && cp >= base_ && cp < base_ + capacity_;
}

MemKind Arena::locate(const void *p, size_t bytes, MemRegion *region, uint64_t *avail) {
  if (!in_range(p)) return MemKind::kHost;
  uint64_t off = static_cast<uint64_t>(static_cast<const char *>(p) - base_);
  std::lock_guard<std::mutex> lk(mu_);
  auto it = live_.upper_bound(off);
  if (it == live_.begin()) return MemKind::kHost;
  --it;
  // Inside the arena but in no live allocation (freed, or padding): not
  // device memory the caller owns.
  if (off - it->first >= it->second.block) return MemKind::kHost;
  const uint64_t left = off - it->first < it->second.requested ? it->second.requested - (off - it->first) : 0;
  if (avail) *avail = left;
  if (bytes > left) return MemKind::kOutOfBounds;
  if (region) *region = MemRegion{fd_, capacity_, off, file_id_};
  return MemKind::kDevice;
}

size_t Arena::used() {
  std::lock_guard<std::mutex> lk(mu_);
  return used_;
}

}  // namespace hostrt
