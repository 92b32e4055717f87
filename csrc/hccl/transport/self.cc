// The loopback connection (self.h): a rank's sends to itself meet its
// receives here, whole messages at a time, checked like any other.
#include "hccl/transport/self.h"

#include <cstring>

#include "hccl/reduce/reduce.h"

namespace hccl {

HcclResult SelfConnection::progress(bool *moved, WaitError *err) {
  *moved = false;
  while (!sends_.empty() && !recvs_.empty()) {
    Transfer *s = sends_.front(), *r = recvs_.front();
    // Whole messages only: both inputs must be ready.
    if (s->input_ready() < s->bytes) return HCCL_SUCCESS;
    if (r->kind == Transfer::kRecvReduce && r->input_ready() < r->bytes) return HCCL_SUCCESS;
    last_seen_ = s->sig;
    HcclResult rc = check_header(make_header(*s), *r, err);
    if (rc != HCCL_SUCCESS) return rc;
    if (r->kind == Transfer::kRecvReduce) {
      const void *srcs[3];
      const int n = r->operands(0, s->src, srcs);
      if (r->bytes > 0) reduce(r->dtype, r->op, r->dst, srcs, n, r->bytes / r->elem);
    } else if (r->bytes > 0 && r->dst != s->src) {
      std::memmove(r->dst, s->src, r->bytes);
    }
    s->done = s->bytes;
    r->done = r->bytes;
    s->started = r->started = true;
    s->complete = r->complete = true;
    sends_.pop_front();
    recvs_.pop_front();
    *moved = true;
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
