#include "hccl/algo/select.h"

#include <algorithm>
#include <limits>

#include "hccl/algo/algorithms.h"

namespace hccl {
namespace {

// Shared memory within a host, for the cost model: a few microseconds a step.
constexpr LinkCost kShm{3e-6, 1.0 / 5e9};

// What a rank spends on the messages between hosts it sends and receives,
// `m` of them each way (tuning.net_message, measured at set-up or declared).
double msgs(const Ctx &x, double m) { return 2 * m * x.comm.tuning.net_message; }

// AllReduce between the leaders of 4, 8, 16 ... hosts (leader.cc): recursive
// doubling (log2 H steps, log2 H x S each way over a host's link), or halving
// then doubling (a reduce-scatter and an all-gather: 2 log2 H steps, 2(H-1)/H x S).
double leader_doubling_time(const Ctx &x, double S) {
  const double K = leader_steps(x.topo.nhosts());
  return x.comm.tuning.net.time(K, K * S) + msgs(x, K);
}
// Halving's steps do not overlap (each waits for the sums of the one before),
// where the hierarchical ring pipelines its steps: on simulated 4x1 hosts at
// 1 Gbit/s the two took the same time up to 1 MiB, halving 20% longer from 4
// MiB. So it stops at 1 MiB.
constexpr double kHalvingMaxBytes = 1 << 20;
double leader_halving_time(const Ctx &x, double S) {
  const double K = leader_steps(x.topo.nhosts()), H = x.topo.nhosts();
  if (S > kHalvingMaxBytes) return std::numeric_limits<double>::infinity();
  return x.comm.tuning.net.time(2 * K, 2 * (H - 1) / H * S) + msgs(x, 2 * K);
}

// Flat AllReduce, and the leaders' exchange, fold the `buffers` buffers of S
// once the last has come, where a ring folds each block as it arrives: their
// reads and one write are not hidden behind the network. Without this, flat
// (one step) won at every size on 2x1, where it carries what the ring does,
// and took 23 ms for 16 MiB at 10 Gbit/s against the ring's 14. Those bytes
// move at about 20 GB/s (csrc/hccl/reduce, 1 MiB of float32 from 2 buffers:
// 27 GB/s, from 4: 18).
constexpr double kFoldBytesPerSecond = 20e9;
double late_fold(double buffers, double S) { return (buffers + 1) * S / kFoldBytesPerSecond; }

// The leaders' copies of a small AlltoAll (gathering their hosts' buffers,
// handing out the results): while they fit in cache they move at about the
// fold's speed, not at shared memory's 5 GB/s from memory. Priced at 5 GB/s,
// pairwise took over at about 7 KiB on 2x2 and 27 KiB on 4x2, where the
// leaders were 6% and 24% faster (1 Gbit/s; paired, 8 and 16 KiB) and kept
// up to about 64 and 128 KiB. On 8x2 the leaders' 1 MiB of copies for a 256
// KiB AlltoAll made them 16% slower than pairwise: so half a MiB.
constexpr double kCacheBytes = 512 << 10;
double leader_copies(double bytes) {
  return bytes <= kCacheBytes ? kShm.time(2, 0) + bytes / kFoldBytesPerSecond : kShm.time(2, bytes);
}

// One step of H - 1 buffers and messages at a host: the leaders' exchange
// (every leader to every other), and a tree's star between hosts (below).
double star_time(const Ctx &x, double S) {
  const double H = x.topo.nhosts();
  return x.comm.tuning.net.time(1, (H - 1) * S) + msgs(x, H - 1);
}

// AllReduce between the leaders folded into doubling (leader_fold_steps: a
// message each way per step, S each), against their exchange (star_time).
double leader_fold_time(const Ctx &x, double S) {
  const double K = leader_fold_steps(x.topo.nhosts());
  return x.comm.tuning.net.time(K, K * S) + msgs(x, K);
}

// Across hosts, for collectives with the leader algorithm (AllReduce, AllGather,
// ReduceScatter): the cheapest by the cost model (tuning.net: the
// link's latency and bandwidth, measured or declared). S bytes, H hosts of at most L
// ranks; each term is what the busiest host link carries each way, and the
// steps that pay its latency.
Algo cheapest_across_hosts(const Ctx &x, double S, bool hier_ok) {
  const LinkCost &net = x.comm.tuning.net;
  const double n = x.n, H = x.topo.nhosts();
  double L = 1, Lmin = n;
  for (const auto &host : x.topo.hosts) {
    L = std::max<double>(L, static_cast<double>(host.size()));
    Lmin = std::min<double>(Lmin, static_cast<double>(host.size()));
  }
  struct Choice {
    Algo algo;
    double t;
  };
  std::vector<Choice> c;
  // Between the leaders: one step of H - 1 messages (up to kFlatRanks hosts), or
  // log2 H of one where H is a power of two from 4, however many (leader.cc;
  // AlltoAll's leaders always exchange); AllReduce also folds other host counts
  // into doubling.
  const double lead_steps = leader_steps(x.topo.nhosts());
  const bool leader_ok = H <= kFlatRanks || (lead_steps > 1 && x.spec.kind != OpKind::kAlltoAll) ||
                         (x.spec.kind == OpKind::kAllReduce && leader_fold_steps(x.topo.nhosts()) > 0);
  if (x.spec.kind == OpKind::kAlltoAll) {
    // Pairwise: every rank messages the n - L ranks of other hosts. Leader: the
    // leaders message each other (leader.cc), after gathering their hosts'
    // buffers and before handing out the results, L S each way inside the host.
    // Both carry L(n-L)/n S over a host's link.
    // Rails (pairwise.cc) where blocks go to local peers by reference: the same bytes
    // and messages between hosts over fewer connections, and each rank hands its
    // peers their share of its blocks for other hosts; smaller blocks, copied, gained
    // nothing on simulated hosts, and a small one would wait for its handover.
    const double cross = L * (n - L) / n * S;
    const bool rail = rail_fits(x) && S / n >= kSharedMinBytes;
    c.push_back({rail ? Algo::kRail : Algo::kPairwise,
                 net.time(1, cross) + kShm.time(1, (L - 1) / n * S) + msgs(x, n - Lmin) +
                     (rail ? kShm.time(1, (L - 1) * (n - L) / (L * n) * S) : 0)});
    if (leader_ok && L > 1) c.push_back({Algo::kLeader, net.time(1, cross) + leader_copies(2 * L * S) + msgs(x, H - 1)});
  } else if (x.spec.kind == OpKind::kAllReduce) {
    if (x.n <= kFlatRanks)
      c.push_back({Algo::kFlat,
                   net.time(1, L * (n - L) * S) + kShm.time(1, (L - 1) * S) + late_fold(n, S) + msgs(x, n - Lmin)});
    if (leader_ok)
      c.push_back({Algo::kLeader, (lead_steps > 1   ? std::min(leader_doubling_time(x, S), leader_halving_time(x, S))
                                   : leader_folds(x, static_cast<size_t>(S)) ? leader_fold_time(x, S)
                                                                               : star_time(x, S) + late_fold(H, S)) +
                                      kShm.time(2, 2 * (L - 1) * S)});
    if (hier_ok)
      c.push_back({Algo::kHier, net.time(2 * (H - 1), 2 * (H - 1) / H * S) +
                                    kShm.time(2 * (L - 1), 2 * (L - 1) / L * S) + msgs(x, 2 * (H - 1))});
    c.push_back({Algo::kRing, net.time(2 * (n - 1), 2 * (n - 1) / n * S) + msgs(x, 2 * (n - 1))});
  } else {  // AllGather, ReduceScatter (S: the whole buffer, n blocks)
    // The leader's steps do not overlap: its host's copies (packing, handing
    // out) count in full, so from some size the pipelined ring wins.
    // A leader sends its host's L blocks to H-1 leaders and gets the n-L others:
    // (H-1)/H S each way on even hosts, more on the busiest of uneven ones.
    const double lead_bytes = std::max(n - Lmin, (H - 1) * L) / n * S;
    if (leader_ok)
      c.push_back({Algo::kLeader, net.time(lead_steps, lead_bytes) + kShm.time(2, L * S) +
                                      msgs(x, lead_steps > 1 ? lead_steps : H - 1)});
    if (hier_ok)
      c.push_back({Algo::kHier, net.time(H - 1, (H - 1) / H * S) + kShm.time(L - 1, (L - 1) / L * S) +
                                    msgs(x, H - 1)});
    c.push_back({Algo::kRing, net.time(n - 1, (n - 1) / n * S) + msgs(x, n - 1)});
  }
  return std::min_element(c.begin(), c.end(), [](const Choice &a, const Choice &b) { return a.t < b.t; })->algo;
}

// A tree between the hosts: a star (one step; H - 1 buffers over the root
// host's link, H - 1 messages at the root), a chain (H - 1 steps, each link
// one buffer, streamed; one message in and one out at each head) or a binomial
// tree (ceil(log2 H) steps, as many buffers and messages at the root).
double chain_time(const Ctx &x, double S) { return x.comm.tuning.net.time(x.topo.nhosts() - 1, S) + msgs(x, 1); }
double binomial_time(const Ctx &x, double S) {
  const double K = ceil_log2(x.topo.nhosts());
  return x.comm.tuning.net.time(K, K * S) + msgs(x, K);
}
double tree_time(const Ctx &x, double S) {
  return std::min(star_time(x, S), std::min(chain_time(x, S), binomial_time(x, S)));
}

// Reduce across hosts: flat (every rank sends the root its buffer: n - L
// buffers over the root host's link) against the tree (a step inside each
// host, then the star, chain or binomial tree between hosts).
bool flat_reduce_across_hosts(const Ctx &x, size_t bytes) {
  const double S = static_cast<double>(bytes);
  const double here = static_cast<double>(x.topo.hosts[x.topo.host_of[x.root]].size());
  return x.comm.tuning.net.time(1, (x.n - here) * S) + msgs(x, x.n - here) <=
         tree_time(x, S) + kShm.time(1, S);
}

}  // namespace

bool leader_halves(const Ctx &x, size_t bytes) {
  const double S = static_cast<double>(bytes);
  return leader_steps(x.topo.nhosts()) > 1 && leader_halving_time(x, S) < leader_doubling_time(x, S);
}

bool leader_folds(const Ctx &x, size_t bytes) {
  const int H = x.topo.nhosts();
  if (leader_fold_steps(H) == 0) return false;
  const double S = static_cast<double>(bytes);
  return H > kFlatRanks || leader_fold_time(x, S) < star_time(x, S);
}

Across tree_across_hosts(const Ctx &x, size_t bytes) {
  if (bytes >= x.comm.tuning.chain_min) return Across::kChain;
  const double S = static_cast<double>(bytes), star = star_time(x, S), bin = binomial_time(x, S);
  if (chain_time(x, S) < std::min(star, bin)) return Across::kChain;
  return star <= bin ? Across::kStar : Across::kBinomial;
}

Algo select_v_algo(const Ctx &x) {
  if (!x.multi_host() || !x.spec.has(Algo::kRing)) return Algo::kPairwise;  // AlltoAllV: always
  const Topology &topo = x.topo;
  const LinkCost &net = x.comm.tuning.net;
  const std::vector<uint64_t> &c = x.spec.kind == OpKind::kAllGatherV ? x.op.recv_counts : x.op.send_counts;
  const double es = static_cast<double>(x.es), n = x.n, H = topo.nhosts();
  auto len = [&](int r) { return static_cast<double>(c[r]) * es; };
  double total = 0, largest = 0, Lmin = n;
  for (int r = 0; r < x.n; ++r) {
    total += len(r);
    largest = std::max(largest, len(r));
  }
  // Pairwise, one step: host h's blocks go to (or come from) every rank of
  // another host, and the other blocks to (from) each of its ranks; the
  // busiest host link, whichever way is fuller.
  // Leader: the leaders exchange their hosts' parts (H - 1 messages of it
  // out, the other hosts' parts in) or double (log2 H steps, about the other
  // parts each way); their hosts' blocks come and go over shared memory.
  const double lead_steps = leader_steps(topo.nhosts());
  double pair = 0, lead = 0, Lmax = 1;
  for (const auto &host : topo.hosts) {
    const double L = static_cast<double>(host.size());
    double own = 0;
    for (int r : host) own += len(r);
    pair = std::max(pair, std::max(own * (n - L), (total - own) * L));
    lead = std::max(lead, std::max(total - own, lead_steps > 1 ? 0 : (H - 1) * own));
    Lmin = std::min(Lmin, L);
    Lmax = std::max(Lmax, L);
  }
  Algo best = Algo::kPairwise;
  double t = net.time(1, pair) + msgs(x, n - Lmin);
  if (H <= kFlatRanks || lead_steps > 1) {
    const double leader = net.time(lead_steps, lead) + kShm.time(2, Lmax * total) +
                          msgs(x, lead_steps > 1 ? lead_steps : H - 1);
    if (leader < t) best = Algo::kLeader, t = leader;
  }
  // The ring over all ranks, host by host: n - 1 steps, each at most the
  // largest block over a host's link.
  const double ring = net.time(n - 1, (n - 1) * largest) + msgs(x, n - 1);
  if (ring < t) best = Algo::kRing, t = ring;
  if (topo.even()) {
    // Hierarchical: H - 1 steps; in each, the L rings (one per local index)
    // carry one block each over the host's link.
    const int L = static_cast<int>(topo.hosts[0].size());
    double step = 0;
    for (int j = 0; j < L; ++j) {
      double widest = 0;
      for (int k = 0; k < topo.nhosts(); ++k) widest = std::max(widest, len(topo.rank_at(k, j)));
      step += widest;
    }
    const double hier = net.time(H - 1, (H - 1) * step) + kShm.time(L - 1, (L - 1) / static_cast<double>(L) * total) +
                        msgs(x, H - 1);
    if (hier < t) best = Algo::kHier;
  }
  return best;
}

Algo select_algo(const Ctx &x, size_t bytes) {
  const AlgoTuning &t = x.comm.tuning;
  const CollectiveSpec &s = x.spec;
  const bool multi = x.multi_host();
  const bool hier_ok = !multi || x.topo.even();
  const bool direct_ok = !multi && x.comm.single_copy_ok;
  Algo forced = t.forced_for(s.kind, multi);
  switch (forced) {
    case Algo::kDirect:
      if (direct_ok) return forced;
      break;
    case Algo::kHier:
      if (hier_ok) return forced;
      break;
    case Algo::kAuto: break;
    default: return forced;  // tuning.cc accepts only the spec's algorithms
  }
  // The spec's candidates, cheapest first for the size.
  if (multi && s.has(Algo::kLeader)) return cheapest_across_hosts(x, static_cast<double>(bytes), hier_ok);
  if (s.has(Algo::kFlat) && bytes <= t.flat_bytes && (!multi || flat_reduce_across_hosts(x, bytes)))
    return Algo::kFlat;
  if (s.has(Algo::kDirect) && direct_ok && bytes >= t.single_copy_min) return Algo::kDirect;
  if (s.has(Algo::kTree)) return Algo::kTree;
  if (s.has(Algo::kHier) && hier_ok) return Algo::kHier;
  if (s.has(Algo::kRing)) return Algo::kRing;
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
