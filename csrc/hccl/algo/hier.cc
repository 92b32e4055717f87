// Hierarchical AllReduce, ReduceScatter(V) and AllGather(V) (and, with a group of
// one rank per "host", the plain ring over all ranks, host by host).
//
// AllReduce over L local ranks x H hosts: the buffer is cut into L slices,
// slice i belongs to local rank i.
//   1. inside the host, every rank sends slice j to local rank j and reduces
//      what it receives for its own slice (a chain of recv-reduce), block by
//      block in the order step 2's ring takes them on this host;
//   2. across hosts, the ranks with local index i run a ring all-reduce of
//      slice i cut into H blocks (reduce-scatter, then all-gather), so every
//      local rank uses the network at once;
//   3. inside the host, every rank sends its finished slice to the others,
//      block by block as the ring finishes them.
// Every step is posted at once with dependencies, so a block goes on to the
// next step as soon as its bytes are produced: the phases pipeline.
// ReduceScatter is steps 1-2 (the ring reduce-scatter ends on this rank's own
// block); AllGather is the ring all-gather across hosts, then the exchange
// inside the host. ReduceScatterV and AllGatherV run the same steps on blocks
// of each rank's own size (a ring step then takes as long as its largest
// block). Each element is folded in a fixed order for a given job
// shape, so results are bit-identical on every rank and from run to run.
#include <cstring>
#include <vector>

#include "hccl/algo/algorithms.h"
#include "hccl/algo/select.h"

namespace hccl {
namespace {

// The local peers of this rank in chain order (i+1, i+2, ...).
std::vector<int> local_peers(const Groups &g) {
  std::vector<int> out;
  const int L = static_cast<int>(g.local.size());
  for (int k = 1; k < L; ++k) out.push_back(g.local[(g.li + k) % L]);
  return out;
}

// [p, p + bytes) as local peers may read it in place (Batch::send_stable),
// where it has any: not where the operation writes, [w, w + wbytes).
SharedBuffer stable(const Groups &g, const char *p, size_t bytes, const char *w = nullptr,
                    size_t wbytes = 0) {
  const bool written = p < w + wbytes && w < p + bytes;
  if (g.local.size() < 2 || bytes < kSharedMinBytes || written) return SharedBuffer{};
  return SharedBuffer(p, bytes);
}

// Where a fold's result is: its bytes, and the region producing them (none
// when the result is this rank's own input, untouched).
struct Folded {
  const char *ptr;
  Dep dep;
};

// Folds every local rank's copy of one block, in local order (so on one host
// in rank order): ((x0 op x1) op x2) ... Local rank k's copy comes from it;
// this rank's, `mine`, joins the receive before it as its last operand
// (recv_reduce's tail), so it is read where it lies, never sent to itself.
// The result goes to `dst`, the partial sums before it to `tmp`.
Folded local_fold(Batch &b, const Groups &g, int me, const char *mine, char *dst, char *tmp,
                  size_t bytes) {
  const int L = static_cast<int>(g.local.size());
  Folded acc{mine, Dep{}};
  for (int k = 0; k < L; ++k) {
    const int p = g.local[k];
    if (p == me) continue;  // folded in by the step before (or the first operand)
    const bool mine_next = k + 1 < L && g.local[k + 1] == me;
    char *out = k == L - 1 || (k == L - 2 && mine_next) ? dst : tmp;
    if (k == 0 && !mine_next)
      acc = Folded{out, Dep{b.recv(p, out, bytes), 0}};
    else
      acc = Folded{out, Dep{b.recv_reduce(p, k == 0 ? nullptr : acc.ptr, out, bytes, acc.dep,
                                          mine_next ? mine : nullptr), 0}};
  }
  return acc;
}

// The H blocks of a ring across hosts from `first` down: on host h a ring
// reduce-scatter takes them from h - 1 (its first send; its last receive is
// block h), a ring all-gather has them from h (its own, then what arrives).
std::vector<int> blocks_from(int first, int H) {
  std::vector<int> out;
  for (int t = 0; t < H; ++t) out.push_back(mod(first - t, H));
  return out;
}

int index_in(const std::vector<int> &v, int r) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == r) return static_cast<int>(i);
  return -1;
}

HcclResult hier_all_reduce(Ctx &x, const Groups &g, const char *in, char *out, size_t count) {
  const size_t es = x.es;
  const int L = static_cast<int>(g.local.size()), H = static_cast<int>(g.cross.size());
  const Span si = split(count, L, g.li, es);
  auto sub = [&](const Span &slice, int k) { return split(slice.size(), H, k, es); };
  Batch b(x);

  // 1. Reduce-scatter inside the host: my slice, folded in local order, into
  // out; block by block in the order the ring takes them, so that it starts
  // on the first.
  const std::vector<int> peers = local_peers(g);
  const std::vector<int> order = blocks_from(g.h - 1, H);
  const SharedBuffer input = stable(g, in, count * es, out, count * es);
  for (int q : peers) {
    const Span sq = split(count, L, index_in(g.local, q), es);
    for (int k : order) {
      const Span part = sub(sq, k);
      b.send_stable(q, input, in + (sq.lo + part.lo) * es, part.size() * es);
    }
  }
  char *tmp = L > 2 ? x.comm.scratch(0, si.size() * es) : nullptr;
  std::vector<Dep> acc(H);
  std::vector<const char *> acc_base(H);
  for (int k : order) {
    const size_t lo = sub(si, k).lo * es;
    Folded f = local_fold(b, g, x.me, in + si.lo * es + lo, out + si.lo * es + lo, tmp ? tmp + lo : nullptr,
                          sub(si, k).size() * es);
    acc[k] = f.dep;
    acc_base[k] = f.ptr;
  }
  auto blk = [&](int k) { return out + (si.lo + sub(si, k).lo) * es; };
  auto blk_bytes = [&](int k) { return sub(si, k).size() * es; };

  // 2. Ring across hosts over my slice's H blocks; final[k]: who finishes block k.
  std::vector<Dep> final(H);
  if (H == 1) {
    final[0] = acc[0];  // (one rank alone is handled before: L > 1 here)
  } else {
    const int next = g.cross[mod(g.h + 1, H)], prev = g.cross[mod(g.h - 1, H)];
    const Region *r = nullptr;
    for (int s = 0; s + 1 < H; ++s) {  // reduce-scatter: ends with my block h reduced
      int sb = mod(g.h - 1 - s, H), rb = mod(g.h - 2 - s, H);
      if (s == 0)
        b.send(next, acc_base[sb], blk_bytes(sb), acc[sb]);
      else
        b.send(next, blk(sb), blk_bytes(sb), Dep{r, 0});
      r = b.recv_reduce(prev, acc_base[rb], blk(rb), blk_bytes(rb), acc[rb]);
    }
    final[g.h] = Dep{r, 0};
    for (int s = 0; s + 1 < H; ++s) {  // all-gather
      int sb = mod(g.h - s, H), rb = mod(g.h - s - 1, H);
      b.send(next, blk(sb), blk_bytes(sb), s == 0 ? final[g.h] : Dep{r, 0});
      r = b.recv(prev, blk(rb), blk_bytes(rb));
      final[rb] = Dep{r, 0};
    }
  }

  // 3. All-gather inside the host, block by block as they finish (and are
  // not written again).
  const std::vector<int> finished = blocks_from(g.h, H);
  const SharedBuffer slice = stable(g, out + si.lo * es, si.size() * es);
  for (int q : peers)
    for (int k : finished) b.send_stable(q, slice, blk(k), blk_bytes(k), final[k]);
  for (int q : peers) {
    Span sq = split(count, L, index_in(g.local, q), es);
    for (int k : finished) {
      Span part = sub(sq, k);
      b.recv(q, out + (sq.lo + part.lo) * es, part.size() * es);
    }
  }
  return b.run();
}

HcclResult hier_reduce_scatter(Ctx &x, const Groups &g, const char *in, char *out, const Blocks &bl) {
  const int L = static_cast<int>(g.local.size()), H = static_cast<int>(g.cross.size());
  auto rank = [&](int k, int j) { return g.rank_at(x, k, j); };
  auto block = [&](int k, int j) { return in + bl.off(rank(k, j)); };
  auto len = [&](int k, int j) { return bl.len(rank(k, j)); };
  // tmp: the partial sums of the H blocks this rank's ring carries (local index li).
  std::vector<size_t> toff(H + 1, 0);
  for (int k = 0; k < H; ++k) toff[k + 1] = toff[k] + len(k, g.li);
  char *tmp = H > 1 ? x.comm.scratch(0, toff[H]) : nullptr;
  auto tblk = [&](int k) { return tmp + toff[k]; };
  Batch b(x);

  // 1. Inside the host: local rank j gets, for every host k, the block of
  // rank (k, j) folded over the host in local order; the blocks in the order
  // the ring takes them (h - 1, h - 2, ... h), so that it starts on the first.
  const std::vector<int> peers = local_peers(g);
  const std::vector<int> order = blocks_from(g.h - 1, H);
  const SharedBuffer input = stable(g, in, bl.extent(x.n), out, len(g.h, g.li));
  for (int q : peers) {
    const int j = index_in(g.local, q);
    for (int k : order) b.send_stable(q, input, block(k, j), len(k, j));
  }
  // Partial sums, when they cannot go to tmp (two local ranks fold in one step).
  char *part = H == 1 && L > 2 ? x.comm.scratch(1, len(0, g.li)) : nullptr;
  std::vector<Dep> acc(H);
  std::vector<const char *> acc_base(H);
  for (int k : order) {
    char *dst = H == 1 ? out : tblk(k);
    Folded f = local_fold(b, g, x.me, block(k, g.li), dst, H == 1 ? part : dst, len(k, g.li));
    acc[k] = f.dep;
    acc_base[k] = f.ptr;
  }
  if (H == 1) return b.run();

  // 2. Ring reduce-scatter across hosts, ending with this rank's own block.
  const int next = g.cross[mod(g.h + 1, H)], prev = g.cross[mod(g.h - 1, H)];
  const Region *r = nullptr;
  for (int s = 0; s + 1 < H; ++s) {
    int sb = mod(g.h - 1 - s, H), rb = mod(g.h - 2 - s, H);
    if (s == 0)
      b.send(next, acc_base[sb], len(sb, g.li), acc[sb]);
    else
      b.send(next, tblk(sb), len(sb, g.li), Dep{r, 0});
    r = b.recv_reduce(prev, acc_base[rb], s + 2 == H ? out : tblk(rb), len(rb, g.li), acc[rb]);
  }
  return b.run();
}

HcclResult hier_all_gather(Ctx &x, const Groups &g, const char *in, char *out, const Blocks &bl) {
  const int H = static_cast<int>(g.cross.size());
  auto rank = [&](int k, int j) { return g.rank_at(x, k, j); };
  auto block = [&](int k, int j) { return out + bl.off(rank(k, j)); };
  auto len = [&](int k, int j) { return bl.len(rank(k, j)); };
  if (block(g.h, g.li) != in) std::memcpy(block(g.h, g.li), in, len(g.h, g.li));
  Batch b(x);

  // 1. Ring all-gather across hosts of the blocks of local index li.
  std::vector<Dep> got(H);
  if (H > 1) {
    const int next = g.cross[mod(g.h + 1, H)], prev = g.cross[mod(g.h - 1, H)];
    const Region *r = nullptr;
    for (int s = 0; s + 1 < H; ++s) {
      int sb = mod(g.h - s, H), rb = mod(g.h - s - 1, H);
      if (s == 0)
        b.send(next, in, len(sb, g.li));
      else
        b.send(next, block(sb, g.li), len(sb, g.li), Dep{r, 0});
      r = b.recv(prev, block(rb, g.li), len(rb, g.li));
      got[rb] = Dep{r, 0};
    }
  }
  // 2. Inside the host: my H blocks to every local peer, theirs to me, in the
  // order the ring brings them.
  const std::vector<int> peers = local_peers(g), arrived = blocks_from(g.h, H);
  for (int q : peers)
    for (int k : arrived) b.send(q, k == g.h ? in : block(k, g.li), len(k, g.li), got[k]);
  for (int q : peers) {
    int j = index_in(g.local, q);
    for (int k : arrived) b.recv(q, block(k, j), len(k, j));
  }
  return b.run();
}

}  // namespace

HcclResult run_hier(Ctx &x, bool ring) {
  const Groups g(x, ring);
  switch (x.spec.kind) {
    case OpKind::kAllReduce: return hier_all_reduce(x, g, x.in, x.out, x.count);
    case OpKind::kReduceScatter:
    case OpKind::kReduceScatterV: return hier_reduce_scatter(x, g, x.in, x.out, Blocks::of(x));
    case OpKind::kAllGather:
    case OpKind::kAllGatherV: return hier_all_gather(x, g, x.in, x.out, Blocks::of(x));
    default: return x.fail(HCCL_E_INTERNAL, "no hierarchical algorithm for this collective");
  }
}

}  // namespace hccl
