// Single-copy support: when every rank's buffers are aclrtMalloc memory
// (hostrt::locate_memory), ranks read (and write) each other's buffers
// directly through mapped arenas instead of staging through slots.
#pragma once

#include <vector>

#include "hccl/algo/ctx.h"

namespace hccl {

struct PeerViews {
  std::vector<const char *> send;  // nullptr where a rank has no such buffer
  std::vector<char *> recv;
};

// Collective, one round: every rank publishes where its buffers live. *ok is
// the same on every rank: true when all ranks' buffers (those with bytes > 0)
// are aclrtMalloc memory, and then *views holds every rank's buffers as seen
// from here. The caller continues in a new round.
HcclResult single_copy_exchange(Ctx &x, const void *send, size_t send_bytes, void *recv,
                                size_t recv_bytes, bool *ok, PeerViews *views);

}  // namespace hccl
