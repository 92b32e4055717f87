// Leader AllReduce, for small and medium messages across hosts: the ranks of
// each host reduce onto its lowest rank (the leader) over shared memory, the
// leaders exchange their partial sums (every leader sends its own to every
// other: one step), each reduces them in host order, and hands the result
// back to its host. A host's link carries (H-1) x S each way, where the flat
// algorithm's carries L(n-L) x S; one network step, where the ring needs
// 2(n-1). The sums fold in local rank order, then host order, alike on every
// rank.
#include "hccl/algo/algorithms.h"

#include <cstring>
#include <vector>

namespace hccl {

HcclResult run_leader(Ctx &x) {
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

}  // namespace hccl
