// HcclSend / HcclRecv / HcclBatchSendRecv (and grouped sends and receives):
// one batch, progressed together, so that pairs of them cannot deadlock.
// Each message carries its item's count and dtype; the receiver checks both.
// A send completes once its receiver took all but the last channel's worth of
// it: a cycle of sends issued one by one, each before its rank's receive, is
// a deadlock for messages larger than the channel; the engine reports it on
// one host (Engine::run, blocking_send).
#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_send_recv(Ctx &x) {
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
