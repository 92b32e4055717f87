#include "hccl/api/request.h"

#include "hccl/api/check_ops.h"
#include "hccl/api/checks.h"
#include "hccl/comm/enqueue.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

// Fills *c from req; when a check refuses it, *c is half built (pins
// included) and the caller drops it.
HcclResult check_into(const OpRequest &req, CheckedOp *c) {
  c->stream = req.stream;
  HCCL_TRY(check_comm(req.comm, req.api, &c->comm));
  switch (req.kind) {
    case OpKind::kAllReduce: return check_all_reduce(req, c);
    case OpKind::kBroadcast: return check_broadcast(req, c);
    case OpKind::kAllGather: return check_all_gather(req, c);
    case OpKind::kReduceScatter: return check_reduce_scatter(req, c);
    case OpKind::kReduce: return check_reduce(req, c);
    case OpKind::kScatter: return check_scatter(req, c);
    case OpKind::kGather: return check_gather(req, c);
    case OpKind::kBarrier: c->op = OpDesc(req.kind, req.api); return HCCL_SUCCESS;
    case OpKind::kAlltoAll: return check_all_to_all(req, c);
    case OpKind::kAlltoAllV: return check_all_to_all_v(req, c);
    case OpKind::kAllGatherV: return check_all_gather_v(req, c);
    case OpKind::kReduceScatterV: return check_reduce_scatter_v(req, c);
    case OpKind::kSendRecv: return check_send_recv(req, c);
    default:  // host calls (comm/host_call.h) are not requests
      return HCCL_FAIL(HCCL_E_INTERNAL, "%s: operation kind %d has no argument checks", req.api,
                       static_cast<int>(req.kind));
  }
}

}  // namespace

HcclResult check(const OpRequest &req, CheckedOp *out) {
  CheckedOp c;  // moved out only when every check passed
  HCCL_TRY(check_into(req, &c));
  *out = std::move(c);
  return HCCL_SUCCESS;
}

HcclResult enqueue(CheckedOp &&op) {
  // The op (and its pins) move on, whatever the outcome.
  return comm_enqueue(op.comm, op.stream, std::move(op.op));
}

HcclResult submit(const OpRequest &req) {
  CheckedOp c;  // a refused request's pins go with it, on return
  HCCL_TRY(check_into(req, &c));
  return enqueue(std::move(c));
}

}  // namespace hccl
