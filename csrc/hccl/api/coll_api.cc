// Collective entry points (hccl/hccl.h): each packs its arguments into an
// OpRequest, checked (api/check_coll.cc) and enqueued by hccl::submit.
#include "hccl/api/request.h"
#include "hccl/hccl.h"

using hccl::OpKind;
using hccl::OpRequest;

extern "C" {

HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                         HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kAllReduce, "HcclAllReduce", comm, stream);
  q.send = sendBuf;
  q.recv = recvBuf;
  q.count = count;
  q.dtype = dataType;
  q.op = op;
  return hccl::submit(q);
}

HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root,
                         HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kBroadcast, "HcclBroadcast", comm, stream);
  q.recv = buf;
  q.count = count;
  q.dtype = dataType;
  q.root = root;
  return hccl::submit(q);
}

HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
                         HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kAllGather, "HcclAllGather", comm, stream);
  q.send = sendBuf;
  q.recv = recvBuf;
  q.count = sendCount;
  q.dtype = dataType;
  return hccl::submit(q);
}

HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                             HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                             aclrtStream stream) {
  OpRequest q(OpKind::kReduceScatter, "HcclReduceScatter", comm, stream);
  q.send = sendBuf;
  q.recv = recvBuf;
  q.count = recvCount;
  q.dtype = dataType;
  q.op = op;
  return hccl::submit(q);
}

HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                      HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kReduce, "HcclReduce", comm, stream);
  q.send = sendBuf;
  q.recv = recvBuf;
  q.count = count;
  q.dtype = dataType;
  q.op = op;
  q.root = root;
  return hccl::submit(q);
}

HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                       uint32_t root, HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kScatter, "HcclScatter", comm, stream);
  q.send = sendBuf;
  q.recv = recvBuf;
  q.count = recvCount;
  q.dtype = dataType;
  q.root = root;
  return hccl::submit(q);
}

// A pyhccl extension (hccl/hccl_host.h): Scatter's mirror image.
HcclResult PyhcclGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
                        uint32_t root, HcclComm comm, aclrtStream stream) {
  OpRequest q(OpKind::kGather, "PyhcclGather", comm, stream);
  q.send = sendBuf;
  q.recv = recvBuf;
  q.count = sendCount;
  q.dtype = dataType;
  q.root = root;
  return hccl::submit(q);
}

HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  return hccl::submit(OpRequest(OpKind::kBarrier, "HcclBarrier", comm, stream));
}

}  // extern "C"
