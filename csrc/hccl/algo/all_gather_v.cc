// AllGatherV: like AllGather with per-rank counts and displacements; rounds
// run to the largest count; every rank must pass the same recvCounts (the
// op signature carries a digest of them, checked in the first round).
#include <algorithm>
#include <cstring>

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_all_gather_v(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = dtype_size(x.op.dtype);
  const std::vector<uint64_t> &rc = x.op.recv_counts, &rd = x.op.recv_displs;
  const uint64_t mine = x.op.count;
  const bool in_place = send == recv + rd[x.me] * es;
  if (!in_place && mine > 0) std::memcpy(recv + rd[x.me] * es, send, mine * es);
  if (x.n == 1) return HCCL_SUCCESS;
  // At least one round, even when every count is 0: ranks compare their
  // recvCounts there (a rank given other counts must not skip the op).
  const uint64_t maxc = std::max<uint64_t>(*std::max_element(rc.begin(), rc.end()), 1);
  const size_t chunk = x.slot_bytes / es;
  HcclResult r;
  for (uint64_t off = 0; off < maxc; off += chunk) {
    uint64_t j;
    if ((r = x.stage(send + off * es, chunk_part(mine, off, chunk) * es, &j)) != HCCL_SUCCESS)
      return r;
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    for (int p = 0; p < x.n; ++p) {
      size_t lp = chunk_part(rc[p], off, chunk);
      if (p != x.me && lp > 0) std::memcpy(recv + (rd[p] + off) * es, x.slot(p, j), lp * es);
    }
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
