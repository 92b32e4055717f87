// Broadcast and Reduce along a tree: across hosts through one rank per host
// (the root on its own host, the lowest rank elsewhere), inside a host from
// that rank. Small messages go star-shaped (one step); large ones along a
// chain, each rank forwarding a piece as soon as it has it (pipelined).
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

// Links this rank into `order` (order[0] is the top): a chain, or a star.
void link(const std::vector<int> &order, bool chain, int me, Tree *t) {
  int i = -1;
  for (size_t k = 0; k < order.size(); ++k)
    if (order[k] == me) i = static_cast<int>(k);
  if (i < 0) return;
  if (chain) {
    if (i > 0) t->parent = order[i - 1];
    if (i + 1 < static_cast<int>(order.size())) t->children.push_back(order[i + 1]);
  } else if (i > 0) {
    t->parent = order[0];
  } else {
    t->children.insert(t->children.end(), order.begin() + 1, order.end());
  }
}

// Hosts in order from the root's; one rank per host (the root on its own)
// heads its host. `chain`: within each host; `chain_across`: between the heads.
// `backward`: the heads from the root's host back (a Reduce, whose data flows
// up the tree: then forward in host order, as the signature check's tree
// between hosts, whose headers a data message spares; ctx.h).
Tree make_tree(const Ctx &x, int root, bool chain, bool chain_across, bool backward) {
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
      link(host, chain, x.me, &t);
    }
  }
  Tree across;
  link(heads, chain_across, x.me, &across);
  if (across.parent >= 0) t.parent = across.parent;
  t.children.insert(t.children.begin(), across.children.begin(), across.children.end());
  return t;
}

// Between the heads of the hosts: a chain for large messages, as within a
// host, and across hosts also where the cost model prefers it to a star.
bool chain_across_hosts(const Ctx &x, size_t bytes) {
  return bytes >= x.comm.tuning.chain_min || (x.multi_host() && !star_across_hosts(x, bytes));
}

HcclResult tree_broadcast(Ctx &x) {
  char *buf = x.out;
  const int root = x.root;
  const size_t bytes = x.count * x.es;
  const bool chain = bytes >= x.comm.tuning.chain_min;
  // Across hosts never a flat fan-out to every rank: one message per host.
  const bool across = x.multi_host() && !chain;
  const bool chain_across = chain_across_hosts(x, bytes);
  x.algo = chain ? "chain" : !across ? (x.n <= kFlatRanks ? "flat" : "star")
                 : chain_across ? "hosts:chain" : "hosts:star";
  if (!chain && !across && x.n <= kFlatRanks)  // one step
    return rooted_exchange(
        x, root, true, [&](Batch &b, int p) { b.send(p, buf, bytes); },
        [&](Batch &b) { b.recv(root, buf, bytes); });
  Tree t = make_tree(x, root, chain, chain_across, false);
  Batch b(x);
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
  Tree t = make_tree(x, root, bytes >= x.comm.tuning.chain_min, chain_across_hosts(x, bytes), true);
  char *acc = x.me == root ? out : t.children.empty() ? nullptr : x.comm.scratch(0, bytes);
  Batch b(x);
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
