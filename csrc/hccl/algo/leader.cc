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

// Where each host's blocks sit when packed host by host (rank order within).
std::vector<size_t> host_offsets(const Topology &t, size_t block) {
  std::vector<size_t> off(t.nhosts() + 1, 0);
  for (int k = 0; k < t.nhosts(); ++k) off[k + 1] = off[k] + t.hosts[k].size() * block;
  return off;
}

HcclResult leader_all_reduce(Ctx &x) {
  const char *in = x.in;
  char *out = x.out;
  const size_t count = x.count;
  const size_t bytes = count * x.es;
  const Topology &t = x.topo;
  const int H = t.nhosts(), h = t.host_of[x.me];
  const std::vector<int> &local = t.hosts[h];
  const int L = static_cast<int>(local.size());
  const int leader = local[0];
  if (x.me != leader) {  // to the leader, and the result back
    Batch b(x);
    b.send(leader, in, bytes);
    b.recv(leader, out, bytes);
    return b.run();
  }
  // This host's partial sum, into out (the kernels allow out == in).
  char *scratch = x.comm.scratch(0, bytes * static_cast<size_t>(L > H ? L : H));
  std::vector<const void *> srcs;
  if (L > 1) {
    Batch b(x);
    for (int i = 1; i < L; ++i) b.recv(local[i], scratch + (i - 1) * bytes, bytes);
    HcclResult rc = b.run();
    if (rc != HCCL_SUCCESS) return rc;
    srcs.push_back(in);
    for (int i = 1; i < L; ++i) srcs.push_back(scratch + (i - 1) * bytes);
    reduce(x.op.dtype, x.op.op, out, srcs.data(), L, count);
  } else if (out != in) {
    std::memcpy(out, in, bytes);
  }
  // The leaders' exchange: every partial to every leader, reduced in host order.
  {
    Batch b(x);
    for (int k = 0; k < H; ++k)
      if (k != h) {
        b.send(t.hosts[k][0], out, bytes);
        b.recv(t.hosts[k][0], scratch + k * bytes, bytes);
      }
    HcclResult rc = b.run();
    if (rc != HCCL_SUCCESS) return rc;
  }
  srcs.clear();
  for (int k = 0; k < H; ++k) srcs.push_back(k == h ? out : scratch + k * bytes);
  reduce(x.op.dtype, x.op.op, out, srcs.data(), H, count);
  if (L == 1) return HCCL_SUCCESS;
  Batch b(x);
  for (int i = 1; i < L; ++i) b.send(local[i], out, bytes);
  return b.run();
}

HcclResult leader_all_gather(Ctx &x) {
  const size_t B = x.count * x.es;
  const Topology &t = x.topo;
  const int H = t.nhosts(), h = t.host_of[x.me];
  const std::vector<int> &local = t.hosts[h];
  const int L = static_cast<int>(local.size());
  const size_t S = B * static_cast<size_t>(x.n);
  char *out = x.out;
  if (x.me != local[0]) {  // my block to the leader, everything back
    Batch b(x);
    b.send(local[0], x.in, B);
    b.recv(local[0], out, S);
    return b.run();
  }
  if (out + x.me * B != x.in) std::memcpy(out + x.me * B, x.in, B);
  if (L > 1) {
    Batch b(x);
    for (int j = 1; j < L; ++j) b.recv(local[j], out + local[j] * B, B);
    HcclResult rc = b.run();
    if (rc != HCCL_SUCCESS) return rc;
  }
  // Host by host in one buffer: this host's blocks go out in one message per leader.
  const std::vector<size_t> off = host_offsets(t, B);
  char *pack = x.comm.scratch(0, S);
  for (int j = 0; j < L; ++j) std::memcpy(pack + off[h] + j * B, out + local[j] * B, B);
  {
    Batch b(x);
    for (int k = 0; k < H; ++k)
      if (k != h) {
        b.send(t.hosts[k][0], pack + off[h], off[h + 1] - off[h]);
        b.recv(t.hosts[k][0], pack + off[k], off[k + 1] - off[k]);
      }
    HcclResult rc = b.run();
    if (rc != HCCL_SUCCESS) return rc;
  }
  for (int k = 0; k < H; ++k)
    if (k != h)
      for (size_t j = 0; j < t.hosts[k].size(); ++j) std::memcpy(out + t.hosts[k][j] * B, pack + off[k] + j * B, B);
  if (L == 1) return HCCL_SUCCESS;
  Batch b(x);
  for (int j = 1; j < L; ++j) b.send(local[j], out, S);
  return b.run();
}

HcclResult leader_reduce_scatter(Ctx &x) {
  const size_t B = x.count * x.es;
  const Topology &t = x.topo;
  const int H = t.nhosts(), h = t.host_of[x.me];
  const std::vector<int> &local = t.hosts[h];
  const int L = static_cast<int>(local.size());
  const size_t S = B * static_cast<size_t>(x.n);
  if (x.me != local[0]) {  // my whole input to the leader, my block back
    Batch b(x);
    b.send(local[0], x.in, S);
    b.recv(local[0], x.out, B);
    return b.run();
  }
  // Scratch: the local peers' inputs, this host's partial sums packed host by
  // host, and what the other leaders send for this host's blocks (slot h: the result).
  const std::vector<size_t> off = host_offsets(t, B);
  const size_t mine = off[h + 1] - off[h];
  char *inputs = x.comm.scratch(0, (L - 1) * S + S + H * mine);
  char *pack = inputs + (L - 1) * S;
  char *got = pack + S;
  std::vector<const void *> srcs{x.in};
  if (L > 1) {
    Batch b(x);
    for (int j = 1; j < L; ++j) b.recv(local[j], inputs + (j - 1) * S, S);
    HcclResult rc = b.run();
    if (rc != HCCL_SUCCESS) return rc;
    for (int j = 1; j < L; ++j) srcs.push_back(inputs + (j - 1) * S);
  }
  // This host's sums, block by block, packed host by host (in local order).
  for (int k = 0; k < H; ++k)
    for (size_t j = 0; j < t.hosts[k].size(); ++j) {
      std::vector<const void *> at;
      for (const void *p : srcs) at.push_back(static_cast<const char *>(p) + t.hosts[k][j] * B);
      reduce(x.op.dtype, x.op.op, pack + off[k] + j * B, at.data(), L, x.count);
    }
  {
    Batch b(x);
    for (int k = 0; k < H; ++k)
      if (k != h) {
        b.send(t.hosts[k][0], pack + off[k], off[k + 1] - off[k]);
        b.recv(t.hosts[k][0], got + k * mine, mine);
      }
    HcclResult rc = b.run();
    if (rc != HCCL_SUCCESS) return rc;
  }
  std::vector<const void *> hosts;
  for (int k = 0; k < H; ++k) hosts.push_back(k == h ? pack + off[h] : got + k * mine);
  char *result = got + h * mine;
  reduce(x.op.dtype, x.op.op, result, hosts.data(), H, x.count * static_cast<size_t>(L));
  std::memcpy(x.out, result, B);
  if (L == 1) return HCCL_SUCCESS;
  Batch b(x);
  for (int j = 1; j < L; ++j) b.send(local[j], result + j * B, B);
  return b.run();
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
