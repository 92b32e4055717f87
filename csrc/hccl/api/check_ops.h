// The checks of each operation (api/request.h's check() dispatches to them).
// Each reads a request whose communicator is already looked up into c->comm,
// and packs c->op (its pins included), or returns the error of the first
// argument that fails.
#pragma once

#include "hccl/api/request.h"

namespace hccl {

// check_coll.cc
HcclResult check_all_reduce(const OpRequest &q, CheckedOp *c);
HcclResult check_broadcast(const OpRequest &q, CheckedOp *c);
HcclResult check_all_gather(const OpRequest &q, CheckedOp *c);
HcclResult check_reduce_scatter(const OpRequest &q, CheckedOp *c);
HcclResult check_reduce(const OpRequest &q, CheckedOp *c);
HcclResult check_scatter(const OpRequest &q, CheckedOp *c);
HcclResult check_gather(const OpRequest &q, CheckedOp *c);
// check_v.cc: the AlltoAll family and the V variants
HcclResult check_all_to_all(const OpRequest &q, CheckedOp *c);
HcclResult check_all_to_all_v(const OpRequest &q, CheckedOp *c);  // and AlltoAllVC
HcclResult check_all_gather_v(const OpRequest &q, CheckedOp *c);
HcclResult check_reduce_scatter_v(const OpRequest &q, CheckedOp *c);
// check_p2p.cc: HcclSend, HcclRecv, HcclBatchSendRecv
HcclResult check_send_recv(const OpRequest &q, CheckedOp *c);

}  // namespace hccl
