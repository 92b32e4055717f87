#include "hccl/algo/ctx.h"

#include "hccl/algo/board.h"
#include "runtime/hostrt.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

namespace hccl {
namespace {

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

std::string describe(const OpSig &s) {
  const CollectiveSpec *f = op_spec_or_null(s.kind);
  if (f == nullptr) return "an unknown operation (" + std::to_string(s.kind) + ")";
  std::string d = f->api;
  if (f->host_call) return d;  // a management call: its name says it
  if (f->count_rule == CountRule::kRecvCountsDigest || f->count_rule == CountRule::kSendCountsDigest) {
    char hex[24];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(s.count));
    d += std::string("(") + (f->count_rule == CountRule::kRecvCountsDigest ? "recvCounts" : "sendCounts") +
         " digest " + hex + ", ";
  } else {
    d += "(count " + std::to_string(s.count) + ", ";
  }
  d += dtype_name(static_cast<HcclDataType>(s.dtype));
  if (f->rooted) d += ", root " + std::to_string(s.root);
  if (f->reducing) d += std::string(", ") + op_name(static_cast<HcclReduceOp>(s.op));
  return d + ")";
}

std::string mismatch_text(const WaitError &e) {
  const OpSig &mine = e.mine, &theirs = e.theirs;
  const std::string peer = "rank " + std::to_string(e.peer);
  if (mine.kind == static_cast<uint32_t>(OpKind::kSendRecv) &&
      theirs.kind == static_cast<uint32_t>(OpKind::kSendRecv))
    return peer + " sent " + std::to_string(theirs.count) + " " +
           dtype_name(static_cast<HcclDataType>(theirs.dtype)) + " elements, this rank receives " +
           std::to_string(mine.count) + " " + dtype_name(static_cast<HcclDataType>(mine.dtype)) +
           " elements (HcclSend and HcclRecv must agree on count and dataType)";
  if (mine.kind == static_cast<uint32_t>(OpKind::kSendRecv))
    return "this rank called send/recv with " + peer + ", which called collective #" +
           std::to_string(theirs.seq) + " " + describe(theirs);
  std::string head = "collective #" + std::to_string(mine.seq) + " differs between ranks: ";
  const CollectiveSpec *f = op_spec_or_null(mine.kind);
  if (theirs.seq == mine.seq && theirs.kind == mine.kind && f != nullptr &&
      f->count_rule != CountRule::kSameCount && f->count_rule != CountRule::kNotCompared &&
      theirs.count != mine.count && theirs.dtype == mine.dtype && theirs.op == mine.op)
    return head + f->api + " was given different " +
           (f->count_rule == CountRule::kRecvCountsDigest ? "recvCounts" : "sendCounts") +
           " arrays on this rank and " + peer + " (every rank must pass the same array)";
  head += "this rank called " + describe(mine) + ", " + peer;
  if (theirs.kind == static_cast<uint32_t>(OpKind::kSendRecv))
    return head + " called send/recv";
  if (theirs.seq == mine.seq) return head + " called " + describe(theirs);
  return head + " is at collective #" + std::to_string(theirs.seq) + " (" + describe(theirs) +
         "): the ranks called different sequences of collectives";
}

}  // namespace

OpSig op_signature(const OpDesc &o, uint64_t seq) {
  const CollectiveSpec &f = op_spec(o.kind);
  OpSig sig;
  sig.kind = static_cast<uint32_t>(o.kind);
  sig.dtype = static_cast<uint32_t>(o.dtype);
  if (o.kind == OpKind::kSendRecv) return sig;  // each message carries its item's signature
  sig.seq = seq;
  switch (f.count_rule) {
    case CountRule::kSameCount: sig.count = o.count; break;
    case CountRule::kRecvCountsDigest: sig.count = counts_digest(o.recv_counts); break;
    case CountRule::kSendCountsDigest: sig.count = counts_digest(o.send_counts); break;
    case CountRule::kNotCompared: sig.count = 0; break;
  }
  sig.root = f.rooted ? o.root : 0;
  sig.op = f.reducing ? static_cast<uint32_t>(o.op) : 0;
  return sig;
}

Ctx::Ctx(CommView &c, const OpDesc &o)
    : comm(c),
      op(o),
      eng(*c.engine),
      topo(c.topo),
      me(static_cast<int>(c.rank)),
      n(static_cast<int>(c.nranks)),
      es(dtype_size(o.dtype)),
      spec(op_spec(o.kind)),
      in(static_cast<const char *>(spec.one_buffer ? o.recv : o.send)),
      out(static_cast<char *>(o.recv)),
      count(o.count),
      root(spec.rooted ? static_cast<int>(o.root) : -1),
      sig(op_signature(o, o.kind == OpKind::kSendRecv ? 0 : ++c.op_seq)) {
  eng.begin_op(o.api, sig.seq);
  algo = o.kind == OpKind::kSendRecv ? "p2p" : o.kind == OpKind::kBarrier ? "flat" : "pairwise";
}

bool Ctx::next_queued() {
  if (next_queued_ < 0) next_queued_ = comm.next_queued() ? 1 : 0;
  return next_queued_ == 1;
}

HcclResult Ctx::fail(HcclResult code, const std::string &what) {
  err.code = code;
  err.what = what;
  err.mismatch = false;
  return code;
}

HcclResult Ctx::failed(HcclResult rc) {
  if (err.timeout && sig.seq != 0) {
    // Who is behind: what the peer last sent, against where this rank is.
    const OpSig &seen = err.last_seen;
    std::string where = seen.seq == 0 && seen.kind == 0
                            ? "no message from it yet"
                            : "its last message was of collective #" + std::to_string(seen.seq) + " (" +
                                  describe(seen) + ")";
    err.what += "; rank " + std::to_string(err.peer) + ": " + where + ", this rank is at collective #" +
                std::to_string(sig.seq) + " (" + describe(sig) + ")";
    // Behind, with other communicators about: the classic cause is two of them
    // used in opposite orders, each rank blocked in the one the other is not in.
    // On one host that is told at once (transport/order.cc); a peer on another
    // host cannot be seen, so say what to check.
    const size_t comms = comm.live_comms ? comm.live_comms() : 1;
    if (seen.seq < sig.seq && comms > 1)
      err.what += "; it waits in communicator " + comm.name + " (one of " + std::to_string(comms) +
                  " in this process): ranks that call communicators' collectives in different "
                  "orders deadlock; if rank " + std::to_string(err.peer) +
                  " is blocked in another one, use one order on every rank";
  } else if (err.mismatch) {
    err.what = mismatch_text(err);
  } else if (err.size_mismatch && es > 0) {
    // The signatures agree, the sizes do not: counts that only one side knows.
    const std::string peer = "rank " + std::to_string(err.peer);
    if (op.kind == OpKind::kAlltoAllV || op.kind == OpKind::kAlltoAll)
      err.what = peer + " sends " + std::to_string(err.got_bytes / es) +
                 " elements to this rank but recvCounts[" + std::to_string(err.peer) + "] is " +
                 std::to_string(err.want_bytes / es);
    else if (op.kind == OpKind::kAllGatherV)
      err.what = peer + " sent " + std::to_string(err.got_bytes / es) + " elements but recvCounts[" +
                 std::to_string(err.peer) + "] is " + std::to_string(err.want_bytes / es);
    else if (op.kind == OpKind::kSendRecv)
      err.what = peer + " sent " + std::to_string(err.got_bytes) + " bytes, this rank expected " +
                 std::to_string(err.want_bytes);
  }
  return rc;
}

Batch::Batch(Ctx &x) : sig(x.sig), dtype(x.op.dtype), elem(x.es > 0 ? x.es : 1), x_(x) {
  // Messages hold whole elements (a multiple of 64 bytes covers every size).
  chunk_ = static_cast<size_t>(x.comm.tuning.chunk_bytes) / 64 * 64;
  if (chunk_ < 64) chunk_ = 64;
}

const Region *Batch::add(Transfer::Kind kind, int peer, const char *src, char *dst, size_t bytes,
                         Dep dep, const Region *after, const char *tail, const MemDesc *shared) {
  regions_.emplace_back();
  Region *region = &regions_.back();
  size_t off = 0;
  do {
    size_t len = min_sz(chunk_, bytes - off);
    xfers_.emplace_back();
    Transfer &t = xfers_.back();
    t.kind = kind;
    t.peer = peer;
    t.src = src != nullptr ? src + off : nullptr;
    t.dst = dst != nullptr ? dst + off : nullptr;
    t.tail = tail != nullptr ? tail + off : nullptr;
    t.bytes = len;
    t.sig = sig;
    t.dtype = dtype;
    t.op = x_.op.op;
    t.elem = elem;
    if (dep.region != nullptr) {
      t.dep = dep.region;
      t.dep_off = dep.off + off;
    }
    t.after = after;
    if (shared != nullptr) {
      t.shared = *shared;
      t.shared.offset += off;
      t.shared.bytes = len;
    }
    region->add(&t);
    ptrs_.push_back(&t);
    off += len;
  } while (off < bytes);
  return region;
}

const Region *Batch::send(int peer, const void *src, size_t bytes, Dep dep, const Region *after) {
  return add(Transfer::kSend, peer, static_cast<const char *>(src), nullptr, bytes, dep, after);
}

const Region *Batch::send_stable(int peer, const SharedBuffer &buf, const void *src, size_t bytes, Dep dep) {
  if (buf.mem.fd < 0 || bytes < kSharedMinBytes) return send(peer, src, bytes, dep);
  MemDesc at = buf.mem;
  at.offset += static_cast<size_t>(static_cast<const char *>(src) - buf.base);
  return add(Transfer::kSend, peer, static_cast<const char *>(src), nullptr, bytes, dep, nullptr, nullptr,
             &at);
}

bool describe_device_memory(const void *p, size_t bytes, MemDesc *d) {
  *d = MemDesc{};
  if (p == nullptr || bytes == 0) return true;
  hostrt::MemRegion r;
  if (hostrt::locate_memory(p, bytes, &r, nullptr) != hostrt::MemKind::kDevice || r.fd < 0) return false;
  struct stat st;
  if (fstat(r.fd, &st) != 0) return false;
  d->fd = r.fd;
  d->ino = static_cast<uint64_t>(st.st_ino);
  d->file_size = r.file_size;
  d->offset = r.offset;
  d->bytes = bytes;
  return true;
}

SharedBuffer::SharedBuffer(const void *p, size_t bytes) : base(static_cast<const char *>(p)) {
  describe_device_memory(p, bytes, &mem);  // fd stays -1 where it is not device memory
}

const Region *Batch::recv(int peer, void *dst, size_t bytes) {
  return add(Transfer::kRecv, peer, nullptr, static_cast<char *>(dst), bytes, Dep{});
}

void Batch::recv_header_later(int peer) {
  add(Transfer::kRecv, peer, nullptr, nullptr, 0, Dep{});
  xfers_.back().later = true;
}

void Batch::send_header(int peer) {
  add(Transfer::kSend, peer, nullptr, nullptr, 0, Dep{});
  xfers_.back().lazy = x_.next_queued();
}

const Region *Batch::recv_reduce(int peer, const void *src, void *dst, size_t bytes, Dep dep,
                                 const void *tail) {
  return add(Transfer::kRecvReduce, peer, static_cast<const char *>(src), static_cast<char *>(dst),
             bytes, dep, nullptr, static_cast<const char *>(tail));
}

HcclResult Batch::run() {
  // Data sends the connection may hold back (Transfer::lazy): it decides which.
  if (one_way && !blocking_send && x_.next_queued())
    for (Transfer &t : xfers_)
      if (t.kind == Transfer::kSend && t.bytes > 0) t.lazy = true;
  HcclResult rc = x_.eng.run(ptrs_.data(), ptrs_.size(), &x_.err, blocking_send);
  ptrs_.clear();
  xfers_.clear();
  regions_.clear();
  return rc == HCCL_SUCCESS ? rc : x_.failed(rc);
}

Span split(size_t count, int parts, int i, size_t elem_bytes) {
  size_t align = elem_bytes >= 64 ? 1 : 64 / elem_bytes;
  size_t per = (count + parts - 1) / parts;
  per = (per + align - 1) / align * align;
  size_t lo = min_sz(per * i, count);
  return Span{lo, min_sz(lo + per, count)};
}

HcclResult exchange(Ctx &x, const void *mine, size_t bytes, void *out, bool copy_mine) {
  HcclResult rc;
  if (board_gather(x, mine, bytes, out, &rc)) return rc;
  Batch b(x);
  b.elem = 1;
  char *o = static_cast<char *>(out);
  for (int p = 0; p < x.n; ++p) {
    if (p == x.me) {
      if (copy_mine && bytes > 0 && o + p * bytes != mine) std::memcpy(o + p * bytes, mine, bytes);
      continue;
    }
    b.send(p, mine, bytes);
    b.recv(p, o + p * bytes, bytes);
  }
  return b.run();
}

HcclResult compare_signatures(Ctx &x) { return exchange(x, nullptr, 0, nullptr); }

}  // namespace hccl
