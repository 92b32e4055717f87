// Single-copy access to peers' aclrtMalloc memory: every process carves it
// from one memfd arena, which a peer on the same host maps through
// /proc/<pid>/fd/<fd> (once per communicator and peer, then cached).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "hccl/transport/shm.h"
#include "runtime/hostrt.h"

namespace hccl {

void *ShmTransport::peer_arena(int peer, int fd, uint64_t size, uint64_t offset, size_t bytes) {
  if (peer < 0 || peer >= nranks_ || fd < 0 || offset > size || bytes > size - offset)
    return nullptr;
  Peer &p = peers_[peer];
  std::lock_guard<std::mutex> lock(arena_mu_);
  if (p.arena_base == nullptr || p.arena_fd != fd || p.arena_size != size) {
    if (!p.same_pid_ns) return nullptr;
    if (p.arena_base != nullptr) munmap(p.arena_base, p.arena_size);
    p.arena_base = nullptr;
    std::string path = "/proc/" + std::to_string(p.pid) + "/fd/" + std::to_string(fd);
    int f = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (f < 0) return nullptr;
    void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, f, 0);
    close(f);
    if (m == MAP_FAILED) return nullptr;
    p.arena_base = m;
    p.arena_fd = fd;
    p.arena_size = size;
  }
  return static_cast<char *>(p.arena_base) + offset;
}

}  // namespace hccl
