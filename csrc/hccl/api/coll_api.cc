// Collective entry points (hccl/hccl.h): check, pack, enqueue.
#include "hccl/api/checks.h"
#include "hccl/api/enqueue.h"
#include "hccl/hccl.h"
#include "hccl/reduce/reduce.h"

using hccl::Comm;
using hccl::OpDesc;
using hccl::OpKind;

extern "C" {

HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                         HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char *api = "HcclAllReduce";
  std::shared_ptr<Comm> c;
  size_t bytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_reduction(dataType, op, api));
  HCCL_TRY(hccl::check_buffer(sendBuf, count, 1, dataType, api, "sendBuf", &bytes));
  if (recvBuf != sendBuf) {  // in place: the same range, checked once
    HCCL_TRY(hccl::check_buffer(recvBuf, count, 1, dataType, api, "recvBuf", &bytes));
    HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, bytes, "recvBuf", recvBuf, bytes,
                                 false, "sendBuf == recvBuf"));
  }
  return hccl::enqueue_op(c, stream,
                          OpDesc(OpKind::kAllReduce, api, sendBuf, recvBuf, count, dataType, op));
}

HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root,
                         HcclComm comm, aclrtStream stream) {
  const char *api = "HcclBroadcast";
  std::shared_ptr<Comm> c;
  size_t bytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_dtype(dataType, api));
  HCCL_TRY(hccl::check_rank(root, c->nranks, api, "root"));
  HCCL_TRY(hccl::check_buffer(buf, count, 1, dataType, api, "buf", &bytes));
  OpDesc d(OpKind::kBroadcast, api, nullptr, buf, count, dataType);
  d.root = root;
  return hccl::enqueue_op(c, stream, std::move(d));
}

HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
                         HcclComm comm, aclrtStream stream) {
  const char *api = "HcclAllGather";
  std::shared_ptr<Comm> c;
  size_t sbytes, rbytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_dtype(dataType, api));
  HCCL_TRY(hccl::check_buffer(sendBuf, sendCount, 1, dataType, api, "sendBuf", &sbytes));
  HCCL_TRY(hccl::check_buffer(recvBuf, sendCount, c->nranks, dataType, api, "recvBuf", &rbytes));
  bool in_place = static_cast<char *>(sendBuf) == static_cast<char *>(recvBuf) + c->rank * sbytes;
  HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, sbytes, "recvBuf", recvBuf, rbytes,
                               in_place, "sendBuf == recvBuf + rank * sendCount elements"));
  return hccl::enqueue_op(c, stream,
                          OpDesc(OpKind::kAllGather, api, sendBuf, recvBuf, sendCount, dataType));
}

HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                             HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                             aclrtStream stream) {
  const char *api = "HcclReduceScatter";
  std::shared_ptr<Comm> c;
  size_t sbytes, rbytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_reduction(dataType, op, api));
  HCCL_TRY(hccl::check_buffer(sendBuf, recvCount, c->nranks, dataType, api, "sendBuf", &sbytes));
  HCCL_TRY(hccl::check_buffer(recvBuf, recvCount, 1, dataType, api, "recvBuf", &rbytes));
  bool in_place = static_cast<char *>(recvBuf) == static_cast<char *>(sendBuf) + c->rank * rbytes;
  HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, sbytes, "recvBuf", recvBuf, rbytes,
                               in_place, "recvBuf == sendBuf + rank * recvCount elements"));
  return hccl::enqueue_op(
      c, stream, OpDesc(OpKind::kReduceScatter, api, sendBuf, recvBuf, recvCount, dataType, op));
}

HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                      HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream) {
  const char *api = "HcclReduce";
  std::shared_ptr<Comm> c;
  size_t bytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_reduction(dataType, op, api));
  HCCL_TRY(hccl::check_rank(root, c->nranks, api, "root"));
  HCCL_TRY(hccl::check_buffer(sendBuf, count, 1, dataType, api, "sendBuf", &bytes));
  // recvBuf matters on the root only.
  if (c->rank == root && recvBuf != sendBuf) {
    HCCL_TRY(hccl::check_buffer(recvBuf, count, 1, dataType, api, "recvBuf", &bytes));
    HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, bytes, "recvBuf", recvBuf, bytes,
                                 false, "sendBuf == recvBuf"));
  }
  return hccl::enqueue_op(c, stream,
                          OpDesc(OpKind::kReduce, api, sendBuf, c->rank == root ? recvBuf : nullptr,
                                 count, dataType, op, root));
}

HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                       uint32_t root, HcclComm comm, aclrtStream stream) {
  const char *api = "HcclScatter";
  std::shared_ptr<Comm> c;
  size_t sbytes = 0, rbytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_dtype(dataType, api));
  HCCL_TRY(hccl::check_rank(root, c->nranks, api, "root"));
  HCCL_TRY(hccl::check_buffer(recvBuf, recvCount, 1, dataType, api, "recvBuf", &rbytes));
  // sendBuf matters on the root only.
  if (c->rank == root) {
    HCCL_TRY(hccl::check_buffer(sendBuf, recvCount, c->nranks, dataType, api, "sendBuf", &sbytes));
    bool in_place = static_cast<char *>(recvBuf) == static_cast<char *>(sendBuf) + root * rbytes;
    HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, sbytes, "recvBuf", recvBuf, rbytes,
                                 in_place, "recvBuf == sendBuf + root * recvCount elements"));
  }
  OpDesc d(OpKind::kScatter, api, c->rank == root ? sendBuf : nullptr, recvBuf, recvCount,
           dataType);
  d.root = root;
  return hccl::enqueue_op(c, stream, std::move(d));
}

HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  const char *api = "HcclBarrier";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  return hccl::enqueue_op(c, stream, OpDesc(OpKind::kBarrier, api));
}

}  // extern "C"
