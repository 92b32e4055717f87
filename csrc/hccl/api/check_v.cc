// Checks of the AlltoAll family and the V variants (api/check_ops.h). Count
// and displacement arrays are uint64_t[nRanks] (declared const void * by
// HCCL) and are copied into the op here.
#include "hccl/api/check_ops.h"
#include "hccl/api/checks.h"
#include "hccl/fail.h"
#include "hccl/reduce/reduce.h"

namespace hccl {
namespace {

HcclResult check_same_type(HcclDataType s, HcclDataType r, const char *api) {
  HCCL_TRY(check_dtype(s, api, "sendType"));
  HCCL_TRY(check_dtype(r, api, "recvType"));
  if (s != r) {
    return HCCL_FAIL(HCCL_E_NOT_SUPPORT, "%s: sendType %s differs from recvType %s", api, dtype_name(s),
                                         dtype_name(r));
  }
  return HCCL_SUCCESS;
}

// AlltoAllVC: this rank's counts and displacements from the count matrix.
HcclResult read_count_matrix(const OpRequest &q, uint32_t n, uint32_t me, OpDesc *d) {
  HCCL_TRY(check_ptr(q.count_matrix, q.api, "sendCountMatrix"));
  const uint64_t *m = static_cast<const uint64_t *>(q.count_matrix);  // row = sender
  uint64_t soff = 0, roff = 0;
  for (uint32_t p = 0; p < n; ++p) {
    d->send_counts.push_back(m[me * n + p]);
    d->send_displs.push_back(soff);
    d->recv_counts.push_back(m[p * n + me]);
    d->recv_displs.push_back(roff);
    if (__builtin_add_overflow(soff, m[me * n + p], &soff) ||
        __builtin_add_overflow(roff, m[p * n + me], &roff)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: sendCountMatrix counts are too large", q.api);
    }
  }
  return HCCL_SUCCESS;
}

}  // namespace

HcclResult check_all_to_all(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, q.recv, q.count, q.dtype);
  const uint32_t n = c->comm->nranks;
  size_t sbytes, rbytes;
  HCCL_TRY(check_same_type(q.dtype, q.recv_type, q.api));
  if (q.count != q.recv_count) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: sendCount (%llu) differs from recvCount (%llu)", q.api,
                                  static_cast<unsigned long long>(q.count),
                                  static_cast<unsigned long long>(q.recv_count));
  }
  HCCL_TRY(check_buffer(q.send, q.count, n, q.dtype, q.api, "sendBuf", &sbytes, &d.pins));
  HCCL_TRY(check_buffer(q.recv, q.recv_count, n, q.recv_type, q.api, "recvBuf", &rbytes, &d.pins));
  HCCL_TRY(check_overlap(q.api, "sendBuf", q.send, sbytes, "recvBuf", q.recv, rbytes,
                         q.send == q.recv, "sendBuf == recvBuf"));
  d.send_counts.assign(n, q.count);
  d.recv_counts.assign(n, q.count);
  for (uint32_t p = 0; p < n; ++p) {
    d.send_displs.push_back(p * q.count);
    d.recv_displs.push_back(p * q.count);
  }
  return HCCL_SUCCESS;
}

HcclResult check_all_to_all_v(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, q.recv, 0, q.dtype);
  const uint32_t n = c->comm->nranks;
  HCCL_TRY(check_same_type(q.dtype, q.recv_type, q.api));
  if (q.form == OpRequest::Form::kCountMatrix) {
    HCCL_TRY(read_count_matrix(q, n, c->comm->rank, &d));
  } else {
    HCCL_TRY(read_counts(q.send_counts, n, q.api, "sendCounts", &d.send_counts));
    HCCL_TRY(read_counts(q.send_displs, n, q.api, "sdispls", &d.send_displs));
    HCCL_TRY(read_counts(q.recv_counts, n, q.api, "recvCounts", &d.recv_counts));
    HCCL_TRY(read_counts(q.recv_displs, n, q.api, "rdispls", &d.recv_displs));
  }
  size_t sbytes, rbytes;
  HCCL_TRY(check_extent(d.send, d.send_counts, d.send_displs, d.dtype, q.api, "sendBuf", &sbytes,
                        &d.pins));
  HCCL_TRY(check_extent(d.recv, d.recv_counts, d.recv_displs, d.dtype, q.api, "recvBuf", &rbytes,
                        &d.pins));
  return check_overlap(q.api, "sendBuf", d.send, sbytes, "recvBuf", d.recv, rbytes, false,
                       "the V variants have no in-place form");
}

HcclResult check_all_gather_v(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, q.recv, q.count, q.dtype);
  const Comm &k = *c->comm;
  size_t sbytes, rbytes;
  HCCL_TRY(check_dtype(q.dtype, q.api));
  HCCL_TRY(read_counts(q.recv_counts, k.nranks, q.api, "recvCounts", &d.recv_counts));
  HCCL_TRY(read_counts(q.recv_displs, k.nranks, q.api, "recvDispls", &d.recv_displs));
  if (d.recv_counts[k.rank] != q.count) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: sendCount (%llu) differs from recvCounts[%u] (%llu)", q.api,
                                  static_cast<unsigned long long>(q.count), k.rank,
                                  static_cast<unsigned long long>(d.recv_counts[k.rank]));
  }
  HCCL_TRY(check_buffer(q.send, q.count, 1, q.dtype, q.api, "sendBuf", &sbytes, &d.pins));
  HCCL_TRY(check_extent(q.recv, d.recv_counts, d.recv_displs, q.dtype, q.api, "recvBuf", &rbytes,
                        &d.pins));
  bool in_place = static_cast<const char *>(q.send) ==
                  static_cast<char *>(q.recv) + d.recv_displs[k.rank] * dtype_size(q.dtype);
  return check_overlap(q.api, "sendBuf", q.send, sbytes, "recvBuf", q.recv, rbytes, in_place,
                       "sendBuf == recvBuf + recvDispls[rank] elements");
}

HcclResult check_reduce_scatter_v(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op = OpDesc(q.kind, q.api, q.send, q.recv, q.count, q.dtype, q.op);
  const Comm &k = *c->comm;
  size_t sbytes, rbytes;
  HCCL_TRY(check_reduction(q.dtype, q.op, q.api));
  HCCL_TRY(read_counts(q.send_counts, k.nranks, q.api, "sendCounts", &d.send_counts));
  HCCL_TRY(read_counts(q.send_displs, k.nranks, q.api, "sendDispls", &d.send_displs));
  if (d.send_counts[k.rank] != q.count) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: recvCount (%llu) differs from sendCounts[%u] (%llu)", q.api,
                                  static_cast<unsigned long long>(q.count), k.rank,
                                  static_cast<unsigned long long>(d.send_counts[k.rank]));
  }
  HCCL_TRY(check_extent(q.send, d.send_counts, d.send_displs, q.dtype, q.api, "sendBuf", &sbytes,
                        &d.pins));
  HCCL_TRY(check_buffer(q.recv, q.count, 1, q.dtype, q.api, "recvBuf", &rbytes, &d.pins));
  bool in_place = static_cast<char *>(q.recv) ==
                  static_cast<const char *>(q.send) + d.send_displs[k.rank] * dtype_size(q.dtype);
  return check_overlap(q.api, "sendBuf", q.send, sbytes, "recvBuf", q.recv, rbytes, in_place,
                       "recvBuf == sendBuf + sendDispls[rank] elements");
}

}  // namespace hccl
