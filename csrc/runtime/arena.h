// The per-process device-memory arena: one memfd, sized sparse and mapped
// MAP_SHARED|MAP_NORESERVE once, carved up by a best-fit allocator with
// coalescing. Peers map the same file through /proc/<pid>/fd/<fd>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "runtime/hostrt.h"

namespace hostrt {

template <typename T>
class ForkLocal;

class Arena {
 public:
  // The process's arena, mapped on first call (PYHCCL_ARENA_BYTES, default 64 GiB).
  static Arena &get();

  // Allocates `size` bytes (rounded up to 32, plus 32 bytes of padding);
  // sets the message (naming `api`) on failure.
  aclError alloc(size_t size, void **out, const char *api);
  // Frees a pointer returned by alloc; error (not a crash) for anything else.
  aclError free(void *p, const char *api);
  // See hostrt::locate_memory (bounds are the size asked for, not the padded one).
  MemKind locate(const void *p, size_t bytes, MemRegion *region, uint64_t *avail);
  // True if p points into the arena's mapping (live or not).
  bool in_range(const void *p) const;

  size_t capacity() const { return capacity_; }
  size_t used();

 private:
  friend class ForkLocal<Arena>;
  Arena();
  void insert_free(uint64_t off, uint64_t size);
  void erase_free(std::map<uint64_t, uint64_t>::iterator it);
  void release_pages(uint64_t blk_off, uint64_t blk_size, uint64_t freed_off, uint64_t freed_size);

  int fd_ = -1;
  uint64_t file_id_ = 0;  // MemRegion::file_id of the memfd
  size_t capacity_ = 0;
  char *base_ = nullptr;
  std::mutex mu_;
  std::map<uint64_t, uint64_t> free_by_off_;             // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;  // (size, offset)
  struct Live {
    uint64_t block;      // bytes taken from the arena (padded)
    uint64_t requested;  // bytes the caller asked for
  };
  std::map<uint64_t, Live> live_;                         // offset -> allocation
  size_t used_ = 0;
};

}  // namespace hostrt
