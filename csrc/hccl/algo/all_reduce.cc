// AllReduce and Reduce. Three paths, chosen from the size alone (the same on
// every rank) unless PYHCCL_ALGO forces one:
//  latency  one round per slot-sized chunk: stage, then every rank reduces
//           the whole chunk from all slots (small messages: one sync).
//  chunked  two rounds per chunk: stage; rank r reduces slice r into its
//           slot; everyone copies all slices out (reduce-scatter + all-gather).
//  single   aclrtMalloc buffers everywhere: rank r reduces slice r straight
//           from the peers' buffers, then everyone copies the slices.
#include <cstring>
#include <vector>

#include "hccl/algo/copy.h"
#include "hccl/algo/reduce_paths.h"
#include "hccl/algo/selector.h"
#include "hccl/algo/single_copy.h"

namespace hccl {
namespace {

using Srcs = std::vector<const void *>;

HcclResult latency_path(Ctx &x, const char *send, char *recv, size_t count, int root) {
  const size_t es = dtype_size(x.op.dtype);
  const size_t chunk = x.slot_bytes / es;
  Srcs srcs(x.n);
  for (size_t off = 0; off < count; off += chunk) {
    size_t cc = min_sz(chunk, count - off);
    uint64_t j;
    HcclResult r = x.stage(send + off * es, cc * es, &j);
    if (r != HCCL_SUCCESS) return r;
    if (root >= 0 && root != x.me) continue;
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    for (int p = 0; p < x.n; ++p) srcs[p] = x.slot(p, j);
    reduce(x.op.dtype, x.op.op, recv + off * es, srcs.data(), x.n, cc);
  }
  return HCCL_SUCCESS;
}

HcclResult chunked_path(Ctx &x, const char *send, char *recv, size_t count, int root) {
  const size_t es = dtype_size(x.op.dtype);
  const size_t chunk = x.slot_bytes / es;
  const bool nt = count * es >= stream_threshold();
  Srcs srcs(x.n);
  for (size_t off = 0; off < count; off += chunk) {
    size_t cc = min_sz(chunk, count - off);
    uint64_t j;
    HcclResult r = x.stage(send + off * es, cc * es, &j);
    if (r != HCCL_SUCCESS) return r;
    if ((r = x.wait_all(j)) != HCCL_SUCCESS) return r;
    // Reduce my slice into the next round's slot (free: all posted j).
    uint64_t j2 = x.next_round();
    Span mine = split(cc, x.n, x.me, es);
    if (mine.size() > 0) {
      for (int p = 0; p < x.n; ++p) srcs[p] = x.slot(p, j) + mine.lo * es;
      reduce(x.op.dtype, x.op.op, x.my_slot(j2) + mine.lo * es, srcs.data(), x.n, mine.size());
    }
    x.post(j2);
    if (root >= 0 && root != x.me) continue;
    if ((r = x.wait_all(j2)) != HCCL_SUCCESS) return r;
    for (int p = 0; p < x.n; ++p) {
      Span s = split(cc, x.n, p, es);
      if (s.size() > 0)
        copy_out(recv + (off + s.lo) * es, x.slot(p, j2) + s.lo * es, s.size() * es, nt);
    }
  }
  return HCCL_SUCCESS;
}

HcclResult single_copy_path(Ctx &x, const PeerViews &v, size_t count, int root) {
  const size_t es = dtype_size(x.op.dtype);
  Srcs srcs(x.n);
  // Round 1 (the exchange) is done: every rank's send is readable. Reduce my
  // slice into my recv (AllReduce) or straight into root's recv (Reduce).
  Span mine = split(count, x.n, x.me, es);
  char *dst_base = root < 0 ? v.recv[x.me] : v.recv[root];
  if (mine.size() > 0) {
    for (int p = 0; p < x.n; ++p) srcs[p] = v.send[p] + mine.lo * es;
    reduce(x.op.dtype, x.op.op, dst_base + mine.lo * es, srcs.data(), x.n, mine.size());
  }
  uint64_t j = x.next_round();
  x.post(j);
  HcclResult r = x.wait_all(j);
  if (r != HCCL_SUCCESS || root >= 0) return r;
  for (int p = 0; p < x.n; ++p) {
    if (p == x.me) continue;
    Span s = split(count, x.n, p, es);
    if (s.size() > 0) std::memcpy(v.recv[x.me] + s.lo * es, v.recv[p] + s.lo * es, s.size() * es);
  }
  // Peers may still read my buffers until everyone has copied.
  j = x.next_round();
  x.post(j);
  return x.wait_all(j);
}

}  // namespace

HcclResult reduce_common(Ctx &x, const char *coll, const void *send_v, void *recv_v, size_t count,
                         int root) {
  const char *send = static_cast<const char *>(send_v);
  char *recv = static_cast<char *>(recv_v);
  const size_t es = dtype_size(x.op.dtype);
  const size_t bytes = count * es;
  if (count == 0) return HCCL_SUCCESS;
  if (x.n == 1) {
    if (send != recv) std::memcpy(recv, send, bytes);
    return HCCL_SUCCESS;
  }
  Path path = select_path(x, coll, bytes, /*latency_ok=*/true);
  if (path == Path::kLatency) return latency_path(x, send, recv, count, root);
  if (path == Path::kSingle) {
    bool ok = false;
    PeerViews v;
    void *my_recv = (root < 0 || root == x.me) ? recv : nullptr;
    HcclResult r = single_copy_exchange(x, send, bytes, my_recv, bytes, &ok, &v);
    if (r != HCCL_SUCCESS) return r;
    if (ok) return single_copy_path(x, v, count, root);
  }
  return chunked_path(x, send, recv, count, root);
}

HcclResult run_all_reduce(Ctx &x) {
  return reduce_common(x, "allreduce", x.op.send, x.op.recv, x.op.count, -1);
}

HcclResult run_reduce(Ctx &x) {
  return reduce_common(x, "reduce", x.op.send, x.op.recv, x.op.count,
                       static_cast<int>(x.op.root));
}

}  // namespace hccl
