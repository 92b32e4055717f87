// Broadcast and Reduce along a tree: across hosts through one rank per host
// (the root on its own host, the lowest rank elsewhere), inside a host from
// that rank. Small messages go star-shaped (one step), or between hosts along
// a chain or a binomial tree where the cost model says so (select.h); large
// ones along a chain, each rank forwarding a piece as soon as it has it
// (pipelined).
#include <algorithm>
#include <vector>

#include "hccl/algo/algorithms.h"
#include "hccl/algo/select.h"

namespace hccl {
namespace {

struct Tree {
  int parent = -1;
  std::vector<int> children;
  bool has_child(int p) const { return std::find(children.begin(), children.end(), p) != children.end(); }
};

// Links this rank into `order` (order[0] is the top): a chain, a star, or a
// binomial tree (i's parent is i less its lowest set bit; its children i + 2^j
// for 2^j below that bit, the largest subtree first where `largest_first`).
void link(const std::vector<int> &order, Across shape, bool largest_first, int me, Tree *t) {
  int i = -1;
  const int n = static_cast<int>(order.size());
  for (int k = 0; k < n; ++k)
    if (order[k] == me) i = k;
  if (i < 0) return;
  if (shape == Across::kChain) {
    if (i > 0) t->parent = order[i - 1];
    if (i + 1 < n) t->children.push_back(order[i + 1]);
  } else if (shape == Across::kBinomial) {
    if (i > 0) t->parent = order[i & (i - 1)];
    for (int step = 1; i + step < n && (i == 0 || step < (i & -i)); step <<= 1)
      t->children.insert(largest_first ? t->children.begin() : t->children.end(), order[i + step]);
  } else if (i > 0) {
    t->parent = order[0];
  } else {
    t->children.insert(t->children.end(), order.begin() + 1, order.end());
  }
}

// Hosts in order from the root's; one rank per host (the root on its own)
// heads its host. `chain`: within each host; `across`: between the heads.
// `backward`: the heads from the root's host back (a Reduce, whose data flows
// up the tree: then forward in host order, as the signature check's tree
// between hosts, whose headers a data message spares; ctx.h). A binomial tree
// sends the largest subtree first (Broadcast), receives the smallest first
// (Reduce: it comes in first).
Tree make_tree(const Ctx &x, int root, bool chain, Across across, bool backward) {
  const Topology &topo = x.topo;
  const int H = topo.nhosts(), rh = topo.host_of[root];
  std::vector<int> heads;
  Tree t;
  for (int k = 0; k < H; ++k) {
    int h = (rh + (backward ? H - k : k)) % H;
    int head = h == rh ? root : topo.hosts[h][0];
    heads.push_back(head);
    if (h == topo.host_of[x.me]) {
      std::vector<int> host{head};  // the head first, then the others in rank order
      for (int r : topo.hosts[h])
        if (r != head) host.push_back(r);
      link(host, chain ? Across::kChain : Across::kStar, false, x.me, &t);
    }
  }
  Tree up;
  link(heads, across, !backward, x.me, &up);
  if (up.parent >= 0) t.parent = up.parent;
  t.children.insert(t.children.begin(), up.children.begin(), up.children.end());
  return t;
}

// Between the heads of the hosts (one host: a chain for large messages, as
// within it).
Across across_hosts(const Ctx &x, size_t bytes) {
  if (x.multi_host()) return tree_across_hosts(x, bytes);
  return bytes >= x.comm.tuning.chain_min ? Across::kChain : Across::kStar;
}

// What the debug log names the tree (Ctx::algo).
const char *tree_name(bool chain, bool across, Across shape, const char *in_host) {
  return chain ? "chain"
         : !across ? in_host
         : shape == Across::kChain ? "hosts:chain"
         : shape == Across::kBinomial ? "hosts:binomial"
                                      : "hosts:star";
}

HcclResult tree_broadcast(Ctx &x) {
  char *buf = x.out;
  const int root = x.root;
  const size_t bytes = x.count * x.es;
  const bool chain = bytes >= x.comm.tuning.chain_min;
  // Across hosts never a flat fan-out to every rank: one message per host.
  const bool across = x.multi_host() && !chain;
  const Across shape = across_hosts(x, bytes);
  x.algo = tree_name(chain, across, shape, x.n <= kFlatRanks ? "flat" : "star");
  if (!chain && !across && x.n <= kFlatRanks)  // one step
    return rooted_exchange(
        x, root, true, [&](Batch &b, int p) { b.send(p, buf, bytes); },
        [&](Batch &b) { b.recv(root, buf, bytes); });
  Tree t = make_tree(x, root, chain, shape, false);
  Batch b(x);
  b.one_way = true;
  // A rank that disagrees (about the root, say) would wait for a parent that never sends.
  signature_check(x, b, [&](int p) { return p == t.parent; }, [&](int p) { return t.has_child(p); });
  Dep got;
  if (t.parent >= 0) got.region = b.recv(t.parent, buf, bytes);
  for (int c : t.children) b.send(c, buf, bytes, got);  // forwarded as it arrives
  return b.run();
}

HcclResult tree_reduce(Ctx &x) {
  const char *in = x.in;
  char *out = x.out;
  const int root = x.root;
  const size_t bytes = x.count * x.es;
  const bool chain = bytes >= x.comm.tuning.chain_min;
  const Across shape = across_hosts(x, bytes);
  x.algo = tree_name(chain, x.multi_host() && !chain, shape, "star");
  Tree t = make_tree(x, root, chain, shape, true);
  char *acc = x.me == root ? out : t.children.empty() ? nullptr : x.comm.scratch(0, bytes);
  Batch b(x);
  b.one_way = true;
  signature_check(x, b, [&](int p) { return t.has_child(p); }, [&](int p) { return p == t.parent; });
  Dep sum;  // in op child 0 op child 1 ..., in that order
  for (size_t i = 0; i < t.children.size(); ++i)
    sum.region = b.recv_reduce(t.children[i], i == 0 ? in : acc, acc, bytes, sum);
  if (t.parent >= 0) b.send(t.parent, sum.region ? acc : in, bytes, sum);
  return b.run();
}

}  // namespace

HcclResult run_tree(Ctx &x) {
  switch (x.spec.kind) {
    case OpKind::kBroadcast: return tree_broadcast(x);
    case OpKind::kReduce: return tree_reduce(x);
    default: return x.fail(HCCL_E_INTERNAL, "no tree algorithm for this collective");
  }
}

}  // namespace hccl
