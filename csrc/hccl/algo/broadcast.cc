// Broadcast from any root: staged (root fills its slot, one round per chunk,
// the others copy it out) or single-copy (the others copy straight from the
// root's aclrtMalloc buffer).
#include <cstring>

#include "hccl/algo/copy.h"
#include "hccl/algo/ctx.h"
#include "hccl/algo/selector.h"
#include "hccl/algo/single_copy.h"

namespace hccl {

HcclResult run_broadcast(Ctx &x) {
  char *buf = static_cast<char *>(x.op.recv);
  const int root = static_cast<int>(x.op.root);
  const size_t es = dtype_size(x.op.dtype);
  const size_t count = x.op.count;
  if (count == 0 || x.n == 1) return HCCL_SUCCESS;
  HcclResult r;
  if (select_path(x, "broadcast", count * es, false) == Path::kSingle) {
    bool ok = false;
    PeerViews v;
    bool is_root = x.me == root;
    r = single_copy_exchange(x, is_root ? buf : nullptr, count * es, is_root ? nullptr : buf,
                             count * es, &ok, &v);
    if (r != HCCL_SUCCESS) return r;
    if (ok) {
      if (!is_root) std::memcpy(buf, v.send[root], count * es);
      uint64_t j = x.next_round();
      x.post(j);
      return x.wait_all(j);  // the root's buffer is read until everyone is done
    }
  }
  const size_t chunk = x.slot_bytes / es;
  const bool nt = count * es >= stream_threshold();
  for (size_t off = 0; off < count; off += chunk) {
    size_t cc = min_sz(chunk, count - off);
    uint64_t j = x.next_round();
    if (x.me == root) {
      if ((r = x.acquire(j)) != HCCL_SUCCESS) return r;
      std::memcpy(x.my_slot(j), buf + off * es, cc * es);
      x.post(j);
    } else {
      x.post(j);
      if ((r = x.wait(root, j)) != HCCL_SUCCESS) return r;
      copy_out(buf + off * es, x.slot(root, j), cc * es, nt);
    }
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
