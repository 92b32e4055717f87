// Algorithm selection. The choice depends only on what every rank shares
// (operation, size, topology, tuning agreed at set-up), never on local
// state, so all ranks choose alike. Across hosts it uses a cost model: each
// candidate's messages and bytes over the busiest host link, priced with the
// link's latency and bandwidth, measured or declared (docs/TRANSPORT.md).
// Direct is only a candidate: it still checks that every rank's buffers are
// device memory, and falls back with every rank when one's are not.
#pragma once

#include <cstddef>
#include <vector>

#include "hccl/algo/ctx.h"

namespace hccl {

// The algorithm for x's operation of `bytes` (its spec's largest buffer):
// PYHCCL_ALGO's where it can run, else the automatic choice among the
// spec's candidates.
Algo select_algo(const Ctx &x, size_t bytes);
// AllGatherV and ReduceScatterV (each rank's block its own size): pairwise on
// one host; across hosts pairwise, one leader per host, the hierarchical ring
// (even hosts) or the ring over all ranks, by the cost model of the counts every rank passes
// (their digest is in the operation's signature, so ranks that pass others
// fail rather than choose apart).
Algo select_v_algo(const Ctx &x);
// AllReduce between the leaders of 4, 8, 16 ... hosts (leader.cc): whether they
// halve, then double (a reduce-scatter and an all-gather of the hosts' sums)
// rather than only double, by the cost model.
bool leader_halves(const Ctx &x, size_t bytes);
// AllReduce between the leaders of 3, 5, 6, 7, 9 ... hosts: whether they fold
// and double (leader_fold_steps) rather than exchange in one step, by the cost
// model; always beyond kFlatRanks hosts, where the exchange is no candidate.
bool leader_folds(const Ctx &x, size_t bytes);
// Broadcast and Reduce trees between the hosts (tree.cc), by the cost model:
// a star (the root's host sends to, or receives from, every other host: one
// step, H - 1 messages there), a chain (one latency per host on the way, one
// message in and out at each), or a binomial tree (ceil(log2 H) steps, as many
// messages at the root's host). Large messages always go along the chain.
enum class Across { kStar, kChain, kBinomial };
Across tree_across_hosts(const Ctx &x, size_t bytes);

// The two groups of a hierarchical algorithm: this rank's host (local) and
// the ranks with its local index on every host (cross). With `ring`, local
// is this rank alone and cross is every rank, host by host.
struct Groups {
  std::vector<int> local;
  int li = 0;  // this rank's index in local
  std::vector<int> cross;
  int h = 0;   // this rank's index in cross
  bool ring = false;

  Groups(const Ctx &x, bool ring);
  // The rank at cross position k and local index j.
  int rank_at(const Ctx &x, int k, int j) const;
};

inline int mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace hccl
