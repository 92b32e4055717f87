#include "hccl/algo/ctx.h"

#include <cstdio>
#include <cstring>

namespace hccl {
namespace {

bool counts_are_digest(uint32_t kind) {
  return kind == static_cast<uint32_t>(OpKind::kAllGatherV) ||
         kind == static_cast<uint32_t>(OpKind::kReduceScatterV);
}

// FNV-1a over the array, then a final mix; never 0.
uint64_t counts_digest(const std::vector<uint64_t> &counts) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t c : counts) {
    for (int b = 0; b < 8; ++b) {
      h ^= (c >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h == 0 ? 1 : h;
}

}  // namespace

Ctx::Ctx(Comm &c, const OpDesc &o)
    : comm(c),
      op(o),
      tr(*c.transport),
      me(static_cast<int>(c.rank)),
      n(static_cast<int>(c.nranks)),
      slot_bytes(c.transport->slot_bytes()) {
  if (o.kind == OpKind::kSendRecv) return;
  // What must match on every rank: kind, dtype, and count / root / op where
  // the call defines them identically everywhere.
  sig_.seq = ++c.op_seq;
  sig_.kind = static_cast<uint32_t>(o.kind);
  sig_.dtype = static_cast<uint32_t>(o.dtype);
  bool rooted = o.kind == OpKind::kBroadcast || o.kind == OpKind::kReduce || o.kind == OpKind::kScatter;
  bool reducing = o.kind == OpKind::kAllReduce || o.kind == OpKind::kReduce ||
                  o.kind == OpKind::kReduceScatter || o.kind == OpKind::kReduceScatterV;
  // AllGatherV / ReduceScatterV: count is per rank, but recvCounts /
  // sendCounts must be the same array everywhere: compare a digest of it.
  // (AlltoAllV checks its counts itself, against the exchanged matrix.)
  if (o.kind == OpKind::kAllGatherV)
    sig_.count = counts_digest(o.recv_counts);
  else if (o.kind == OpKind::kReduceScatterV)
    sig_.count = counts_digest(o.send_counts);
  else
    sig_.count = o.kind == OpKind::kAlltoAllV ? 0 : o.count;
  sig_.root = rooted ? o.root : 0;
  sig_.op = reducing ? static_cast<uint32_t>(o.op) : 0;
}

void Ctx::publish() {
  first_round_ = comm.round + 1;
  if (sig_.seq != 0) tr.publish_op(sig_);
}

namespace {

const char *kind_name(uint32_t k) {
  static const char *const names[] = {"HcclAllReduce", "HcclBroadcast", "HcclAllGather",
                                       "HcclReduceScatter", "HcclBarrier", "HcclReduce",
                                       "HcclScatter", "HcclAlltoAll", "HcclAllGatherV",
                                       "HcclReduceScatterV", "HcclAlltoAllV", "send/recv"};
  return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

std::string describe(const OpSig &s) {
  OpKind k = static_cast<OpKind>(s.kind);
  std::string d = std::string(kind_name(s.kind));
  if (counts_are_digest(s.kind)) {
    char hex[24];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(s.count));
    d += std::string("(") + (k == OpKind::kAllGatherV ? "recvCounts" : "sendCounts") +
         " digest " + hex + ", ";
  } else {
    d += "(count " + std::to_string(s.count) + ", ";
  }
  d += dtype_name(static_cast<HcclDataType>(s.dtype));
  if (k == OpKind::kBroadcast || k == OpKind::kReduce || k == OpKind::kScatter)
    d += ", root " + std::to_string(s.root);
  if (k == OpKind::kAllReduce || k == OpKind::kReduce || k == OpKind::kReduceScatter ||
      k == OpKind::kReduceScatterV)
    d += std::string(", ") + op_name(static_cast<HcclReduceOp>(s.op));
  return d + ")";
}

}  // namespace

HcclResult Ctx::check_peer_op(int peer) {
  comm.checked_op[peer] = sig_.seq;
  OpSig theirs = tr.peer_op(peer, sig_.seq);
  // A later seq there: the peer already moved on and reused the entry.
  if (theirs.seq > sig_.seq) return HCCL_SUCCESS;
  if (theirs.seq == sig_.seq && theirs.kind == sig_.kind && theirs.dtype == sig_.dtype &&
      theirs.count == sig_.count && theirs.root == sig_.root && theirs.op == sig_.op)
    return HCCL_SUCCESS;
  std::string what = "collective #" + std::to_string(sig_.seq) + " differs between ranks: this rank called " +
                     describe(sig_) + ", rank " + std::to_string(peer);
  if (theirs.seq == sig_.seq && theirs.kind == sig_.kind && counts_are_digest(sig_.kind) &&
      theirs.count != sig_.count && theirs.dtype == sig_.dtype && theirs.op == sig_.op)
    what = "collective #" + std::to_string(sig_.seq) + " differs between ranks: " +
           kind_name(sig_.kind) + " was given different " +
           (sig_.kind == static_cast<uint32_t>(OpKind::kAllGatherV) ? "recvCounts" : "sendCounts") +
           " arrays on this rank and rank " + std::to_string(peer) +
           " (every rank must pass the same array)";
  else if (theirs.seq == sig_.seq)
    what += " called " + describe(theirs);
  else
    what += " called a different sequence of collectives (or one with count 0)";
  return fail(HCCL_E_PARA, what);
}

HcclResult Ctx::wait(int peer, uint64_t round) {
  if (peer == me || comm.seen[peer] >= round) return HCCL_SUCCESS;
  HcclResult r = tr.wait(peer, round, &err);
  if (r != HCCL_SUCCESS) return r;
  comm.seen[peer] = round;
  if (sig_.seq != 0 && first_round_ != 0 && round >= first_round_ && comm.checked_op[peer] != sig_.seq)
    return check_peer_op(peer);
  return HCCL_SUCCESS;
}

HcclResult Ctx::stage(const void *src, size_t bytes, uint64_t *round) {
  const uint64_t j = *round = next_round();
  HcclResult r = acquire(j);
  if (r != HCCL_SUCCESS) return r;
  if (bytes > 0) std::memcpy(my_slot(j), src, bytes);
  post(j);
  return HCCL_SUCCESS;
}

HcclResult Ctx::stage_blocks(const char *send, const std::vector<uint64_t> &counts,
                             const std::vector<uint64_t> &displs, uint64_t off, size_t chunk,
                             uint64_t *round) {
  const uint64_t j = *round = next_round();
  HcclResult r = acquire(j);
  if (r != HCCL_SUCCESS) return r;
  const size_t es = dtype_size(op.dtype);
  char *slot = my_slot(j);
  for (int q = 0; q < n; ++q) {
    size_t len = chunk_part(counts[q], off, chunk);
    if (len > 0) std::memcpy(slot + q * chunk * es, send + (displs[q] + off) * es, len * es);
  }
  post(j);
  return HCCL_SUCCESS;
}

HcclResult Ctx::wait_all(uint64_t round) {
  // Start after ourselves so ranks do not all queue on rank 0 first.
  for (int k = 1; k < n; ++k) {
    HcclResult r = wait((me + k) % n, round);
    if (r != HCCL_SUCCESS) return r;
  }
  return HCCL_SUCCESS;
}

HcclResult Ctx::fail(HcclResult code, const std::string &what) {
  err.code = code;
  err.what = what;
  return code;
}

bool Ctx::forced(const char *coll, const char *path, bool *any) const {
  // Syntax: "coll:path[,coll:path...]" (also ';' or ' ' between entries).
  const char *s = comm.tuning.force;
  size_t cl = std::strlen(coll);
  if (any != nullptr) *any = false;
  while (*s != '\0') {
    while (*s == ',' || *s == ';' || *s == ' ') ++s;
    const char *end = s;
    while (*end != '\0' && *end != ',' && *end != ';' && *end != ' ') ++end;
    if (static_cast<size_t>(end - s) > cl && std::strncmp(s, coll, cl) == 0 && s[cl] == ':') {
      if (any != nullptr) *any = true;
      const char *p = s + cl + 1;
      if (std::strlen(path) == static_cast<size_t>(end - p) &&
          std::strncmp(p, path, end - p) == 0)
        return true;
    }
    s = end;
  }
  return false;
}

Span split(size_t count, int parts, int i, size_t elem_bytes) {
  size_t align = elem_bytes >= 64 ? 1 : 64 / elem_bytes;
  size_t per = (count + parts - 1) / parts;
  per = (per + align - 1) / align * align;
  size_t lo = min_sz(per * i, count);
  return Span{lo, min_sz(lo + per, count)};
}

HcclResult run_op_algorithm(Ctx &x) {
  switch (x.op.kind) {
    case OpKind::kAllReduce: return run_all_reduce(x);
    case OpKind::kBroadcast: return run_broadcast(x);
    case OpKind::kAllGather: return run_all_gather(x);
    case OpKind::kReduceScatter: return run_reduce_scatter(x);
    case OpKind::kBarrier: return run_barrier(x);
    case OpKind::kReduce: return run_reduce(x);
    case OpKind::kScatter: return run_scatter(x);
    case OpKind::kAlltoAll:
    case OpKind::kAlltoAllV: return run_all_to_all_v(x);
    case OpKind::kAllGatherV: return run_all_gather_v(x);
    case OpKind::kReduceScatterV: return run_reduce_scatter_v(x);
    case OpKind::kSendRecv: return run_send_recv(x);
  }
  return x.fail(HCCL_E_INTERNAL, "unknown operation");
}

}  // namespace hccl
