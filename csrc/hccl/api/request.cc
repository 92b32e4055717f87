#include "hccl/api/request.h"

#include "hccl/api/check_ops.h"
#include "hccl/api/checks.h"
#include "hccl/comm/enqueue.h"
#include "hccl/fail.h"

namespace hccl {

HcclResult check(const OpRequest &req, CheckedOp *out) {
  // Built here and moved out only when every check passed: a refused
  // request's pins go with it.
  CheckedOp c;
  c.stream = req.stream;
  HCCL_TRY(check_comm(req.comm, req.api, &c.comm));
  HcclResult r;
  switch (req.kind) {
    case OpKind::kAllReduce: r = check_all_reduce(req, &c); break;
    case OpKind::kBroadcast: r = check_broadcast(req, &c); break;
    case OpKind::kAllGather: r = check_all_gather(req, &c); break;
    case OpKind::kReduceScatter: r = check_reduce_scatter(req, &c); break;
    case OpKind::kReduce: r = check_reduce(req, &c); break;
    case OpKind::kScatter: r = check_scatter(req, &c); break;
    case OpKind::kBarrier: c.op = OpDesc(req.kind, req.api); r = HCCL_SUCCESS; break;
    case OpKind::kAlltoAll: r = check_all_to_all(req, &c); break;
    case OpKind::kAlltoAllV: r = check_all_to_all_v(req, &c); break;
    case OpKind::kAllGatherV: r = check_all_gather_v(req, &c); break;
    case OpKind::kReduceScatterV: r = check_reduce_scatter_v(req, &c); break;
    case OpKind::kSendRecv: r = check_send_recv(req, &c); break;
    default:  // host calls (comm/host_call.h) are not requests
      return HCCL_FAIL(HCCL_E_INTERNAL, "%s: operation kind %d has no argument checks", req.api,
                       static_cast<int>(req.kind));
  }
  if (r != HCCL_SUCCESS) return r;
  *out = std::move(c);
  return HCCL_SUCCESS;
}

HcclResult enqueue(CheckedOp &&op) {
  CheckedOp c = std::move(op);  // consumed, whatever the outcome
  return comm_enqueue(c.comm, c.stream, std::move(c.op));
}

HcclResult submit(const OpRequest &req) {
  CheckedOp c;
  HCCL_TRY(check(req, &c));
  return enqueue(std::move(c));
}

}  // namespace hccl
