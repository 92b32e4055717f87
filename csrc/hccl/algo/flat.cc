// Flat AllReduce and Reduce, for small messages (one step):
//   AllReduce  every rank sends its buffer to every other and reduces all n
//              buffers in rank order;
//   Reduce     every rank sends its buffer to the root, which reduces; the
//              ranks check signatures along a fixed tree (ctx.h) in the same
//              step, so that a rank that disagrees about the root is told, on
//              every rank.
#include <vector>

#include "hccl/algo/algorithms.h"

namespace hccl {

HcclResult run_flat(Ctx &x) {
  const int root = x.root;
  const char *in = x.in;
  const size_t bytes = x.count * x.es;
  std::vector<const void *> srcs(x.n);
  char *all = root < 0 || root == x.me ? x.comm.scratch(0, bytes * x.n) : nullptr;
  HcclResult rc = root < 0
      ? exchange(x, in, bytes, all, false)  // the fold reads this rank's own from `in`
      : rooted_exchange(
            x, root, false,
            [&](Batch &b, int p) { b.recv(p, all + p * bytes, bytes); },
            [&](Batch &b) { b.send(root, in, bytes); });
  if (rc != HCCL_SUCCESS || (root >= 0 && root != x.me)) return rc;
  for (int p = 0; p < x.n; ++p) srcs[p] = p == x.me ? in : all + p * bytes;
  reduce(x.op.dtype, x.op.op, x.out, srcs.data(), x.n, x.count);
  return HCCL_SUCCESS;
}

}  // namespace hccl
