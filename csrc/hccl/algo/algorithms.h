// The algorithms the dispatcher (dispatch.cc) runs, one file each. Every
// entry reads the operation from the Ctx (x.in, x.out, x.count, x.root, by
// the spec's byte rules) and handles the collectives its spec rows list.
#pragma once

#include <vector>

#include "hccl/algo/ctx.h"

namespace hccl {

// Where each rank's block lies in the buffer that holds them all (AllGather's
// output, ReduceScatter's input): `count` elements each in rank order, or as
// the V collectives' counts and displacements (in elements) say.
struct Blocks {
  size_t count, es;
  const std::vector<uint64_t> *counts = nullptr, *displs = nullptr;
  size_t off(int r) const { return (displs ? (*displs)[r] : r * count) * es; }
  size_t len(int r) const { return (counts ? (*counts)[r] : count) * es; }
  // Every block right after the one before, from 0 (no gaps, rank order).
  bool dense(int n) const {
    uint64_t at = 0;
    for (int r = 0; displs && r < n; ++r) {
      if ((*displs)[r] != at) return false;
      at += (*counts)[r];
    }
    return true;
  }
  // Bytes from the buffer's start to the end of its last block.
  size_t extent(int n) const {
    size_t e = 0;
    for (int r = 0; r < n; ++r) e = off(r) + len(r) > e ? off(r) + len(r) : e;
    return e;
  }
  // x's blocks: AllGather(V)'s output, ReduceScatter(V)'s input.
  static Blocks of(const Ctx &x) {
    const OpDesc &o = x.op;
    if (x.spec.kind == OpKind::kAllGatherV) return Blocks{0, x.es, &o.recv_counts, &o.recv_displs};
    if (x.spec.kind == OpKind::kReduceScatterV) return Blocks{0, x.es, &o.send_counts, &o.send_displs};
    return Blocks{x.count, x.es};
  }
};

// flat.cc: AllReduce, Reduce: every rank's buffer to every rank (the root).
HcclResult run_flat(Ctx &x);
// hier.cc: AllReduce, ReduceScatter(V), AllGather(V); `ring`: one ring over all
// ranks, host by host, instead of host-local steps around a ring of hosts.
HcclResult run_hier(Ctx &x, bool ring);
// leader.cc: AllReduce, AllGather(V), ReduceScatter(V), AlltoAll through one rank per host.
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
// pairwise.cc: AlltoAll(V), AllGatherV, ReduceScatterV, Scatter, Gather.
HcclResult run_pairwise(Ctx &x);
// pairwise.cc: AlltoAll between hosts of the same number of ranks (at least
// two), each rank sending over the network only to the ranks of its own local
// index, its local peers' blocks for them too (rail_fits: where it can run).
bool rail_fits(const Ctx &x);
HcclResult run_rail(Ctx &x);
// send_recv.cc: HcclSend, HcclRecv, HcclBatchSendRecv.
HcclResult run_send_recv(Ctx &x);

}  // namespace hccl
