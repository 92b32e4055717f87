// AllGather: every rank stages its block one chunk per round and copies all
// peers' chunks out; or, with aclrtMalloc buffers everywhere, copies the
// peers' send buffers directly. In place: sendBuf == recvBuf + rank * block.
#include <cstring>

#include "hccl/algo/copy.h"
#include "hccl/algo/ctx.h"
#include "hccl/algo/selector.h"
#include "hccl/algo/single_copy.h"

namespace hccl {

HcclResult run_all_gather(Ctx &x) {
  const char *send = static_cast<const char *>(x.op.send);
  char *recv = static_cast<char *>(x.op.recv);
  const size_t es = dtype_size(x.op.dtype);
  const size_t count = x.op.count;
  const size_t block = count * es;
  if (count == 0) return HCCL_SUCCESS;
  const bool in_place = send == recv + x.me * block;
  if (x.n == 1) {
    if (!in_place) std::memcpy(recv, send, block);
    return HCCL_SUCCESS;
  }
  HcclResult r;
  if (select_path(x, "allgather", block * x.n, false) == Path::kSingle) {
    bool ok = false;
    PeerViews v;
    r = single_copy_exchange(x, send, block, nullptr, 0, &ok, &v);
    if (r != HCCL_SUCCESS) return r;
    if (ok) {
      for (int p = 0; p < x.n; ++p)
        if (!(p == x.me && in_place)) std::memcpy(recv + p * block, v.send[p], block);
      uint64_t j = x.next_round();
      x.post(j);
      return x.wait_all(j);
    }
  }
  const size_t chunk = x.slot_bytes / es;
  const bool nt = block * x.n >= stream_threshold();
  for (size_t off = 0; off < count; off += chunk) {
    size_t cc = min_sz(chunk, count - off);
    uint64_t j;
    if ((r = x.stage(send + off * es, cc * es, &j)) != HCCL_SUCCESS) return r;
    if (!in_place) std::memcpy(recv + x.me * block + off * es, send + off * es, cc * es);
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    for (int p = 0; p < x.n; ++p)
      if (p != x.me) copy_out(recv + p * block + off * es, x.slot(p, j), cc * es, nt);
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
