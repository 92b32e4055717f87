// AlltoAll and AlltoAllV. For V every rank first publishes its row of send
// counts (one round), so all ranks know the whole matrix, check it against
// their recvCounts and agree on the number of rounds. Then, per chunk, each
// rank stages a chunk of every outgoing block at a fixed stride and copies
// the chunk addressed to it out of every peer's slot.
#include <algorithm>
#include <cstring>
#include <vector>

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_all_to_all_v(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = dtype_size(x.op.dtype);
  const std::vector<uint64_t> &sc = x.op.send_counts, &sd = x.op.send_displs;
  const std::vector<uint64_t> &rc = x.op.recv_counts, &rd = x.op.recv_displs;
  const int n = x.n;
  HcclResult r;
  // matrix[p * n + q] = elements rank p sends to rank q.
  std::vector<uint64_t> matrix(static_cast<size_t>(n) * n);
  if (x.op.kind == OpKind::kAlltoAll) {
    std::fill(matrix.begin(), matrix.end(), x.op.count);
  } else if (n == 1) {
    matrix[0] = sc[0];
  } else {
    uint64_t j;
    if ((r = x.stage(sc.data(), n * sizeof(uint64_t), &j)) != HCCL_SUCCESS) return r;
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    for (int p = 0; p < n; ++p) std::memcpy(&matrix[p * n], x.slot(p, j), n * sizeof(uint64_t));
  }
  for (int p = 0; p < n; ++p) {
    if (matrix[p * n + x.me] != rc[p])
      return x.fail(HCCL_E_PARA, "rank " + std::to_string(p) + " sends " +
                                     std::to_string(matrix[p * n + x.me]) +
                                     " elements to this rank but recvCounts[" + std::to_string(p) +
                                     "] is " + std::to_string(rc[p]));
  }
  if (n == 1) {
    if (send + sd[0] * es != recv + rd[0] * es) std::memmove(recv + rd[0] * es, send + sd[0] * es, sc[0] * es);
    return HCCL_SUCCESS;
  }
  const uint64_t maxc = *std::max_element(matrix.begin(), matrix.end());
  const size_t chunk = x.slot_bytes / (es * n);
  for (uint64_t off = 0; off < maxc; off += chunk) {
    uint64_t j;
    if ((r = x.stage_blocks(send, sc, sd, off, chunk, &j)) != HCCL_SUCCESS) return r;
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    for (int p = 0; p < n; ++p) {
      size_t len = chunk_part(matrix[p * n + x.me], off, chunk);
      if (len > 0) std::memcpy(recv + (rd[p] + off) * es, x.slot(p, j) + x.me * chunk * es, len * es);
    }
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
