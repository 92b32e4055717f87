#include "hccl/algo/board.h"

#include <cstring>

#include "hccl/comm/window.h"

namespace hccl {
namespace {

// A peer posted another size under the same signature: never expected.
HcclResult garbled(Ctx &x, int peer) {
  return x.fail(HCCL_E_INTERNAL, "garbled board of rank " + std::to_string(peer) + " (size)");
}

// Posts `bytes` of `mine` and waits for every peer's part; *views by rank (the
// engine's, until the next exchange). With `same_size` every part must be
// `bytes` long; otherwise the caller checks x.eng.board_sizes().
HcclResult post_and_read(Ctx &x, const void *mine, size_t bytes, bool same_size, const char ***views) {
  x.algo = "board";
  *views = x.eng.board_views();
  HcclResult rc = x.eng.board_exchange(x.sig, mine, bytes, &x.err);
  if (rc != HCCL_SUCCESS) return x.failed(rc);
  for (int p = 0; same_size && p < x.n; ++p)
    if (x.eng.board_sizes()[p] != bytes) return garbled(x, p);
  return HCCL_SUCCESS;
}

}  // namespace

bool board_fits(const Comm &comm, Coll c, size_t bytes) {
  const size_t fit = comm.engine->board_bytes();
  return fit > 0 && bytes <= fit && comm.tuning.forced_for(c, false) == Algo::kAuto;
}

bool board_part(const Comm &comm, const OpDesc &op, const void **part, size_t *bytes) {
  // With symmetric windows the first exchange may be window_open()'s.
  if (comm.engine->board_bytes() == 0 || (op.windows && op.windows->any_direct())) return false;
  const size_t b = op.count * dtype_size(op.dtype);
  Coll c;
  *part = op.send;
  *bytes = b;
  switch (op.kind) {
    case OpKind::kAllReduce: c = Coll::kAllReduce; break;
    case OpKind::kReduce: c = Coll::kReduce; break;
    case OpKind::kAllGather: c = Coll::kAllGather; break;
    case OpKind::kReduceScatter:
      c = Coll::kReduceScatter;
      *bytes = b * comm.nranks;
      break;
    case OpKind::kAlltoAll:  // count 0: pairwise, with empty messages
      if (b == 0) return false;
      c = Coll::kAlltoAll;
      *bytes = b * comm.nranks;
      break;
    case OpKind::kBroadcast:
      c = Coll::kBroadcast;
      *part = op.recv;
      if (op.root != comm.rank) *bytes = 0;
      break;
    case OpKind::kBarrier: c = Coll::kCount; break;
    default: return false;
  }
  if (b == 0 || c == Coll::kCount) {  // compare_signatures(): an exchange of nothing
    *part = nullptr;
    *bytes = 0;
    return true;
  }
  return board_fits(comm, c, op.kind == OpKind::kBroadcast ? b : *bytes);
}

HcclResult board_reduce(Ctx &x, const char *in, char *out, size_t count, int root) {
  const size_t bytes = count * x.es;
  const char **v;
  HcclResult rc = post_and_read(x, in, bytes, true, &v);
  if (rc != HCCL_SUCCESS || (root >= 0 && root != x.me)) return rc;
  reduce(x.op.dtype, x.op.op, out, reinterpret_cast<const void *const *>(v), x.n, count);
  return HCCL_SUCCESS;
}

HcclResult board_broadcast(Ctx &x, char *buf, size_t bytes, int root) {
  const char **v;
  const bool is_root = x.me == root;
  HcclResult rc = post_and_read(x, buf, is_root ? bytes : 0, false, &v);
  if (rc != HCCL_SUCCESS || is_root) return rc;
  if (x.eng.board_sizes()[root] != bytes) return garbled(x, root);
  std::memcpy(buf, v[root], bytes);
  return HCCL_SUCCESS;
}

HcclResult board_all_gather(Ctx &x, const char *in, char *out, size_t bytes) {
  const char **v;
  HcclResult rc = post_and_read(x, in, bytes, true, &v);
  if (rc != HCCL_SUCCESS) return rc;
  for (int p = 0; p < x.n; ++p)
    if (out + p * bytes != v[p]) std::memmove(out + p * bytes, v[p], bytes);
  return HCCL_SUCCESS;
}

HcclResult board_reduce_scatter(Ctx &x, const char *in, char *out, size_t count) {
  const size_t bytes = count * x.es;
  const char **v;
  HcclResult rc = post_and_read(x, in, bytes * x.n, true, &v);
  if (rc != HCCL_SUCCESS) return rc;
  for (int p = 0; p < x.n; ++p) v[p] += x.me * bytes;  // this rank's block of everyone's input
  reduce(x.op.dtype, x.op.op, out, reinterpret_cast<const void *const *>(v), x.n, count);
  return HCCL_SUCCESS;
}

HcclResult board_all_to_all(Ctx &x, const char *in, char *out, size_t block) {
  const char **v;
  HcclResult rc = post_and_read(x, in, block * x.n, true, &v);
  if (rc != HCCL_SUCCESS) return rc;
  for (int p = 0; p < x.n; ++p)
    if (p != x.me || in != out) std::memcpy(out + p * block, v[p] + x.me * block, block);
  return HCCL_SUCCESS;
}

bool board_gather(Ctx &x, const void *mine, size_t bytes, void *out, HcclResult *rc) {
  if (bytes > x.eng.board_bytes() || x.eng.board_bytes() == 0) return false;
  const char *algo = x.algo;  // the caller's algorithm, not "board"
  const char **v;
  *rc = post_and_read(x, mine, bytes, true, &v);
  x.algo = algo;
  char *o = static_cast<char *>(out);
  for (int p = 0; *rc == HCCL_SUCCESS && p < x.n && bytes > 0; ++p)
    if (o + p * bytes != v[p]) std::memcpy(o + p * bytes, v[p], bytes);
  return true;
}

}  // namespace hccl
