// ReduceScatterV: per chunk every rank stages a chunk of each of its n blocks
// (sendCounts/sendDispls) at a fixed stride; rank r reduces its block's chunk
// from all slots in rank order. Rounds run to the largest count; every rank
// must pass the same sendCounts (a digest is checked in the first round).
#include <algorithm>
#include <cstring>
#include <vector>

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_reduce_scatter_v(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = dtype_size(x.op.dtype);
  const std::vector<uint64_t> &sc = x.op.send_counts, &sd = x.op.send_displs;
  const uint64_t rc = x.op.count;
  if (x.n == 1) {
    if (rc > 0 && send + sd[0] * es != recv) std::memcpy(recv, send + sd[0] * es, rc * es);
    return HCCL_SUCCESS;
  }
  // At least one round, even when every count is 0: ranks compare their
  // sendCounts there (a rank given other counts must not skip the op).
  const uint64_t maxc = std::max<uint64_t>(*std::max_element(sc.begin(), sc.end()), 1);
  const size_t chunk = x.slot_bytes / (es * x.n);
  std::vector<const void *> srcs(x.n);
  HcclResult r;
  for (uint64_t off = 0; off < maxc; off += chunk) {
    uint64_t j;
    if ((r = x.stage_blocks(send, sc, sd, off, chunk, &j)) != HCCL_SUCCESS) return r;
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    size_t len = chunk_part(rc, off, chunk);
    if (len == 0) continue;
    for (int p = 0; p < x.n; ++p) srcs[p] = x.slot(p, j) + x.me * chunk * es;
    reduce(x.op.dtype, x.op.op, recv + off * es, srcs.data(), x.n, len);
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
