// HcclSend / HcclRecv / HcclBatchSendRecv (and grouped sends and receives):
// one batch, progressed together, so that pairs of them cannot deadlock.
// Each message carries its item's count and dtype; the receiver checks both.
// A send completes once its receiver took all but the last channel's worth of
// it: a cycle of sends issued one by one, each before its rank's receive, is
// a deadlock for messages larger than the channel; the engine reports it on
// one host (Engine::run, blocking_send).
#include "hccl/algo/algorithms.h"

namespace hccl {

HcclResult run_send_recv(Ctx &x) {
  // A message to this rank itself is matched only inside its batch: a send or
  // receive whose twin is a later call could never complete (the smallest
  // ring), so it fails now instead of at the exec timeout.
  int self_sends = 0, self_recvs = 0;
  for (const P2pItem &it : x.op.items)
    if (static_cast<int>(it.peer) == x.me) ++(it.send ? self_sends : self_recvs);
  if (self_sends != self_recvs)
    return x.fail(HCCL_E_PARA,
                  std::string(self_sends > self_recvs ? "send to" : "receive from") +
                      " this rank itself (" + std::to_string(x.me) +
                      ") cannot complete: a message to oneself is matched only within one call, "
                      "deadlock; post the send and its receive together in "
                      "HcclGroupStart/HcclGroupEnd (pyhccl.group()) or HcclBatchSendRecv");
  Batch b(x);
  // Sends without a receive cannot be part of a cycle that progresses: the
  // engine watches them for a deadlock (a ring of blocking HcclSend calls).
  b.blocking_send = !x.op.items.empty();
  for (const P2pItem &it : x.op.items) b.blocking_send &= it.send;
  for (const P2pItem &it : x.op.items) {
    b.sig.count = it.count;
    b.sig.dtype = static_cast<uint32_t>(it.dtype);
    b.dtype = it.dtype;
    b.elem = dtype_size(it.dtype);
    const size_t bytes = static_cast<size_t>(it.count * b.elem);
    if (it.send)
      b.send(static_cast<int>(it.peer), it.buf, bytes);
    else
      b.recv(static_cast<int>(it.peer), it.buf, bytes);
  }
  return b.run();
}

}  // namespace hccl
