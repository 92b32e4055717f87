// Collectives where every pair exchanges directly: AlltoAll(V/VC),
// AllGatherV, ReduceScatterV, Scatter from the root and Gather to it. Peers are visited
// in a rotation (rank + 1, rank + 2, ...) so that not everyone starts on the
// same peer; the engine progresses all pairs at once. Counts that only one
// side knows travel in the message headers: a receiver given another count
// than its sender finds out at once.
#include <algorithm>
#include <cstring>
#include <vector>

#include "hccl/algo/algorithms.h"

namespace hccl {
namespace {

// How many of the rotation's sends may be under way at once (docs/TRANSPORT.md),
// in AlltoAll(V), AllGatherV and ReduceScatterV.
// Between hosts, all n - 1 at once overflow a link's queue, and a message whose
// tail is dropped waits for TCP's retransmission timeout (200 ms; a 4 MiB
// AlltoAll on simulated 8x2 hosts took 240 ms where the bound is 59). So step
// k's send waits for the receive of step k - window: about kInFlightBytes
// under way per host, at least kMinWindow steps (fewer left gaps). Blocks over
// kMaxGatedBytes go ungated: TCP repairs most of their losses without the
// timeout, and gating them was slower. A wait only goes to an earlier step, so
// the waits form no cycle, whatever window each rank takes.
// Fewer hosts send into a host's link at once, so more may be under way:
// kInFlightPerHosts / H, at least kInFlightBytes. On simulated hosts at 1
// Gbit/s (a 2.5 MB queue on each link), 1 MiB AlltoAll at 4x2 reached 92% of
// the bound with 8 steps under way against 72-75% with 4, 2 MiB at 8x2 75-77%
// with 8 against 74-75% with 4; at 8x2 all 16 at once took 2 MiB to 25%.
// But more than kMaxWindow at once is slower again, even where the bytes are
// few: at 8x2, 512 KiB and 1 MiB took 4-7% longer with all 16 than with 8.
constexpr size_t kInFlightBytes = 1 << 20;
constexpr size_t kInFlightPerHosts = 16 << 20;
constexpr size_t kMaxGatedBytes = 1 << 20;
constexpr size_t kMinWindow = 4;
constexpr size_t kMaxWindow = 8;

int send_window(const Ctx &x, size_t largest) {
  const size_t n = static_cast<size_t>(x.n);
  if (!x.multi_host()) return x.n;
  if (x.comm.tuning.alltoall_window > 0) return static_cast<int>(std::min<size_t>(n, x.comm.tuning.alltoall_window));
  if (largest == 0 || largest > kMaxGatedBytes) return x.n;
  const size_t local = x.topo.hosts[x.topo.host_of[x.me]].size();
  const size_t budget = std::max(kInFlightBytes, kInFlightPerHosts / static_cast<size_t>(x.topo.nhosts()));
  return static_cast<int>(std::min(n, std::clamp(budget / (local * largest), kMinWindow, kMaxWindow)));
}

// The largest of this rank's sends to other hosts, `counts` elements each.
size_t largest_across_hosts(const Ctx &x, const std::vector<uint64_t> &counts) {
  size_t largest = 0;
  for (int p = 0; p < x.n; ++p)
    if (x.topo.host_of[p] != x.topo.host_of[x.me]) largest = std::max<size_t>(largest, counts[p] * x.es);
  return largest;
}

HcclResult all_to_all_v(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = x.es;
  const std::vector<uint64_t> &sc = x.op.send_counts, &sd = x.op.send_displs;
  const std::vector<uint64_t> &rc = x.op.recv_counts, &rd = x.op.recv_displs;
  if (sc[x.me] != rc[x.me])
    return x.fail(HCCL_E_PARA, "this rank sends itself " + std::to_string(sc[x.me]) +
                                   " elements but recvCounts[" + std::to_string(x.me) + "] is " +
                                   std::to_string(rc[x.me]));
  if (send == recv && x.n > 1) {  // AlltoAll in place: read from a copy
    size_t total = 0;
    for (int p = 0; p < x.n; ++p) total = std::max<size_t>(total, (sd[p] + sc[p]) * es);
    char *copy = x.comm.scratch(0, total);
    std::memcpy(copy, send, total);
    send = copy;
  }
  if (sc[x.me] > 0 && send + sd[x.me] * es != recv + rd[x.me] * es)
    std::memmove(recv + rd[x.me] * es, send + sd[x.me] * es, sc[x.me] * es);
  if (x.n == 1) return HCCL_SUCCESS;
  const int window = send_window(x, largest_across_hosts(x, sc));
  std::vector<const Region *> got(x.n);
  Batch b(x);
  for (int k = 1; k < x.n; ++k) {
    int to = (x.me + k) % x.n, from = (x.me - k + x.n) % x.n;
    b.send(to, send + sd[to] * es, sc[to] * es, Dep{}, k > window ? got[k - window] : nullptr);
    got[k] = b.recv(from, recv + rd[from] * es, rc[from] * es);
  }
  return b.run();
}

HcclResult all_gather_v(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = x.es;
  const std::vector<uint64_t> &rc = x.op.recv_counts, &rd = x.op.recv_displs;
  const uint64_t mine = x.op.count;
  if (mine > 0 && send != recv + rd[x.me] * es) std::memcpy(recv + rd[x.me] * es, send, mine * es);
  if (x.n == 1) return HCCL_SUCCESS;
  const int window = send_window(x, mine * es);  // the same rotation as AlltoAll's
  std::vector<const Region *> got(x.n);
  Batch b(x);
  for (int k = 1; k < x.n; ++k) {
    int to = (x.me + k) % x.n, from = (x.me - k + x.n) % x.n;
    b.send(to, send, mine * es, Dep{}, k > window ? got[k - window] : nullptr);
    got[k] = b.recv(from, recv + rd[from] * es, rc[from] * es);
  }
  return b.run();
}

HcclResult reduce_scatter_v(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = x.es;
  const std::vector<uint64_t> &sc = x.op.send_counts, &sd = x.op.send_displs;
  const size_t bytes = x.op.count * es;
  if (x.n == 1) {
    if (bytes > 0 && send + sd[0] * es != recv) std::memcpy(recv, send + sd[0] * es, bytes);
    return HCCL_SUCCESS;
  }
  // AlltoAll's rotation and send window: step k sends to rank + k the block
  // that rank + k receives from rank - k in its step k. My block is folded
  // with every peer's in a fixed order (the rotation).
  const int window = send_window(x, largest_across_hosts(x, sc));
  std::vector<const Region *> got(x.n);
  Batch b(x);
  Dep sum;
  for (int k = 1; k < x.n; ++k) {
    int to = (x.me + k) % x.n, from = (x.me - k + x.n) % x.n;
    b.send(to, send + sd[to] * es, sc[to] * es, Dep{}, k > window ? got[k - window] : nullptr);
    sum.region = got[k] = b.recv_reduce(from, k == 1 ? send + sd[x.me] * es : recv, recv, bytes, sum);
  }
  return b.run();
}

HcclResult scatter(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const int root = static_cast<int>(x.op.root);
  const size_t B = x.op.count * x.es;
  if (x.me == root && B > 0 && send + root * B != recv) std::memcpy(recv, send + root * B, B);
  if (x.n == 1) return HCCL_SUCCESS;
  if (x.n <= kFlatRanks)  // one step, signatures checked along a tree (ctx.h)
    return rooted_exchange(
        x, root, true,
        [&](Batch &b, int p) { b.send(p, send + p * B, B); },
        [&](Batch &b) { b.recv(root, recv, B); });
  HcclResult rc = compare_signatures(x);
  if (rc != HCCL_SUCCESS) return rc;
  Batch b(x);
  if (x.me == root) {
    for (int k = 1; k < x.n; ++k) {
      int to = (root + k) % x.n;
      b.send(to, send + to * B, B);
    }
  } else {
    b.recv(root, recv, B);
  }
  return b.run();
}

// Scatter's mirror image: the root receives block p from rank p.
HcclResult gather(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const int root = static_cast<int>(x.op.root);
  const size_t B = x.op.count * x.es;
  if (x.me == root && B > 0 && recv + root * B != send) std::memcpy(recv + root * B, send, B);
  if (x.n == 1) return HCCL_SUCCESS;
  if (x.n <= kFlatRanks)  // one step, signatures checked along a tree (ctx.h)
    return rooted_exchange(
        x, root, false,
        [&](Batch &b, int p) { b.recv(p, recv + p * B, B); },
        [&](Batch &b) { b.send(root, send, B); });
  HcclResult rc = compare_signatures(x);
  if (rc != HCCL_SUCCESS) return rc;
  Batch b(x);
  if (x.me == root) {
    for (int k = 1; k < x.n; ++k) {
      int from = (root + k) % x.n;
      b.recv(from, recv + from * B, B);
    }
  } else {
    b.send(root, send, B);
  }
  return b.run();
}

}  // namespace

HcclResult run_pairwise(Ctx &x) {
  switch (x.spec.kind) {
    case OpKind::kAlltoAll:
    case OpKind::kAlltoAllV: return all_to_all_v(x);
    case OpKind::kAllGatherV: return all_gather_v(x);
    case OpKind::kReduceScatterV: return reduce_scatter_v(x);
    case OpKind::kScatter: return scatter(x);
    case OpKind::kGather: return gather(x);
    default: return x.fail(HCCL_E_INTERNAL, "no pairwise algorithm for this collective");
  }
}

}  // namespace hccl
