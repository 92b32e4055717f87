// Transfers, regions and message headers: the transport-independent parts.
#include <algorithm>
#include <cstring>

#include "hccl/transport/transport.h"

namespace hccl {

size_t Transfer::input_ready() const {
  if (after != nullptr && !after->complete()) return 0;
  if (dep == nullptr) return bytes;
  return std::min(bytes, dep->ready(dep_off));
}

int Transfer::operands(size_t at, const void *received, const void *out[3]) const {
  int n = 0;
  if (src != nullptr) out[n++] = src + at;
  out[n++] = received;
  if (tail != nullptr) out[n++] = tail + at;
  return n;
}

size_t Region::ready(size_t off) const {
  size_t base = 0, got = 0;
  for (const Transfer *t : parts_) {
    size_t end = base + t->bytes;
    if (end > off) {
      size_t from = off > base ? off - base : 0;
      if (t->done > from) got += t->done - from;
      if (!t->complete) break;
    }
    base = end;
  }
  return got;
}

bool Region::complete() const {
  for (const Transfer *t : parts_)
    if (!t->complete) return false;
  return true;
}

size_t Region::bytes() const {
  size_t n = 0;
  for (const Transfer *t : parts_) n += t->bytes;
  return n;
}

MsgHeader make_header(const Transfer &t) {
  MsgHeader h{};
  h.magic = kMsgMagic;
  h.sig = t.sig;
  h.bytes = t.bytes;
  return h;
}

HcclResult check_header(const MsgHeader &h, const Transfer &t, WaitError *err) {
  // A garbled header names no peer: the fault may be this rank's as well.
  if (h.magic != kMsgMagic)
    return WaitError::corrupt(-1, "garbled message from rank " + std::to_string(t.peer) + " (bad header)")
        .into(err);
  if (h.sig != t.sig) return WaitError::sig_mismatch(t.peer, t.sig, h.sig).into(err);
  if (h.bytes != t.bytes) return WaitError::bytes_mismatch(t.peer, t.sig, h.bytes, t.bytes).into(err);
  return HCCL_SUCCESS;
}

}  // namespace hccl
