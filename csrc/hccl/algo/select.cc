#include "hccl/algo/select.h"

#include <algorithm>

namespace hccl {

Algo select_algo(const Ctx &x, Coll c, size_t bytes) {
  const AlgoTuning &t = x.comm.tuning;
  const bool multi = x.multi_host();
  const bool hier_ok = !multi || x.topo.even();
  const bool direct_ok = !multi && x.comm.single_copy_ok;
  Algo forced = t.forced_for(c, multi);
  switch (forced) {
    case Algo::kFlat:
    case Algo::kTree:
    case Algo::kRing:
    case Algo::kPairwise: return forced;
    case Algo::kDirect:
      if (direct_ok) return forced;
      break;
    case Algo::kHier:
      if (hier_ok) return forced;
      break;
    case Algo::kAuto: break;
  }
  const bool big = bytes >= t.single_copy_min;
  switch (c) {
    case Coll::kAllReduce:
      if (bytes <= t.flat_bytes) return Algo::kFlat;
      if (direct_ok && big) return Algo::kDirect;
      return hier_ok ? Algo::kHier : Algo::kRing;
    case Coll::kReduce:
      if (bytes <= t.flat_bytes) return Algo::kFlat;
      return direct_ok && big ? Algo::kDirect : Algo::kTree;
    case Coll::kBroadcast:
      return direct_ok && big ? Algo::kDirect : Algo::kTree;
    case Coll::kAllGather:
    case Coll::kReduceScatter:
      if (direct_ok && big) return Algo::kDirect;
      return hier_ok ? Algo::kHier : Algo::kRing;
    case Coll::kAlltoAll:
      if (direct_ok && big) return Algo::kDirect;
      break;
    case Coll::kCount: break;
  }
  return Algo::kPairwise;
}

Groups::Groups(const Ctx &x, bool ring_only) : ring(ring_only) {
  if (ring) {
    local = {x.me};
    cross = x.topo.host_order();
    h = static_cast<int>(std::find(cross.begin(), cross.end(), x.me) - cross.begin());
    return;
  }
  local = x.topo.local(x.me);
  li = x.topo.local_index[x.me];
  for (int k = 0; k < x.topo.nhosts(); ++k) cross.push_back(x.topo.rank_at(k, li));
  h = x.topo.host_of[x.me];
}

int Groups::rank_at(const Ctx &x, int k, int j) const { return ring ? cross[k] : x.topo.rank_at(k, j); }

}  // namespace hccl
