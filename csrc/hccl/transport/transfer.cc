// Transfers, regions and message headers: the transport-independent parts.
#include <algorithm>
#include <cstring>

#include "hccl/transport/transport.h"

namespace hccl {

size_t Transfer::input_ready() const {
  if (dep == nullptr) return bytes;
  return std::min(bytes, dep->ready(dep_off));
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
  if (h.magic != kMsgMagic) {
    err->code = HCCL_E_INTERNAL;
    err->what = "garbled message from rank " + std::to_string(t.peer) + " (bad header)";
    return err->code;
  }
  if (h.sig != t.sig) {
    err->code = HCCL_E_PARA;
    err->mismatch = true;
    err->peer = t.peer;
    err->mine = t.sig;
    err->theirs = h.sig;
    err->what = "rank " + std::to_string(t.peer) + " called another operation";
    return err->code;
  }
  if (h.bytes != t.bytes) {
    err->code = HCCL_E_PARA;
    err->size_mismatch = true;
    err->peer = t.peer;
    err->mine = t.sig;
    err->got_bytes = h.bytes;
    err->want_bytes = t.bytes;
    err->what = "rank " + std::to_string(t.peer) + " sent " + std::to_string(h.bytes) +
                " bytes, this rank expected " + std::to_string(t.bytes);
    return err->code;
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
