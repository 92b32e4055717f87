// Point-to-point entry points and groups. A send completes once its data is
// in the pair's channel (small messages do not wait for the receiver); use
// HcclBatchSendRecv or a group for exchanges that must progress together.
// Each call packs its arguments into an OpRequest, checked
// (api/check_p2p.cc) and enqueued by hccl::submit; the group state lives in
// comm/enqueue.h.
#include "hccl/api/checks.h"
#include "hccl/api/request.h"
#include "hccl/comm/enqueue.h"
#include "hccl/hccl.h"

using hccl::OpKind;
using hccl::OpRequest;

namespace {

HcclResult p2p_one(OpRequest::Form form, void *buf, uint64_t count, HcclDataType dt,
                   uint32_t peer, HcclComm comm, aclrtStream stream, const char *api) {
  OpRequest q(OpKind::kSendRecv, api, comm, stream);
  q.form = form;
  if (form == OpRequest::Form::kSend) {
    q.send = buf;
  } else {
    q.recv = buf;
  }
  q.count = count;
  q.dtype = dt;
  q.root = peer;
  return hccl::submit(q);
}

}  // namespace

extern "C" {

HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                    HcclComm comm, aclrtStream stream) {
  return p2p_one(OpRequest::Form::kSend, sendBuf, count, dataType, destRank, comm, stream,
                 "HcclSend");
}

HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                    HcclComm comm, aclrtStream stream) {
  return p2p_one(OpRequest::Form::kRecv, recvBuf, count, dataType, srcRank, comm, stream,
                 "HcclRecv");
}

HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                             aclrtStream stream) {
  OpRequest q(OpKind::kSendRecv, "HcclBatchSendRecv", comm, stream);
  q.form = OpRequest::Form::kItems;
  q.items = sendRecvInfo;
  q.item_num = itemNum;
  return hccl::submit(q);
}

HcclResult HcclGroupStart(void) { return hccl::group_start(); }

HcclResult HcclGroupEnd(void) { return hccl::group_end(); }

HcclResult HcclGroupStatusGet(bool *isGroupEnabled) {
  HCCL_TRY(hccl::check_ptr(isGroupEnabled, "HcclGroupStatusGet", "isGroupEnabled"));
  *isGroupEnabled = hccl::group_active();
  return HCCL_SUCCESS;
}

}  // extern "C"
