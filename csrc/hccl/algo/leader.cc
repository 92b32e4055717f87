// Leader algorithms, for small and medium messages across hosts: the ranks of
// each host hand their buffers to its lowest rank (the leader) over shared
// memory, the leaders exchange what their hosts have in one network step
// (every leader to every other), and each hands its host the result.
//   AllReduce      the leaders exchange their hosts' partial sums and fold them
//                  in host order. A host's link carries (H-1) x S each way, where
//                  the flat algorithm's carries L(n-L) x S; one network step,
//                  where the ring needs 2(n-1).
//   AllGather      the leaders exchange their hosts' blocks.
//   ReduceScatter  each leader sends every other the partial sums of that
//                  host's blocks, and folds what it gets for its own.
// AllGather and ReduceScatter carry (H-1)/H x S each way, as the hierarchical
// ring does, in one step instead of H-1. Sums fold in local rank order, then
// host order.
#include "hccl/algo/algorithms.h"

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
  // Where each host's blocks sit when packed host by host (rank order within).
  std::vector<size_t> offsets(size_t block) const {
    std::vector<size_t> off(H + 1, 0);
    for (int k = 0; k < H; ++k) off[k + 1] = off[k] + t.hosts[k].size() * block;
    return off;
  }
  const Topology &t;
  const int H, h;
  const std::vector<int> &local;
  const int L;
  const bool leading;
};

// Not a leader: all this rank does is send `mine` to its leader and get the result back.
HcclResult via_leader(Ctx &x, const Hosts &g, const void *mine, size_t mine_bytes, void *result,
                      size_t result_bytes) {
  Batch b(x);
  b.send(g.local[0], mine, mine_bytes);
  b.recv(g.local[0], result, result_bytes);
  return b.run();
}

// The leader: receives `bytes` from local rank j (j >= 1) at `at(j)`.
template <typename At>
HcclResult gather_host(Ctx &x, const Hosts &g, size_t bytes, At at) {
  if (g.L == 1) return HCCL_SUCCESS;
  Batch b(x);
  for (int j = 1; j < g.L; ++j) b.recv(g.local[j], at(j), bytes);
  return b.run();
}

// A range of bytes to send, or to receive into.
template <typename T>
struct Range {
  T *p;
  size_t n;
};

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

// The leader: sends local rank j (j >= 1) `bytes` from `at(j)`.
template <typename At>
HcclResult hand_out(Ctx &x, const Hosts &g, size_t bytes, At at) {
  if (g.L == 1) return HCCL_SUCCESS;
  Batch b(x);
  for (int j = 1; j < g.L; ++j) b.send(g.local[j], at(j), bytes);
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
  // Every partial to every leader, reduced in host order.
  rc = exchange_leaders(
      x, g, [&](int) { return Range<const char>{out, bytes}; },
      [&](int k) { return Range<char>{scratch + k * bytes, bytes}; });
  if (rc != HCCL_SUCCESS) return rc;
  srcs.clear();
  for (int k = 0; k < g.H; ++k) srcs.push_back(k == g.h ? out : scratch + k * bytes);
  reduce(x.op.dtype, x.op.op, out, srcs.data(), g.H, x.count);
  return hand_out(x, g, bytes, [&](int) { return out; });
}

HcclResult leader_all_gather(Ctx &x) {
  const Hosts g(x);
  const size_t B = x.count * x.es;
  const size_t S = B * static_cast<size_t>(x.n);
  char *out = x.out;
  if (!g.leading) return via_leader(x, g, x.in, B, out, S);
  if (out + x.me * B != x.in) std::memcpy(out + x.me * B, x.in, B);
  HcclResult rc = gather_host(x, g, B, [&](int j) { return out + g.local[j] * B; });
  if (rc != HCCL_SUCCESS) return rc;
  // Host by host in one buffer: this host's blocks go out in one message per leader.
  const std::vector<size_t> off = g.offsets(B);
  char *pack = x.comm.scratch(0, S);
  auto host_part = [&](int k) { return Range<char>{pack + off[k], off[k + 1] - off[k]}; };
  for (int j = 0; j < g.L; ++j) std::memcpy(pack + off[g.h] + j * B, out + g.local[j] * B, B);
  rc = exchange_leaders(
      x, g, [&](int) { return Range<const char>{pack + off[g.h], off[g.h + 1] - off[g.h]}; }, host_part);
  if (rc != HCCL_SUCCESS) return rc;
  for (int k = 0; k < g.H; ++k)
    for (size_t j = 0; k != g.h && j < g.t.hosts[k].size(); ++j)
      std::memcpy(out + g.t.hosts[k][j] * B, pack + off[k] + j * B, B);
  return hand_out(x, g, S, [&](int) { return out; });
}

HcclResult leader_reduce_scatter(Ctx &x) {
  const Hosts g(x);
  const size_t B = x.count * x.es;
  const size_t S = B * static_cast<size_t>(x.n);
  if (!g.leading) return via_leader(x, g, x.in, S, x.out, B);
  // Scratch: the local peers' inputs, this host's partial sums packed host by
  // host, and what the other leaders send for this host's blocks (slot h: the result).
  const std::vector<size_t> off = g.offsets(B);
  const size_t mine = off[g.h + 1] - off[g.h];
  char *inputs = x.comm.scratch(0, (g.L - 1) * S + S + g.H * mine);
  char *pack = inputs + (g.L - 1) * S;
  char *got = pack + S;
  HcclResult rc = gather_host(x, g, S, [&](int j) { return inputs + (j - 1) * S; });
  if (rc != HCCL_SUCCESS) return rc;
  std::vector<const void *> srcs{x.in};
  for (int j = 1; j < g.L; ++j) srcs.push_back(inputs + (j - 1) * S);
  // This host's sums, block by block, packed host by host (in local order).
  std::vector<const void *> at(srcs.size());
  for (int k = 0; k < g.H; ++k)
    for (size_t j = 0; j < g.t.hosts[k].size(); ++j) {
      for (size_t i = 0; i < srcs.size(); ++i) at[i] = static_cast<const char *>(srcs[i]) + g.t.hosts[k][j] * B;
      reduce(x.op.dtype, x.op.op, pack + off[k] + j * B, at.data(), g.L, x.count);
    }
  rc = exchange_leaders(
      x, g, [&](int k) { return Range<const char>{pack + off[k], off[k + 1] - off[k]}; },
      [&](int k) { return Range<char>{got + k * mine, mine}; });
  if (rc != HCCL_SUCCESS) return rc;
  std::vector<const void *> hosts;
  for (int k = 0; k < g.H; ++k) hosts.push_back(k == g.h ? pack + off[g.h] : got + k * mine);
  char *result = got + g.h * mine;
  reduce(x.op.dtype, x.op.op, result, hosts.data(), g.H, x.count * static_cast<size_t>(g.L));
  std::memcpy(x.out, result, B);
  return hand_out(x, g, B, [&](int j) { return result + j * B; });
}

}  // namespace

HcclResult run_leader(Ctx &x) {
  switch (x.spec.kind) {
    case OpKind::kAllReduce: return leader_all_reduce(x);
    case OpKind::kAllGather: return leader_all_gather(x);
    case OpKind::kReduceScatter: return leader_reduce_scatter(x);
    default: return x.fail(HCCL_E_INTERNAL, "no leader algorithm for this collective");
  }
}

}  // namespace hccl
