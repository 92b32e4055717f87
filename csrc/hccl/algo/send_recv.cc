// HcclSend / HcclRecv / HcclBatchSendRecv (and grouped sends and receives):
// one batch handed to the transport, which progresses all transfers together.
#include <vector>

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_send_recv(Ctx &x) {
  std::vector<P2pXfer> xfers;
  xfers.reserve(x.op.items.size());
  for (const P2pItem &it : x.op.items)
    xfers.push_back(P2pXfer{it.send, static_cast<int>(it.peer), it.buf,
                            static_cast<size_t>(it.count * dtype_size(it.dtype))});
  return x.tr.p2p(xfers.data(), xfers.size(), &x.err);
}

}  // namespace hccl
