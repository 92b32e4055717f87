#include "hccl/algo/board.h"

#include <cstring>

#include "hccl/algo/windows.h"

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

bool board_fits(const CommView &comm, OpKind kind, size_t bytes) {
  const size_t fit = comm.engine->board_bytes();
  return fit > 0 && bytes <= fit && comm.tuning.forced_for(kind, false) == Algo::kAuto;
}

bool board_applies(const Ctx &x) {
  return x.spec.has(Algo::kBoard) && x.count > 0 &&
         board_fits(x.comm, x.spec.kind, x.spec.send.bytes(x.count, x.es, static_cast<uint32_t>(x.n)));
}

bool board_part(const CommView &comm, const OpDesc &op, const void **part, size_t *bytes) {
  // With symmetric windows the first exchange may be window_open()'s.
  if (comm.engine->board_bytes() == 0 || (op.windows && op.windows->any_direct())) return false;
  const CollectiveSpec &s = op_spec(op.kind);
  *part = nullptr;
  *bytes = 0;
  if (op.count == 0) return s.zero == ZeroCount::kCompareSignatures;  // an exchange of nothing
  const size_t es = dtype_size(op.dtype);
  if (!s.has(Algo::kBoard) || !board_fits(comm, op.kind, s.send.bytes(op.count, es, comm.nranks)))
    return false;
  *part = s.one_buffer ? op.recv : op.send;
  *bytes = s.send.mine(op.count, es, comm.nranks, s.rooted && op.root == comm.rank);
  return true;
}

HcclResult run_board(Ctx &x) {
  const size_t block = x.count * x.es;  // one rank's block of a per-rank buffer
  const char **v;
  // Parts differ in size only where some ranks send nothing (rooted): checked below.
  const bool same_size = x.spec.send.who == Who::kAll;
  HcclResult rc = post_and_read(x, x.in, x.send_bytes(), same_size, &v);
  if (rc != HCCL_SUCCESS) return rc;
  if (!same_size && !x.is_root() && x.eng.board_sizes()[x.root] != x.spec.send.bytes(x.count, x.es, x.n))
    return garbled(x, x.root);
  char *out = x.out;
  switch (x.spec.kind) {
    case OpKind::kAllReduce:
    case OpKind::kReduce:  // reduced in rank order on every rank that receives
      if (x.recv_bytes() > 0) reduce(x.op.dtype, x.op.op, out, reinterpret_cast<const void *const *>(v), x.n, x.count);
      break;
    case OpKind::kBroadcast:
      if (!x.is_root()) std::memcpy(out, v[x.root], block);
      break;
    case OpKind::kGather:  // AllGather's copies, on the root only
      if (!x.is_root()) break;
      [[fallthrough]];
    case OpKind::kAllGather:
      for (int p = 0; p < x.n; ++p)
        if (out + p * block != v[p]) std::memmove(out + p * block, v[p], block);
      break;
    case OpKind::kReduceScatter:
      for (int p = 0; p < x.n; ++p) v[p] += x.me * block;  // this rank's block of everyone's input
      reduce(x.op.dtype, x.op.op, out, reinterpret_cast<const void *const *>(v), x.n, x.count);
      break;
    case OpKind::kAlltoAll:  // in place too: peers read the board's copy
      for (int p = 0; p < x.n; ++p)
        if (p != x.me || x.in != out) std::memcpy(out + p * block, v[p] + x.me * block, block);
      break;
    default: return x.fail(HCCL_E_INTERNAL, "no board algorithm for this collective");
  }
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
