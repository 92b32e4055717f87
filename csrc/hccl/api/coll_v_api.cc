// AlltoAll family and the V variants: each packs its arguments into an
// OpRequest, checked (api/check_v.cc) and enqueued by hccl::submit.
#include "hccl/api/request.h"
#include "hccl/hccl.h"

using hccl::OpKind;
using hccl::OpRequest;

extern "C" {

HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                        const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                        HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kAlltoAll, "HcclAlltoAll", comm, stream);
  q.send = sendBuf;
  q.count = sendCount;
  q.dtype = sendType;
  q.recv = const_cast<void *>(recvBuf);
  q.recv_count = recvCount;
  q.recv_type = recvType;
  return hccl::submit(q);
}

HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                         HcclDataType sendType, const void *recvBuf, const void *recvCounts,
                         const void *rdispls, HcclDataType recvType, HcclComm comm,
                         aclrtStream stream) {
  OpRequest q(OpKind::kAlltoAllV, "HcclAlltoAllV", comm, stream);
  q.send = sendBuf;
  q.send_counts = sendCounts;
  q.send_displs = sdispls;
  q.dtype = sendType;
  q.recv = const_cast<void *>(recvBuf);
  q.recv_counts = recvCounts;
  q.recv_displs = rdispls;
  q.recv_type = recvType;
  return hccl::submit(q);
}

HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix, HcclDataType sendType,
                          const void *recvBuf, HcclDataType recvType, HcclComm comm,
                          aclrtStream stream) {
  OpRequest q(OpKind::kAlltoAllV, "HcclAlltoAllVC", comm, stream);
  q.form = OpRequest::Form::kCountMatrix;
  q.send = sendBuf;
  q.count_matrix = sendCountMatrix;
  q.dtype = sendType;
  q.recv = const_cast<void *>(recvBuf);
  q.recv_type = recvType;
  return hccl::submit(q);
}

HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf, const void *recvCounts,
                          const void *recvDispls, HcclDataType dataType, HcclComm comm,
                          aclrtStream stream) {
  OpRequest q(OpKind::kAllGatherV, "HcclAllGatherV", comm, stream);
  q.send = sendBuf;
  q.count = sendCount;
  q.recv = recvBuf;
  q.recv_counts = recvCounts;
  q.recv_displs = recvDispls;
  q.dtype = dataType;
  return hccl::submit(q);
}

HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls,
                              void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                              HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kReduceScatterV, "HcclReduceScatterV", comm, stream);
  q.send = sendBuf;
  q.send_counts = sendCounts;
  q.send_displs = sendDispls;
  q.recv = recvBuf;
  q.count = recvCount;
  q.dtype = dataType;
  q.op = op;
  return hccl::submit(q);
}

}  // extern "C"
