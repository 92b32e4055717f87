// The algorithms the dispatcher (dispatch.cc) runs, one file each. Every
// entry reads the operation from the Ctx (x.in, x.out, x.count, x.root, by
// the spec's byte rules) and handles the collectives its spec rows list.
#pragma once

#include "hccl/algo/ctx.h"

namespace hccl {

// flat.cc: AllReduce, Reduce: every rank's buffer to every rank (the root).
HcclResult run_flat(Ctx &x);
// hier.cc: AllReduce, ReduceScatter, AllGather; `ring`: one ring over all
// ranks, host by host, instead of host-local steps around a ring of hosts.
HcclResult run_hier(Ctx &x, bool ring);
// leader.cc: AllReduce, AllGather, ReduceScatter through one rank per host.
HcclResult run_leader(Ctx &x);
// The least k with 2^k >= n (n >= 1).
inline int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}
// The steps between the leaders of `hosts` hosts: log2 of it by recursive
// doubling (a power of two from 4), else 1 (every leader to every other).
int leader_steps(int hosts);
// AllReduce between the leaders of a number of hosts from 3 that is not a power
// of two, by doubling over the largest power of two below it with the hosts
// beyond folded in first: its steps (2 more than that doubling's), else 0.
int leader_fold_steps(int hosts);
// tree.cc: Broadcast, Reduce.
HcclResult run_tree(Ctx &x);
// pairwise.cc: AlltoAll(V), AllGatherV, ReduceScatterV, Scatter.
HcclResult run_pairwise(Ctx &x);
// send_recv.cc: HcclSend, HcclRecv, HcclBatchSendRecv.
HcclResult run_send_recv(Ctx &x);

}  // namespace hccl
