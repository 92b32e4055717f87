// Checks of the collectives of hccl/hccl.h with one count, and of PyhcclGather
// (hccl/hccl_host.h) (api/check_ops.h).
// Each packs the op first, so that the buffer checks pin into its pins.
#include "hccl/api/check_ops.h"
#include "hccl/api/checks.h"

namespace hccl {

HcclResult check_all_reduce(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, q.recv, q.count, q.dtype, q.op);
  size_t bytes;
  HCCL_TRY(check_reduction(q.dtype, q.op, q.api));
  HCCL_TRY(check_buffer(q.send, q.count, 1, q.dtype, q.api, "sendBuf", &bytes, &d.pins));
  if (q.recv != q.send) {  // in place: the same range, checked once
    HCCL_TRY(check_buffer(q.recv, q.count, 1, q.dtype, q.api, "recvBuf", &bytes, &d.pins));
    HCCL_TRY(check_overlap(q.api, "sendBuf", q.send, bytes, "recvBuf", q.recv, bytes, false,
                           "sendBuf == recvBuf"));
  }
  return HCCL_SUCCESS;
}

HcclResult check_broadcast(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, nullptr, q.recv, q.count, q.dtype);
  d.root = q.root;
  size_t bytes;
  HCCL_TRY(check_dtype(q.dtype, q.api));
  HCCL_TRY(check_rank(q.root, c->comm->nranks, q.api, "root"));
  return check_buffer(q.recv, q.count, 1, q.dtype, q.api, "buf", &bytes, &d.pins);
}

HcclResult check_all_gather(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, q.recv, q.count, q.dtype);
  const Comm &k = *c->comm;
  size_t sbytes, rbytes;
  HCCL_TRY(check_dtype(q.dtype, q.api));
  HCCL_TRY(check_buffer(q.send, q.count, 1, q.dtype, q.api, "sendBuf", &sbytes, &d.pins));
  HCCL_TRY(check_buffer(q.recv, q.count, k.nranks, q.dtype, q.api, "recvBuf", &rbytes, &d.pins));
  bool in_place = static_cast<const char *>(q.send) == static_cast<char *>(q.recv) + k.rank * sbytes;
  return check_overlap(q.api, "sendBuf", q.send, sbytes, "recvBuf", q.recv, rbytes, in_place,
                       "sendBuf == recvBuf + rank * sendCount elements");
}

HcclResult check_reduce_scatter(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, q.recv, q.count, q.dtype, q.op);
  const Comm &k = *c->comm;
  size_t sbytes, rbytes;
  HCCL_TRY(check_reduction(q.dtype, q.op, q.api));
  HCCL_TRY(check_buffer(q.send, q.count, k.nranks, q.dtype, q.api, "sendBuf", &sbytes, &d.pins));
  HCCL_TRY(check_buffer(q.recv, q.count, 1, q.dtype, q.api, "recvBuf", &rbytes, &d.pins));
  bool in_place = static_cast<char *>(q.recv) == static_cast<const char *>(q.send) + k.rank * rbytes;
  return check_overlap(q.api, "sendBuf", q.send, sbytes, "recvBuf", q.recv, rbytes, in_place,
                       "recvBuf == sendBuf + rank * recvCount elements");
}

HcclResult check_reduce(const OpRequest &q, CheckedOp *c) {
  const bool is_root = c->comm->rank == q.root;
  // recvBuf matters on the root only.
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, is_root ? q.recv : nullptr, q.count, q.dtype,
                             q.op, q.root);
  size_t bytes;
  HCCL_TRY(check_reduction(q.dtype, q.op, q.api));
  HCCL_TRY(check_rank(q.root, c->comm->nranks, q.api, "root"));
  HCCL_TRY(check_buffer(q.send, q.count, 1, q.dtype, q.api, "sendBuf", &bytes, &d.pins));
  if (is_root && q.recv != q.send) {
    HCCL_TRY(check_buffer(q.recv, q.count, 1, q.dtype, q.api, "recvBuf", &bytes, &d.pins));
    HCCL_TRY(check_overlap(q.api, "sendBuf", q.send, bytes, "recvBuf", q.recv, bytes, false,
                           "sendBuf == recvBuf"));
  }
  return HCCL_SUCCESS;
}

HcclResult check_scatter(const OpRequest &q, CheckedOp *c) {
  const Comm &k = *c->comm;
  const bool is_root = k.rank == q.root;
  // sendBuf matters on the root only.
  OpDesc &d = c->op = OpDesc(q.kind, q.api, is_root ? q.send : nullptr, q.recv, q.count, q.dtype);
  d.root = q.root;
  size_t sbytes = 0, rbytes;
  HCCL_TRY(check_dtype(q.dtype, q.api));
  HCCL_TRY(check_rank(q.root, k.nranks, q.api, "root"));
  HCCL_TRY(check_buffer(q.recv, q.count, 1, q.dtype, q.api, "recvBuf", &rbytes, &d.pins));
  if (!is_root) return HCCL_SUCCESS;
  HCCL_TRY(check_buffer(q.send, q.count, k.nranks, q.dtype, q.api, "sendBuf", &sbytes, &d.pins));
  bool in_place = static_cast<char *>(q.recv) == static_cast<const char *>(q.send) + q.root * rbytes;
  return check_overlap(q.api, "sendBuf", q.send, sbytes, "recvBuf", q.recv, rbytes, in_place,
                       "recvBuf == sendBuf + root * recvCount elements");
}

HcclResult check_gather(const OpRequest &q, CheckedOp *c) {
  const Comm &k = *c->comm;
  const bool is_root = k.rank == q.root;
  // recvBuf matters on the root only.
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, is_root ? q.recv : nullptr, q.count, q.dtype);
  d.root = q.root;
  size_t sbytes, rbytes = 0;
  HCCL_TRY(check_dtype(q.dtype, q.api));
  HCCL_TRY(check_rank(q.root, k.nranks, q.api, "root"));
  HCCL_TRY(check_buffer(q.send, q.count, 1, q.dtype, q.api, "sendBuf", &sbytes, &d.pins));
  if (!is_root) return HCCL_SUCCESS;
  HCCL_TRY(check_buffer(q.recv, q.count, k.nranks, q.dtype, q.api, "recvBuf", &rbytes, &d.pins));
  bool in_place = static_cast<const char *>(q.send) == static_cast<char *>(q.recv) + q.root * sbytes;
  return check_overlap(q.api, "sendBuf", q.send, sbytes, "recvBuf", q.recv, rbytes, in_place,
                       "sendBuf == recvBuf + root * sendCount elements");
}

}  // namespace hccl
