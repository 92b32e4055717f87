#include "hccl/algo/single_copy.h"

#include <cstring>

#include "runtime/hostrt.h"

namespace hccl {
namespace {

struct ArenaRef {
  uint32_t usable;
  int32_t fd;
  uint64_t size;
  uint64_t send_off, send_bytes;
  uint64_t recv_off, recv_bytes;
};

// Device memory of one backing file (the arena, for now).
bool locate(const void *p, size_t bytes, uint64_t *off, int *fd, uint64_t *size) {
  if (bytes == 0 || p == nullptr) {
    *off = 0;
    return true;
  }
  hostrt::MemRegion r;
  if (hostrt::locate_memory(p, bytes, &r, nullptr) != hostrt::MemKind::kDevice || r.fd < 0)
    return false;
  if (*fd >= 0 && (*fd != r.fd || *size != r.file_size)) return false;
  *fd = r.fd;
  *size = r.file_size;
  *off = r.offset;
  return true;
}

}  // namespace

HcclResult single_copy_exchange(Ctx &x, const void *send, size_t send_bytes, void *recv,
                                size_t recv_bytes, bool *ok, PeerViews *views) {
  ArenaRef mine;
  std::memset(&mine, 0, sizeof(mine));
  int fd = -1;
  uint64_t size = 0;
  mine.send_bytes = send == nullptr ? 0 : send_bytes;
  mine.recv_bytes = recv == nullptr ? 0 : recv_bytes;
  mine.usable = locate(send, mine.send_bytes, &mine.send_off, &fd, &size) &&
                locate(recv, mine.recv_bytes, &mine.recv_off, &fd, &size);
  mine.fd = fd;
  mine.size = size;
  uint64_t j;
  HcclResult r = x.stage(&mine, sizeof(mine), &j);
  if (r != HCCL_SUCCESS) return r;
  if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;

  std::vector<ArenaRef> refs(x.n);
  *ok = true;
  for (int p = 0; p < x.n; ++p) {
    std::memcpy(&refs[p], x.slot(p, j), sizeof(ArenaRef));
    if (!refs[p].usable) *ok = false;
  }
  if (!*ok) return HCCL_SUCCESS;
  views->send.assign(x.n, nullptr);
  views->recv.assign(x.n, nullptr);
  for (int p = 0; p < x.n; ++p) {
    const ArenaRef &a = refs[p];
    if (p == x.me) {
      views->send[p] = static_cast<const char *>(send);
      views->recv[p] = static_cast<char *>(recv);
      continue;
    }
    if (a.send_bytes > 0) {
      views->send[p] = static_cast<const char *>(
          x.tr.peer_arena(p, a.fd, a.size, a.send_off, a.send_bytes));
      if (views->send[p] == nullptr)
        return x.fail(HCCL_E_INTERNAL, "cannot map the device memory of rank " + std::to_string(p));
    }
    if (a.recv_bytes > 0) {
      views->recv[p] = static_cast<char *>(
          x.tr.peer_arena(p, a.fd, a.size, a.recv_off, a.recv_bytes));
      if (views->recv[p] == nullptr)
        return x.fail(HCCL_E_INTERNAL, "cannot map the device memory of rank " + std::to_string(p));
    }
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
