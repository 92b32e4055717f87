// Single-copy collectives on one host: when every rank's buffers are device
// memory, ranks read (and write) each other's buffers directly through the
// shm connections' peer mappings instead of moving bytes through FIFOs.
#pragma once

#include <vector>

#include "hccl/algo/ctx.h"
#include "hccl/algo/tuning.h"

namespace hccl {

struct PeerViews {
  std::vector<const char *> send;  // nullptr where a rank has no such buffer
  std::vector<char *> recv;
};

// Every rank describes its buffers to every other (one small exchange). *ok
// is the same on every rank: true when all ranks' buffers (those with bytes
// > 0) are device memory, and then *views holds them all as seen from here.
HcclResult direct_open(Ctx &x, const void *send, size_t send_bytes, void *recv, size_t recv_bytes,
                       bool *ok, PeerViews *views);
// Ends a direct phase: waits until every rank is done with the others'
// buffers, then checks that no peer failed meanwhile (a peer that gave up
// may have reused the memory this rank read).
HcclResult direct_close(Ctx &x);

// Symmetric windows (window_direct.cc). window_candidate: whether this op
// exchanges where its buffers lie in the communicator's windows (the same
// answer on every rank: windows are registered collectively). window_open:
// that exchange; *ok (the same on every rank) when every rank's buffers lie
// in windows all ranks mapped, and then *views holds them as seen from here.
bool window_candidate(const Ctx &x);
HcclResult window_open(Ctx &x, const void *send, size_t send_bytes, void *recv, size_t recv_bytes,
                       bool *ok, PeerViews *views);

// The single-copy algorithm of x's collective on `v`.
HcclResult run_direct(Ctx &x, const PeerViews &v);
// direct_open (window_open) on x's buffers by the spec's byte rules, then
// run_direct; *ran is false, on every rank, when some rank's buffers are not
// device memory (not in windows): the caller then runs another algorithm.
HcclResult try_direct(Ctx &x, bool *ran);
HcclResult try_window(Ctx &x, bool *ran);

}  // namespace hccl
