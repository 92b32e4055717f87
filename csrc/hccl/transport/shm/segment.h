// POSIX shared-memory segments for the shm transport: create / open / map,
// and a process-wide list of names not yet unlinked, removed at exit, so that
// nothing is left in /dev/shm once a communicator is up (each rank unlinks its
// own segment as soon as every peer has mapped it).
#pragma once

#include <cstddef>
#include <string>

namespace hccl {

struct ShmMapping {
  int fd = -1;
  void *base = nullptr;
  size_t bytes = 0;
};

// Creates `name` (O_EXCL), reserves `bytes` of tmpfs space for it and maps it
// shared. The name is remembered until shm_segment_unlink(). false + *why on
// failure (nothing left behind).
bool shm_segment_create(const std::string &name, size_t bytes, ShmMapping *out, std::string *why);
// Opens and maps a peer's segment of `bytes` bytes.
bool shm_segment_open(const std::string &name, size_t bytes, ShmMapping *out, std::string *why);
// Unmaps and closes (safe on an empty mapping).
void shm_segment_close(ShmMapping *m);
// Removes the name from /dev/shm (ENOENT is fine) and forgets it.
void shm_segment_unlink(const std::string &name);

}  // namespace hccl
