// Collectives where every pair exchanges directly: AlltoAll(V/VC),
// AllGatherV, ReduceScatterV, Scatter from the root and Gather to it. Peers are visited
// in a rotation (rank + 1, rank + 2, ...) so that not everyone starts on the
// same peer; the engine progresses all pairs at once. Counts that only one
// side knows travel in the message headers: a receiver given another count
// than its sender finds out at once. AlltoAll between hosts of several ranks
// each can go by rails instead (run_rail, below).
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

// What every AlltoAll(V) starts with: this rank's own block in place, and
// where the blocks to send are read from (*send: a copy of them, in place).
HcclResult own_block(Ctx &x, const char **send) {
  *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = x.es;
  const std::vector<uint64_t> &sc = x.op.send_counts, &sd = x.op.send_displs;
  const std::vector<uint64_t> &rc = x.op.recv_counts, &rd = x.op.recv_displs;
  if (sc[x.me] != rc[x.me])
    return x.fail(HCCL_E_PARA, "this rank sends itself " + std::to_string(sc[x.me]) +
                                   " elements but recvCounts[" + std::to_string(x.me) + "] is " +
                                   std::to_string(rc[x.me]));
  if (*send == recv && x.n > 1) {  // AlltoAll in place: read from a copy
    size_t total = 0;
    for (int p = 0; p < x.n; ++p) total = std::max<size_t>(total, (sd[p] + sc[p]) * es);
    char *copy = x.comm.scratch(0, total);
    std::memcpy(copy, *send, total);
    *send = copy;
  }
  if (sc[x.me] > 0 && *send + sd[x.me] * es != recv + rd[x.me] * es)
    std::memmove(recv + rd[x.me] * es, *send + sd[x.me] * es, sc[x.me] * es);
  return HCCL_SUCCESS;
}

HcclResult all_to_all_v(Ctx &x) {
  const char *send = nullptr;
  HcclResult res = own_block(x, &send);
  if (res != HCCL_SUCCESS || x.n == 1) return res;
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = x.es;
  const std::vector<uint64_t> &sc = x.op.send_counts, &sd = x.op.send_displs;
  const std::vector<uint64_t> &rc = x.op.recv_counts, &rd = x.op.recv_displs;
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

// How many host steps a rail keeps under way: the rotation's window in steps
// of L blocks, at most kMaxRailSteps; all of them where a step carries
// kMaxGatedBytes or more to its peer, as the rotation leaves its large blocks
// ungated. On 8x2 simulated hosts at 1 Gbit/s (paired): 1 MiB took 5-7% less
// with 2 steps than with 4, and 1 step no less than 2; 8 and 16 MiB 8-9% less
// ungated than with 2; on 4x2 either moved within 1%.
constexpr int kMaxRailSteps = 2;

int rail_steps(const Ctx &x, size_t B, int L) {
  const int steps = std::max(1, send_window(x, B) / L);
  if (x.comm.tuning.alltoall_window > 0) return steps;  // forced
  if (static_cast<size_t>(L) * B >= kMaxGatedBytes) return x.topo.nhosts();
  return std::min(steps, kMaxRailSteps);
}

}  // namespace

// AlltoAll by rails (docs/TRANSPORT.md). Rank (h, i), local index i on host
// h, sends over the network only to rank (k, i) of every other host k: its own
// block for that rank, then its local peers' blocks for it, which they hand it
// over shared memory first. The same bytes cross a host's link as in the
// rotation, over L (H - 1) connections each way instead of L (n - L): many
// flows into one link end unevenly and overflow its queue together. Host
// steps of L blocks go rail_steps at a time, each later one gated on the
// partner's own block of an earlier step, which waits for no handover (gated
// on the step's last block, the waits chained through the handovers: 8x2 took
// 12-15% longer than the rotation).
bool rail_fits(const Ctx &x) {
  return x.spec.kind == OpKind::kAlltoAll && x.multi_host() && x.topo.even() && x.topo.hosts[0].size() > 1;
}

HcclResult run_rail(Ctx &x) {
  const char *send = nullptr;
  HcclResult res = own_block(x, &send);
  if (res != HCCL_SUCCESS) return res;
  char *recv = static_cast<char *>(x.op.recv);
  const Topology &t = x.topo;
  const size_t B = x.count * x.es;
  const int h = t.host_of[x.me], i = t.local_index[x.me], H = t.nhosts();
  const int L = static_cast<int>(t.hosts[h].size());
  auto at = [&](int rank) { return static_cast<size_t>(rank) * B; };  // a rank's block
  // The local peers' blocks this rank forwards: peer l's for host h + j's rank i.
  char *fwd = x.comm.scratch(1, static_cast<size_t>((L - 1) * (H - 1)) * B);
  auto fwd_at = [&](int l, int j) { return fwd + static_cast<size_t>((l < i ? l : l - 1) * (H - 1) + j - 1) * B; };
  std::vector<const Region *> handed(static_cast<size_t>(L * H));  // [l * H + j]
  // Handed over by reference from device memory; from host memory (or the in-place copy) copied.
  const SharedBuffer mine(send, static_cast<size_t>(x.n) * B);
  Batch b(x);
  for (int d = 1; d < L; ++d) {  // local peers in a rotation: my block for each, then theirs to forward
    const int lt = (i + d) % L, lf = (i - d + L) % L;
    const int to = t.rank_at(h, lt), from = t.rank_at(h, lf);
    b.send(to, send + at(to), B);
    for (int j = 1; j < H; ++j) b.send_stable(to, mine, send + at(t.rank_at((h + j) % H, lt)), B);
    b.recv(from, recv + at(from), B);
    for (int j = 1; j < H; ++j) handed[lf * H + j] = b.recv(from, fwd_at(lf, j), B);
  }
  const int steps = rail_steps(x, B, L);
  std::vector<const Region *> own(static_cast<size_t>(H));
  for (int j = 1; j < H; ++j) {  // host steps: to host h + j, from host h - j
    const int to = t.rank_at((h + j) % H, i), from_host = (h - j + H) % H, from = t.rank_at(from_host, i);
    const Region *gate = j > steps ? own[j - steps] : nullptr;
    b.send(to, send + at(to), B, Dep{}, gate);  // mine first: the others wait for their handover
    for (int d = 1; d < L; ++d) {
      const int l = (i + d) % L;
      b.send(to, fwd_at(l, j), B, Dep{handed[l * H + j], 0}, gate);
    }
    own[j] = b.recv(from, recv + at(from), B);
    for (int d = 1; d < L; ++d) b.recv(from, recv + at(t.rank_at(from_host, (i + d) % L)), B);
  }
  return b.run();
}

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
