// HcclSend / HcclRecv / HcclBatchSendRecv (and grouped sends and receives):
// one batch, progressed together, so that pairs of them cannot deadlock.
// Each message carries its item's count and dtype; the receiver checks both.
#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_send_recv(Ctx &x) {
  Batch b(x);
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
