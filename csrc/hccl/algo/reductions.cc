// AllReduce, Reduce, ReduceScatter and AllGather: pick an algorithm (boards
// for small ones, board.h; otherwise select.h) and run it. The flat
// algorithms live here:
//   AllReduce flat  every rank sends its buffer to every other and reduces all
//                   n buffers in rank order (one step: small messages);
//   Reduce flat     every rank sends its buffer to the root, which reduces.
// Count 0 still exchanges headers with every rank, so a rank that was given
// another count (or called another collective) is told, not left waiting.
#include <cstring>
#include <vector>

#include "hccl/algo/board.h"
#include "hccl/algo/direct.h"
#include "hccl/algo/hier.h"
#include "hccl/algo/leader.h"
#include "hccl/algo/select.h"
#include "hccl/algo/tree.h"

namespace hccl {
namespace {

// Every rank's buffer to every rank (or to the root), reduced in rank order.
// For Reduce every other pair exchanges headers in the same step, so that a
// rank that disagrees about the root is told, on every rank.
HcclResult flat_reduce(Ctx &x, const char *in, char *out, size_t count, int root) {
  const size_t bytes = count * x.es;
  std::vector<const void *> srcs(x.n);
  char *all = root < 0 || root == x.me ? x.comm.scratch(0, bytes * x.n) : nullptr;
  HcclResult rc = root < 0
      ? exchange(x, in, bytes, all)
      : rooted_exchange(
            x, root,
            [&](Batch &b, int p) {
              b.send(p, nullptr, 0);
              b.recv(p, all + p * bytes, bytes);
            },
            [&](Batch &b) {
              b.recv(root, nullptr, 0);
              b.send(root, in, bytes);
            });
  if (rc != HCCL_SUCCESS || (root >= 0 && root != x.me)) return rc;
  for (int p = 0; p < x.n; ++p) srcs[p] = p == x.me ? in : all + p * bytes;
  reduce(x.op.dtype, x.op.op, out, srcs.data(), x.n, count);
  return HCCL_SUCCESS;
}

HcclResult reduce_common(Ctx &x, Coll c, const char *in, char *out, size_t count, int root) {
  const size_t bytes = count * x.es;
  if (x.n == 1) {
    if (count > 0 && in != out) std::memcpy(out, in, bytes);
    return HCCL_SUCCESS;
  }
  if (count == 0) return compare_signatures(x);
  if (window_candidate(x, c)) {
    bool ok = false;
    PeerViews v;
    char *my_recv = (root < 0 || root == x.me) ? out : nullptr;
    HcclResult rc = window_open(x, in, bytes, my_recv, my_recv ? bytes : 0, &ok, &v);
    if (rc != HCCL_SUCCESS) return rc;
    if (ok) return direct_all_reduce(x, v, count, root);
  }
  if (board_fits(x.comm, c, bytes)) return board_reduce(x, in, out, count, root);
  Algo a = select_algo(x, c, bytes);
  x.algo = algo_name(a);
  if (a == Algo::kFlat && (root < 0 || x.n <= kFlatRanks)) return flat_reduce(x, in, out, count, root);
  if (a == Algo::kDirect) {
    bool ok = false;
    PeerViews v;
    char *my_recv = (root < 0 || root == x.me) ? out : nullptr;
    HcclResult rc = direct_open(x, in, bytes, my_recv, bytes, &ok, &v);
    if (rc != HCCL_SUCCESS) return rc;
    if (ok) return direct_all_reduce(x, v, count, root);
    a = Algo::kHier;  // host memory somewhere: the copying path (one host, so hier works)
  }
  if (root >= 0) {
    x.algo = "tree";
    return tree_reduce(x, in, out, count, root);
  }
  x.algo = algo_name(a);
  if (a == Algo::kLeader) return leader_all_reduce(x, in, out, count);
  return hier_all_reduce(x, Groups(x, a == Algo::kRing), in, out, count);
}

}  // namespace

HcclResult run_all_reduce(Ctx &x) {
  return reduce_common(x, Coll::kAllReduce, static_cast<const char *>(x.op.send),
                       static_cast<char *>(x.op.recv), x.op.count, -1);
}

HcclResult run_reduce(Ctx &x) {
  return reduce_common(x, Coll::kReduce, static_cast<const char *>(x.op.send),
                       static_cast<char *>(x.op.recv), x.op.count, static_cast<int>(x.op.root));
}

HcclResult run_reduce_scatter(Ctx &x) {
  const char *in = static_cast<const char *>(x.op.send);
  char *out = static_cast<char *>(x.op.recv);
  const size_t count = x.op.count;
  if (x.n == 1) {
    if (count > 0 && in != out) std::memcpy(out, in, count * x.es);
    return HCCL_SUCCESS;
  }
  if (count == 0) return compare_signatures(x);
  if (window_candidate(x, Coll::kReduceScatter)) {
    bool ok = false;
    PeerViews v;
    HcclResult rc = window_open(x, in, count * x.es * x.n, out, count * x.es, &ok, &v);
    if (rc != HCCL_SUCCESS) return rc;
    if (ok) return direct_reduce_scatter(x, v, out, count);
  }
  if (board_fits(x.comm, Coll::kReduceScatter, count * x.es * x.n))
    return board_reduce_scatter(x, in, out, count);
  Algo a = select_algo(x, Coll::kReduceScatter, count * x.es * x.n);
  x.algo = algo_name(a);
  if (a == Algo::kDirect) {
    bool ok = false;
    PeerViews v;
    HcclResult rc = direct_open(x, in, count * x.es * x.n, nullptr, 0, &ok, &v);
    if (rc != HCCL_SUCCESS) return rc;
    if (ok) return direct_reduce_scatter(x, v, out, count);
    a = Algo::kHier;  // direct is only chosen on one host, where hier always works
    x.algo = algo_name(a);
  }
  return hier_reduce_scatter(x, Groups(x, a == Algo::kRing), in, out, count);
}

HcclResult run_all_gather(Ctx &x) {
  const char *in = static_cast<const char *>(x.op.send);
  char *out = static_cast<char *>(x.op.recv);
  const size_t count = x.op.count;
  if (x.n == 1) {
    if (count > 0 && in != out) std::memcpy(out, in, count * x.es);
    return HCCL_SUCCESS;
  }
  if (count == 0) return compare_signatures(x);
  if (window_candidate(x, Coll::kAllGather)) {
    bool ok = false;
    PeerViews v;
    HcclResult rc = window_open(x, in, count * x.es, out, count * x.es * x.n, &ok, &v);
    if (rc != HCCL_SUCCESS) return rc;
    if (ok) return direct_all_gather(x, v, out, count);
  }
  if (board_fits(x.comm, Coll::kAllGather, count * x.es)) return board_all_gather(x, in, out, count * x.es);
  Algo a = select_algo(x, Coll::kAllGather, count * x.es * x.n);
  x.algo = algo_name(a);
  if (a == Algo::kDirect) {
    bool ok = false;
    PeerViews v;
    HcclResult rc = direct_open(x, in, count * x.es, nullptr, 0, &ok, &v);
    if (rc != HCCL_SUCCESS) return rc;
    if (ok) return direct_all_gather(x, v, out, count);
    a = Algo::kHier;
    x.algo = algo_name(a);
  }
  return hier_all_gather(x, Groups(x, a == Algo::kRing), in, out, count);
}

HcclResult run_barrier(Ctx &x) { return x.n == 1 ? HCCL_SUCCESS : compare_signatures(x); }

}  // namespace hccl
