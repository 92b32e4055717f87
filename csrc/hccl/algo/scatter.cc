// Scatter from root: root stages the n blocks' chunks each round (its own
// block is copied directly), every other rank copies its part out.
// In place at the root: recvBuf == sendBuf + root * block.
#include <cstring>

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_scatter(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const int root = static_cast<int>(x.op.root);
  const size_t es = dtype_size(x.op.dtype);
  const size_t rc = x.op.count;
  if (rc == 0) return HCCL_SUCCESS;
  if (x.me == root && send + root * rc * es != recv) std::memcpy(recv, send + root * rc * es, rc * es);
  if (x.n == 1) return HCCL_SUCCESS;
  const size_t chunk = x.slot_bytes / (es * x.n);
  HcclResult r;
  for (size_t off = 0; off < rc; off += chunk) {
    size_t cc = min_sz(chunk, rc - off);
    uint64_t j = x.next_round();
    if (x.me == root) {
      if ((r = x.acquire(j)) != HCCL_SUCCESS) return r;
      char *slot = x.my_slot(j);
      for (int p = 0; p < x.n; ++p)
        if (p != root) std::memcpy(slot + p * cc * es, send + (p * rc + off) * es, cc * es);
      x.post(j);
    } else {
      x.post(j);
      if ((r = x.wait(root, j)) != HCCL_SUCCESS) return r;
      std::memcpy(recv + off * es, x.slot(root, j) + x.me * cc * es, cc * es);
    }
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
