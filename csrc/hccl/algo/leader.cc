// Leader algorithms, for small and medium messages across hosts: the ranks of
// each host hand their buffers to its lowest rank (the leader) over shared
// memory, the leaders combine what their hosts have, and each hands its host
// the result.
//   AllReduce      the leaders combine their hosts' partial sums.
//   AllGather      the leaders exchange their hosts' blocks.
//   ReduceScatter  the leaders combine the partial sums of each host's blocks
//                  and each keeps its own host's.
//   AllGatherV and ReduceScatterV as AllGather and ReduceScatter, on blocks of
//   each rank's own size (packed host by host: Pack).
// Between the leaders, one of two shapes:
//   exchange  one step, every leader to every other (H - 1 messages each way).
//             AllReduce carries (H-1) x S over a host's link, where the flat
//             algorithm's carries L(n-L) x S and the ring needs 2(n-1) steps;
//             AllGather and ReduceScatter (H-1)/H x S, as the hierarchical
//             ring does, in one step instead of H - 1.
//   doubling  H a power of two from 4: log2 H steps of one message each way
//             (recursive doubling; for ReduceScatter, halving). The same
//             bytes for AllGather and ReduceScatter, log2 H x S for AllReduce;
//             or, for AllReduce where the cost model says so (select.cc), halving
//             then doubling over H blocks: 2 log2 H steps, 2(H-1)/H x S.
//             Step k pairs host h with h ^ (2^(k+1) - 1), its mirror in its
//             block of 2^(k+1) hosts, not h ^ 2^k: both join the block's two
//             halves, and the mirrors include every two neighbouring hosts,
//             the signature check's tree between hosts (algo/ctx.h,
//             Topology::check_parent). So a leader running another collective
//             (a rooted one checks along that tree) hears from its neighbour
//             with another signature and fails at once, as with the exchange.
//   fold      AllReduce on H hosts otherwise, from 3 (where the cost model
//             prefers it to the exchange, and always beyond 16 hosts): with P
//             the largest power of two below H and r = H - P, each odd host
//             below 2r hands its partial sum to the host before it, the P
//             hosts left double as above (numbered 0..P-1 in host order), and
//             the odd hosts get the result back: log2 P + 2 steps.
// Sums fold in local rank order, then host order (the exchange) or pairwise,
// lower hosts first, the same on every rank (doubling, fold).
#include "hccl/algo/algorithms.h"
#include "hccl/algo/select.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace hccl {
namespace {

// This rank's host as the leader algorithms see it; the leader is its lowest rank.
struct Hosts {
  explicit Hosts(const Ctx &x)
      : t(x.topo), H(t.nhosts()), h(t.host_of[x.me]), local(t.hosts[h]),
        L(static_cast<int>(local.size())), leading(x.me == local[0]) {}
  int leader(int k) const { return t.hosts[k][0]; }
  const Topology &t;
  const int H, h;
  const std::vector<int> &local;
  const int L;
  const bool leading;
};

// The blocks packed host by host (local order within): where rank r's sits
// (at[r]), and each host's part (host[k] .. host[k + 1]).
struct Pack {
  Pack(const Hosts &g, const Blocks &bl) : at(g.t.host_of.size()), host(g.H + 1, 0) {
    size_t p = 0;
    for (int k = 0; k < g.H; ++k) {
      host[k] = p;
      for (int r : g.t.hosts[k]) {
        at[r] = p;
        p += bl.len(r);
      }
    }
    host[g.H] = p;
  }
  std::vector<size_t> at, host;
};

// Not a leader: all this rank does is send `mine` to its leader and get the result back.
HcclResult via_leader(Ctx &x, const Hosts &g, const void *mine, size_t mine_bytes, void *result,
                      size_t result_bytes) {
  Batch b(x);
  b.send(g.local[0], mine, mine_bytes);
  b.recv(g.local[0], result, result_bytes);
  return b.run();
}

// A range of bytes to send, or to receive into.
template <typename T>
struct Range {
  T *p;
  size_t n;
};

// The leader: receives from local rank j (j >= 1) into the range part(j)
// (gather_host: `bytes` at at(j)).
template <typename Part>
HcclResult gather_parts(Ctx &x, const Hosts &g, Part part) {
  if (g.L == 1) return HCCL_SUCCESS;
  Batch b(x);
  for (int j = 1; j < g.L; ++j) {
    const Range<char> r = part(j);
    b.recv(g.local[j], r.p, r.n);
  }
  return b.run();
}
template <typename At>
HcclResult gather_host(Ctx &x, const Hosts &g, size_t bytes, At at) {
  return gather_parts(x, g, [&](int j) { return Range<char>{at(j), bytes}; });
}

// The one network step: to the leader of every other host k, the bytes
// `out(k)` says, and from it into `in(k)`.
template <typename Out, typename In>
HcclResult exchange_leaders(Ctx &x, const Hosts &g, Out out, In in) {
  Batch b(x);
  for (int k = 0; k < g.H; ++k)
    if (k != g.h) {
      const Range<const char> o = out(k);
      const Range<char> i = in(k);
      b.send(g.leader(k), o.p, o.n);
      b.recv(g.leader(k), i.p, i.n);
    }
  return b.run();
}

// Recursive doubling between the leaders (see the top).
bool doubling(const Hosts &g) { return leader_steps(g.H) > 1; }
int mirror(int h, int k) { return h ^ ((2 << k) - 1); }
// The first host of host h's block of 2^k hosts.
int block_of(int h, int k) { return h & ~((1 << k) - 1); }

// One step with leader `peer`: `o` out, `i` in.
HcclResult swap_with(Ctx &x, int peer, Range<const char> o, Range<char> i) {
  Batch b(x);
  b.send(peer, o.p, o.n);
  b.recv(peer, i.p, i.n);
  return b.run();
}

// dst = a op b, with the lower host's operand first (dst may be either).
void fold_pair(Ctx &x, bool mine_first, char *dst, const void *mine, const void *theirs, uint64_t count) {
  const void *srcs[2] = {mine_first ? mine : theirs, mine_first ? theirs : mine};
  reduce(x.op.dtype, x.op.op, dst, srcs, 2, count);
}

// The leader: sends local rank j (j >= 1) the range part(j) (hand_out: `bytes`
// from at(j)).
template <typename Part>
HcclResult hand_out_parts(Ctx &x, const Hosts &g, Part part) {
  if (g.L == 1) return HCCL_SUCCESS;
  Batch b(x);
  for (int j = 1; j < g.L; ++j) {
    const Range<const char> r = part(j);
    b.send(g.local[j], r.p, r.n);
  }
  return b.run();
}
template <typename At>
HcclResult hand_out(Ctx &x, const Hosts &g, size_t bytes, At at) {
  return hand_out_parts(x, g, [&](int j) { return Range<const char>{at(j), bytes}; });
}

// AllReduce of the leaders' partial sums in `sums` (doubling; scratch as large
// as `sums`: blocks are whole 64-byte runs, so a small buffer's first half of
// the blocks can hold all of it): the H blocks of the buffer reduce-scatter by halving, block h ending
// on host h's leader (each block folded along one path, so every rank gets the
// same bits), then all-gather by doubling. 2(H-1)/H x S each way, in 2 log2 H steps.
HcclResult halve_then_double(Ctx &x, const Hosts &g, char *sums, char *scratch) {
  const int K = leader_steps(g.H);
  auto blocks = [&](int a, int w) {  // bytes of blocks [a, a + w)
    const size_t lo = split(x.count, g.H, a, x.es).lo, hi = split(x.count, g.H, a + w - 1, x.es).hi;
    return Range<char>{sums + lo * x.es, (hi - lo) * x.es};
  };
  for (int k = K - 1; k >= 0; --k) {
    const int p = mirror(g.h, k), w = 1 << k;
    const Range<char> keep = blocks(block_of(g.h, k), w), give = blocks(block_of(p, k), w);
    HcclResult rc = swap_with(x, g.leader(p), {give.p, give.n}, {scratch, keep.n});
    if (rc != HCCL_SUCCESS) return rc;
    fold_pair(x, g.h < p, keep.p, keep.p, scratch, keep.n / x.es);
  }
  for (int k = 0; k < K; ++k) {
    const int p = mirror(g.h, k), w = 1 << k;
    const Range<char> mine = blocks(block_of(g.h, k), w), theirs = blocks(block_of(p, k), w);
    HcclResult rc = swap_with(x, g.leader(p), {mine.p, mine.n}, theirs);
    if (rc != HCCL_SUCCESS) return rc;
  }
  return HCCL_SUCCESS;
}

// The fold's hosts (see the top): this host's number among the P that double
// (-1 for an odd host below 2r, which hands its sum on), and each one's host.
// On a power of two r is 0: every host doubles as itself.
struct Fold {
  explicit Fold(int H, int h) {
    while (P * 2 <= H) P *= 2;
    r = H - P;
    v = h < 2 * r ? (h % 2 == 0 ? h / 2 : -1) : h - r;
    K = ceil_log2(P);
  }
  int host(int u) const { return u < r ? 2 * u : u + r; }
  int P = 1, r = 0, v = 0, K = 0;
};

// AllReduce of the leaders' partial sums in `sums` by the fold (see the top),
// which on a power of two is plain doubling.
HcclResult fold_and_double(Ctx &x, const Hosts &g, char *sums, char *scratch) {
  const size_t bytes = x.count * x.es;
  const Fold f(g.H, g.h);
  if (f.v < 0) {  // hand on, get the result back
    HcclResult rc = swap_with(x, g.leader(g.h - 1), {sums, bytes}, {scratch, bytes});
    if (rc == HCCL_SUCCESS) std::memcpy(sums, scratch, bytes);
    return rc;
  }
  const bool pair = g.h < 2 * f.r;  // the next host hands its sum to this one
  if (pair) {
    Batch b(x);
    b.recv(g.leader(g.h + 1), scratch, bytes);
    HcclResult rc = b.run();
    if (rc != HCCL_SUCCESS) return rc;
    fold_pair(x, true, sums, sums, scratch, x.count);
  }
  for (int k = 0; k < f.K; ++k) {
    const int p = mirror(f.v, k);
    HcclResult rc = swap_with(x, g.leader(f.host(p)), {sums, bytes}, {scratch, bytes});
    if (rc != HCCL_SUCCESS) return rc;
    fold_pair(x, f.v < p, sums, sums, scratch, x.count);
  }
  if (!pair) return HCCL_SUCCESS;
  Batch b(x);
  b.send(g.leader(g.h + 1), sums, bytes);
  return b.run();
}

HcclResult leader_all_reduce(Ctx &x) {
  const Hosts g(x);
  const char *in = x.in;
  char *out = x.out;
  const size_t bytes = x.count * x.es;
  if (!g.leading) return via_leader(x, g, in, bytes, out, bytes);
  // This host's partial sum, into out (the kernels allow out == in).
  char *scratch = x.comm.scratch(0, bytes * static_cast<size_t>(g.L > g.H ? g.L : g.H));
  HcclResult rc = gather_host(x, g, bytes, [&](int j) { return scratch + (j - 1) * bytes; });
  if (rc != HCCL_SUCCESS) return rc;
  std::vector<const void *> srcs{in};
  for (int j = 1; j < g.L; ++j) srcs.push_back(scratch + (j - 1) * bytes);
  if (g.L > 1)
    reduce(x.op.dtype, x.op.op, out, srcs.data(), g.L, x.count);
  else if (out != in)
    std::memcpy(out, in, bytes);
  if (doubling(g) && leader_halves(x, bytes)) {
    x.algo = "leader:halving";
    rc = halve_then_double(x, g, out, scratch);
    if (rc != HCCL_SUCCESS) return rc;
  } else if (doubling(g) || leader_folds(x, bytes)) {  // a power of two folds nothing
    x.algo = "leader:doubling";
    rc = fold_and_double(x, g, out, scratch);
    if (rc != HCCL_SUCCESS) return rc;
  } else {
    // Every partial to every leader, reduced in host order.
    rc = exchange_leaders(
        x, g, [&](int) { return Range<const char>{out, bytes}; },
        [&](int k) { return Range<char>{scratch + k * bytes, bytes}; });
    if (rc != HCCL_SUCCESS) return rc;
    srcs.clear();
    for (int k = 0; k < g.H; ++k) srcs.push_back(k == g.h ? out : scratch + k * bytes);
    reduce(x.op.dtype, x.op.op, out, srcs.data(), g.H, x.count);
  }
  return hand_out(x, g, bytes, [&](int) { return out; });
}

// AllGather(V): where the blocks lie one after the other in rank order (AllGather,
// AllGatherV's usual arrays), every rank of the host gets the output itself;
// else the pack, which each lays out.
HcclResult leader_all_gather(Ctx &x, const Blocks &bl) {
  const Hosts g(x);
  const Pack pk(g, bl);
  const size_t S = pk.host[g.H], mine = bl.len(x.me);
  const bool dense = bl.dense(x.n);
  char *out = x.out;
  char *pack = dense && !g.leading ? nullptr : x.comm.scratch(0, S);
  auto lay_out = [&]() {
    for (int r = 0; r < x.n; ++r) std::memcpy(out + bl.off(r), pack + pk.at[r], bl.len(r));
  };
  if (!g.leading) {
    HcclResult rc = via_leader(x, g, x.in, mine, dense ? out : pack, S);
    if (rc == HCCL_SUCCESS && !dense) lay_out();
    return rc;
  }
  std::memcpy(pack + pk.at[x.me], x.in, mine);
  HcclResult rc = gather_parts(x, g, [&](int j) {
    const int r = g.local[j];
    return Range<char>{pack + pk.at[r], bl.len(r)};
  });
  if (rc != HCCL_SUCCESS) return rc;
  // Host by host in one buffer: this host's blocks go out in one message per leader.
  const std::vector<size_t> &off = pk.host;
  auto host_part = [&](int k) { return Range<char>{pack + off[k], off[k + 1] - off[k]}; };
  if (doubling(g)) {
    // Step k: this leader's block of 2^k hosts for its mirror's.
    for (int k = 0; k < leader_steps(g.H) && rc == HCCL_SUCCESS; ++k) {
      const int p = mirror(g.h, k), a = block_of(g.h, k), c = block_of(p, k), w = 1 << k;
      rc = swap_with(x, g.leader(p), {pack + off[a], off[a + w] - off[a]}, {pack + off[c], off[c + w] - off[c]});
    }
  } else {
    rc = exchange_leaders(
        x, g, [&](int) { return Range<const char>{pack + off[g.h], off[g.h + 1] - off[g.h]}; }, host_part);
  }
  if (rc != HCCL_SUCCESS) return rc;
  lay_out();
  return hand_out(x, g, S, [&](int) { return dense ? out : pack; });
}

// ReduceScatter(V): each rank hands its leader its input up to the end of its
// last block (`extent`), and gets its own block back.
HcclResult leader_reduce_scatter(Ctx &x, const Blocks &bl) {
  const Hosts g(x);
  const Pack pk(g, bl);
  const size_t S = pk.host[g.H], E = bl.extent(x.n);
  if (!g.leading) return via_leader(x, g, x.in, E, x.out, bl.len(x.me));
  // Scratch: the local peers' inputs, this host's partial sums packed host by
  // host, and what the other leaders send for this host's blocks (slot h: the result).
  const std::vector<size_t> &off = pk.host;
  const size_t mine = off[g.h + 1] - off[g.h];
  char *inputs = x.comm.scratch(0, (g.L - 1) * E + S + std::max(g.H * mine, S));
  char *pack = inputs + (g.L - 1) * E;
  char *got = pack + S;
  HcclResult rc = gather_host(x, g, E, [&](int j) { return inputs + (j - 1) * E; });
  if (rc != HCCL_SUCCESS) return rc;
  std::vector<const void *> srcs{x.in};
  for (int j = 1; j < g.L; ++j) srcs.push_back(inputs + (j - 1) * E);
  // This host's sums, block by block, packed host by host (in local order).
  std::vector<const void *> at(srcs.size());
  for (int r = 0; r < x.n; ++r) {
    for (size_t i = 0; i < srcs.size(); ++i) at[i] = static_cast<const char *>(srcs[i]) + bl.off(r);
    reduce(x.op.dtype, x.op.op, pack + pk.at[r], at.data(), g.L, bl.len(r) / x.es);
  }
  char *result = pack + off[g.h];
  if (doubling(g)) {
    // Halving, from the widest step: of the sums for this leader's block of
    // 2^(k+1) hosts, its mirror's half goes to the mirror, which sends those
    // for this leader's half.
    for (int k = leader_steps(g.H) - 1; k >= 0; --k) {
      const int p = mirror(g.h, k), a = block_of(g.h, k), c = block_of(p, k), w = 1 << k;
      const size_t half = off[a + w] - off[a];
      rc = swap_with(x, g.leader(p), {pack + off[c], off[c + w] - off[c]}, {got, half});
      if (rc != HCCL_SUCCESS) return rc;
      fold_pair(x, g.h < p, pack + off[a], pack + off[a], got, half / x.es);
    }
  } else {
    rc = exchange_leaders(
        x, g, [&](int k) { return Range<const char>{pack + off[k], off[k + 1] - off[k]}; },
        [&](int k) { return Range<char>{got + k * mine, mine}; });
    if (rc != HCCL_SUCCESS) return rc;
    std::vector<const void *> hosts;
    for (int k = 0; k < g.H; ++k) hosts.push_back(k == g.h ? pack + off[g.h] : got + k * mine);
    result = got + g.h * mine;
    reduce(x.op.dtype, x.op.op, result, hosts.data(), g.H, mine / x.es);
  }
  auto part = [&](int j) {
    const int r = g.local[j];
    return Range<const char>{result + (pk.at[r] - off[g.h]), bl.len(r)};
  };
  std::memcpy(x.out, part(0).p, part(0).n);
  return hand_out_parts(x, g, part);
}

// AlltoAll: the leader gathers its host's send buffers, sends each other
// leader the blocks its host's ranks send that host's ranks (one message, L x
// L_k blocks), and hands each local rank its whole receive buffer. The same
// bytes over a host's link as pairwise, in H - 1 messages each way per host
// where pairwise takes n - L per rank.
HcclResult leader_all_to_all(Ctx &x) {
  const Hosts g(x);
  const size_t B = x.count * x.es;
  const size_t S = B * static_cast<size_t>(x.n);
  if (!g.leading) return via_leader(x, g, x.in, S, x.out, S);
  const size_t L = static_cast<size_t>(g.L), cross = L * (static_cast<size_t>(x.n) - L) * B;
  // Scratch: the local peers' send buffers, the packs out and in (host by
  // host, other hosts only), and every local rank's result.
  char *inputs = x.comm.scratch(0, (L - 1) * S + 2 * cross + L * S);
  char *out_pack = inputs + (L - 1) * S, *in_pack = out_pack + cross, *results = in_pack + cross;
  HcclResult rc = gather_host(x, g, S, [&](int j) { return inputs + (j - 1) * S; });
  if (rc != HCCL_SUCCESS) return rc;
  auto src = [&](size_t j) { return j == 0 ? x.in : inputs + (j - 1) * S; };  // local rank j's send buffer
  std::vector<size_t> at(g.H + 1, 0);  // where host k's pack starts (0 bytes for this host)
  for (int k = 0; k < g.H; ++k) at[k + 1] = at[k] + (k == g.h ? 0 : L * g.t.hosts[k].size() * B);
  for (int k = 0; k < g.H; ++k)  // out: [local j][their i], in: [their i][local j]
    for (size_t j = 0; k != g.h && j < L; ++j)
      for (size_t i = 0; i < g.t.hosts[k].size(); ++i)
        std::memcpy(out_pack + at[k] + (j * g.t.hosts[k].size() + i) * B, src(j) + g.t.hosts[k][i] * B, B);
  rc = exchange_leaders(
      x, g, [&](int k) { return Range<const char>{out_pack + at[k], at[k + 1] - at[k]}; },
      [&](int k) { return Range<char>{in_pack + at[k], at[k + 1] - at[k]}; });
  if (rc != HCCL_SUCCESS) return rc;
  for (size_t j = 0; j < L; ++j) {
    char *res = results + j * S;
    for (int k = 0; k < g.H; ++k)
      for (size_t i = 0; i < g.t.hosts[k].size(); ++i)
        std::memcpy(res + g.t.hosts[k][i] * B,
                    k == g.h ? src(i) + g.local[j] * B : in_pack + at[k] + (i * L + j) * B, B);
  }
  std::memcpy(x.out, results, S);
  return hand_out(x, g, S, [&](int j) { return results + j * S; });
}

}  // namespace

int leader_steps(int hosts) {
  if (hosts < 4 || (hosts & (hosts - 1)) != 0) return 1;
  return ceil_log2(hosts);
}

int leader_fold_steps(int hosts) {
  if (hosts < 3 || (hosts & (hosts - 1)) == 0) return 0;
  return Fold(hosts, 0).K + 2;
}

HcclResult run_leader(Ctx &x) {
  if (leader_steps(x.topo.nhosts()) > 1 && x.spec.kind != OpKind::kAlltoAll) x.algo = "leader:doubling";
  switch (x.spec.kind) {
    case OpKind::kAllReduce: return leader_all_reduce(x);
    case OpKind::kAllGather:
    case OpKind::kAllGatherV: return leader_all_gather(x, Blocks::of(x));
    case OpKind::kReduceScatter:
    case OpKind::kReduceScatterV: return leader_reduce_scatter(x, Blocks::of(x));
    case OpKind::kAlltoAll: return leader_all_to_all(x);
    default: return x.fail(HCCL_E_INTERNAL, "no leader algorithm for this collective");
  }
}

}  // namespace hccl
