// WaitError's named constructors (transport.h): each kind of failure is
// filled in one place, so that its code and the fields the algorithm layer
// reads (mismatch, timeout, culprit, ...) always come together.
#include <utility>

#include "hccl/transport/transport.h"

namespace hccl {

WaitError WaitError::failure(HcclResult code, int peer, std::string what) {
  WaitError e;
  e.code = code;
  e.peer = peer;
  e.what = std::move(what);
  return e;
}

WaitError WaitError::timed_out(int peer, std::string what, const OpSig &last_seen) {
  WaitError e = failure(HCCL_E_TIMEOUT, peer, std::move(what));
  e.timeout = true;
  e.last_seen = last_seen;
  return e;
}

WaitError WaitError::peer_failed(HcclResult code, int peer, int culprit, uint64_t failed_seq,
                                 std::string what) {
  WaitError e = failure(code, peer, std::move(what));
  e.culprit = culprit;
  e.failed_seq = failed_seq;
  return e;
}

WaitError WaitError::closed(int peer, std::string what) {
  return failure(HCCL_E_REMOTE, peer, std::move(what));
}

WaitError WaitError::corrupt(int peer, std::string what, HcclResult code) {
  return failure(code, peer, std::move(what));
}

WaitError WaitError::deadlock(int peer, std::string what, uint64_t order_comm, bool order_notify) {
  WaitError e = failure(HCCL_E_INTERNAL, peer, std::move(what));
  e.order_comm = order_comm;
  e.order_notify = order_notify;
  return e;
}

WaitError WaitError::sig_mismatch(int peer, const OpSig &mine, const OpSig &theirs) {
  WaitError e = failure(HCCL_E_PARA, peer, "rank " + std::to_string(peer) + " called another operation");
  e.mismatch = true;
  e.mine = mine;
  e.theirs = theirs;
  return e;
}

WaitError WaitError::bytes_mismatch(int peer, const OpSig &mine, uint64_t got, uint64_t want) {
  WaitError e = failure(HCCL_E_PARA, peer,
                        "rank " + std::to_string(peer) + " sent " + std::to_string(got) +
                            " bytes, this rank expected " + std::to_string(want));
  e.size_mismatch = true;
  e.mine = mine;
  e.got_bytes = got;
  e.want_bytes = want;
  return e;
}

WaitError WaitError::interrupted(HcclResult code, std::string why) {
  return failure(code, -1, std::move(why));
}

WaitError WaitError::internal(std::string what) {
  return failure(HCCL_E_INTERNAL, -1, std::move(what));
}

}  // namespace hccl
