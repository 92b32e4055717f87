// ReduceScatter: per chunk of the per-rank block, every rank stages its n
// blocks' chunks; rank r reduces chunk r of all slots in rank order. With
// aclrtMalloc buffers everywhere rank r reduces straight from the peers' send
// buffers. In place: recvBuf == sendBuf + rank * block.
#include <cstring>
#include <vector>

#include "hccl/algo/ctx.h"
#include "hccl/algo/selector.h"
#include "hccl/algo/single_copy.h"

namespace hccl {

HcclResult run_reduce_scatter(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = dtype_size(x.op.dtype);
  const size_t rc = x.op.count;
  if (rc == 0) return HCCL_SUCCESS;
  if (x.n == 1) {
    if (send != recv) std::memcpy(recv, send, rc * es);
    return HCCL_SUCCESS;
  }
  std::vector<const void *> srcs(x.n);
  HcclResult r;
  if (select_path(x, "reducescatter", rc * es * x.n, false) == Path::kSingle) {
    bool ok = false;
    PeerViews v;
    r = single_copy_exchange(x, send, rc * es * x.n, nullptr, 0, &ok, &v);
    if (r != HCCL_SUCCESS) return r;
    if (ok) {
      for (int p = 0; p < x.n; ++p) srcs[p] = v.send[p] + x.me * rc * es;
      reduce(x.op.dtype, x.op.op, recv, srcs.data(), x.n, rc);
      uint64_t j = x.next_round();
      x.post(j);
      return x.wait_all(j);
    }
  }
  const size_t chunk = x.slot_bytes / (es * x.n);
  for (size_t off = 0; off < rc; off += chunk) {
    size_t cc = min_sz(chunk, rc - off);
    uint64_t j = x.next_round();
    if ((r = x.acquire(j)) != HCCL_SUCCESS) return r;
    char *slot = x.my_slot(j);
    for (int p = 0; p < x.n; ++p)
      std::memcpy(slot + p * cc * es, send + (p * rc + off) * es, cc * es);
    x.post(j);
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    for (int p = 0; p < x.n; ++p) srcs[p] = x.slot(p, j) + x.me * cc * es;
    reduce(x.op.dtype, x.op.op, recv + off * es, srcs.data(), x.n, cc);
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
