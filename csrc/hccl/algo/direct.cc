#include "hccl/algo/direct.h"

#include <cstring>

namespace hccl {
namespace {

struct DirectDesc {
  uint32_t usable;
  uint32_t pad;
  MemDesc send, recv;
};

}  // namespace

HcclResult direct_open(Ctx &x, const void *send, size_t send_bytes, void *recv, size_t recv_bytes,
                       bool *ok, PeerViews *views) {
  DirectDesc mine{};
  mine.usable = describe_device_memory(send, send_bytes, &mine.send) &&
                describe_device_memory(recv, recv_bytes, &mine.recv);
  std::vector<DirectDesc> all(x.n);
  HcclResult rc = exchange(x, &mine, sizeof(mine), all.data());
  if (rc != HCCL_SUCCESS) return rc;
  *ok = true;
  for (const DirectDesc &d : all) *ok = *ok && d.usable;
  if (!*ok) return HCCL_SUCCESS;
  views->send.assign(x.n, nullptr);
  views->recv.assign(x.n, nullptr);
  for (int p = 0; p < x.n; ++p) {
    if (p == x.me) {
      views->send[p] = static_cast<const char *>(send);
      views->recv[p] = static_cast<char *>(recv);
      continue;
    }
    for (int which = 0; which < 2; ++which) {
      const MemDesc &d = which == 0 ? all[p].send : all[p].recv;
      if (d.bytes == 0) continue;
      void *m = x.eng.conn(p).map_peer_memory(d);
      if (m == nullptr) {
        // A peer that died meanwhile is the real story, not the failed mapping.
        if (x.eng.conn(p).peer_failed(true, &x.err)) return x.err.code;
        return x.fail(HCCL_E_INTERNAL, "cannot map the device memory of rank " + std::to_string(p));
      }
      if (which == 0)
        views->send[p] = static_cast<const char *>(m);
      else
        views->recv[p] = static_cast<char *>(m);
    }
  }
  return HCCL_SUCCESS;
}

HcclResult direct_close(Ctx &x) {
  HcclResult rc = compare_signatures(x);
  if (rc != HCCL_SUCCESS) return rc;
  for (int p = 0; p < x.n; ++p)
    if (p != x.me && x.eng.conn(p).peer_failed(false, &x.err)) return x.err.code;
  return HCCL_SUCCESS;
}

namespace {

// Rank r reduces slice r straight from every rank's send buffer into its own
// recv (AllReduce, root < 0) or the root's (Reduce); AllReduce then copies
// the other slices from their owners.
HcclResult direct_all_reduce(Ctx &x, const PeerViews &v, size_t count, int root) {
  std::vector<const void *> srcs(x.n);
  Span mine = split(count, x.n, x.me, x.es);
  char *dst = root < 0 ? v.recv[x.me] : v.recv[root];
  if (mine.size() > 0) {
    for (int p = 0; p < x.n; ++p) srcs[p] = v.send[p] + mine.lo * x.es;
    reduce(x.op.dtype, x.op.op, dst + mine.lo * x.es, srcs.data(), x.n, mine.size());
  }
  if (root < 0) {
    HcclResult rc = compare_signatures(x);
    if (rc != HCCL_SUCCESS) return rc;
    for (int p = 0; p < x.n; ++p) {
      Span s = split(count, x.n, p, x.es);
      if (p != x.me && s.size() > 0)
        std::memcpy(v.recv[x.me] + s.lo * x.es, v.recv[p] + s.lo * x.es, s.size() * x.es);
    }
  }
  return direct_close(x);
}

HcclResult direct_reduce_scatter(Ctx &x, const PeerViews &v, char *recv, size_t count) {
  std::vector<const void *> srcs(x.n);
  for (int p = 0; p < x.n; ++p) srcs[p] = v.send[p] + static_cast<size_t>(x.me) * count * x.es;
  reduce(x.op.dtype, x.op.op, recv, srcs.data(), x.n, count);
  return direct_close(x);
}

HcclResult direct_all_gather(Ctx &x, const PeerViews &v, char *recv, size_t count) {
  const size_t B = count * x.es;
  for (int p = 0; p < x.n; ++p)
    if (recv + p * B != v.send[p]) std::memcpy(recv + p * B, v.send[p], B);
  return direct_close(x);
}

// AlltoAll (equal counts): block `me` of every rank's send buffer into block p
// of this rank's recv; in place through a private copy, after every rank read.
HcclResult direct_all_to_all(Ctx &x, const PeerViews &v, char *recv, size_t count) {
  const size_t B = count * x.es;
  const bool in_place = v.send[x.me] == recv;
  // In place, peers still read this buffer: gather privately, copy once all are done.
  char *out = in_place ? x.comm.scratch(0, B * x.n) : recv;
  for (int p = 0; p < x.n; ++p) std::memcpy(out + p * B, v.send[p] + x.me * B, B);
  HcclResult rc = direct_close(x);
  if (rc == HCCL_SUCCESS && in_place) std::memcpy(recv, out, B * x.n);
  return rc;
}

HcclResult direct_broadcast(Ctx &x, const PeerViews &v, char *buf, size_t bytes, int root) {
  if (x.me != root) std::memcpy(buf, v.send[root], bytes);
  return direct_close(x);
}

// Whether peers read (or write) each other's recv buffers: only then are they
// described and mapped.
bool peers_use_recv(OpKind kind) {
  return kind == OpKind::kAllReduce || kind == OpKind::kReduce || kind == OpKind::kBroadcast;
}

}  // namespace

HcclResult run_direct(Ctx &x, const PeerViews &v) {
  switch (x.spec.kind) {
    case OpKind::kAllReduce:
    case OpKind::kReduce: return direct_all_reduce(x, v, x.count, x.root);
    case OpKind::kReduceScatter: return direct_reduce_scatter(x, v, x.out, x.count);
    case OpKind::kAllGather: return direct_all_gather(x, v, x.out, x.count);
    case OpKind::kBroadcast: return direct_broadcast(x, v, x.out, x.count * x.es, x.root);
    case OpKind::kAlltoAll: return direct_all_to_all(x, v, x.out, x.count);
    default: return x.fail(HCCL_E_INTERNAL, "no single-copy algorithm for this collective");
  }
}

HcclResult try_direct(Ctx &x, bool *ran) {
  const size_t sb = x.send_bytes(), rb = peers_use_recv(x.spec.kind) ? x.recv_bytes() : 0;
  PeerViews v;
  HcclResult rc = direct_open(x, sb ? x.in : nullptr, sb, rb ? x.out : nullptr, rb, ran, &v);
  return rc != HCCL_SUCCESS || !*ran ? rc : run_direct(x, v);
}

HcclResult try_window(Ctx &x, bool *ran) {
  const size_t sb = x.send_bytes(), rb = x.recv_bytes();
  PeerViews v;
  HcclResult rc = window_open(x, sb ? x.in : nullptr, sb, rb ? x.out : nullptr, rb, ran, &v);
  return rc != HCCL_SUCCESS || !*ran ? rc : run_direct(x, v);
}

}  // namespace hccl
