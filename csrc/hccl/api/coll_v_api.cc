// AlltoAll family and the V variants. Count and displacement arrays are
// uint64_t[nRanks] (declared const void * by HCCL) and are copied at the call.
#include "hccl/api/checks.h"
#include "hccl/api/enqueue.h"
#include "hccl/hccl.h"
#include "hccl/reduce/reduce.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

using hccl::Comm;
using hccl::OpDesc;
using hccl::OpKind;

namespace {

HcclResult check_same_type(HcclDataType s, HcclDataType r, const char *api) {
  HCCL_TRY(hccl::check_dtype(s, api, "sendType"));
  HCCL_TRY(hccl::check_dtype(r, api, "recvType"));
  if (s != r) {
    return HCCL_FAIL(HCCL_E_NOT_SUPPORT, "%s: sendType %s differs from recvType %s", api, hccl::dtype_name(s),
                                         hccl::dtype_name(r));
  }
  return HCCL_SUCCESS;
}

// Checks the buffers of a packed AlltoAllV op (counts and displacements read) and enqueues it.
HcclResult alltoallv_common(const std::shared_ptr<Comm> &c, OpDesc &d, aclrtStream stream) {
  size_t sbytes, rbytes;
  HCCL_TRY(hccl::check_extent(d.send, d.send_counts, d.send_displs, d.dtype, d.api, "sendBuf",
                              &sbytes));
  HCCL_TRY(hccl::check_extent(d.recv, d.recv_counts, d.recv_displs, d.dtype, d.api, "recvBuf",
                              &rbytes));
  HCCL_TRY(hccl::check_overlap(d.api, "sendBuf", d.send, sbytes, "recvBuf", d.recv, rbytes, false,
                               "the V variants have no in-place form"));
  return hccl::enqueue_op(c, stream, std::move(d));
}

}  // namespace

extern "C" {

HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                        const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                        HcclComm comm, aclrtStream stream) {
  const char *api = "HcclAlltoAll";
  std::shared_ptr<Comm> c;
  size_t sbytes, rbytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(check_same_type(sendType, recvType, api));
  if (sendCount != recvCount) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: sendCount (%llu) differs from recvCount (%llu)", api,
                                  static_cast<unsigned long long>(sendCount),
                                  static_cast<unsigned long long>(recvCount));
  }
  HCCL_TRY(hccl::check_buffer(sendBuf, sendCount, c->nranks, sendType, api, "sendBuf", &sbytes));
  HCCL_TRY(hccl::check_buffer(recvBuf, recvCount, c->nranks, recvType, api, "recvBuf", &rbytes));
  HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, sbytes, "recvBuf", recvBuf, rbytes,
                               sendBuf == recvBuf, "sendBuf == recvBuf"));
  OpDesc d(OpKind::kAlltoAll, api, sendBuf, const_cast<void *>(recvBuf), sendCount, sendType);
  d.send_counts.assign(c->nranks, sendCount);
  d.recv_counts.assign(c->nranks, sendCount);
  for (uint32_t p = 0; p < c->nranks; ++p) {
    d.send_displs.push_back(p * sendCount);
    d.recv_displs.push_back(p * sendCount);
  }
  return hccl::enqueue_op(c, stream, std::move(d));
}

HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                         HcclDataType sendType, const void *recvBuf, const void *recvCounts,
                         const void *rdispls, HcclDataType recvType, HcclComm comm,
                         aclrtStream stream) {
  const char *api = "HcclAlltoAllV";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(check_same_type(sendType, recvType, api));
  OpDesc d(OpKind::kAlltoAllV, api, sendBuf, const_cast<void *>(recvBuf), 0, sendType);
  HCCL_TRY(hccl::read_counts(sendCounts, c->nranks, api, "sendCounts", &d.send_counts));
  HCCL_TRY(hccl::read_counts(sdispls, c->nranks, api, "sdispls", &d.send_displs));
  HCCL_TRY(hccl::read_counts(recvCounts, c->nranks, api, "recvCounts", &d.recv_counts));
  HCCL_TRY(hccl::read_counts(rdispls, c->nranks, api, "rdispls", &d.recv_displs));
  return alltoallv_common(c, d, stream);
}

HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix, HcclDataType sendType,
                          const void *recvBuf, HcclDataType recvType, HcclComm comm,
                          aclrtStream stream) {
  const char *api = "HcclAlltoAllVC";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(check_same_type(sendType, recvType, api));
  HCCL_TRY(hccl::check_ptr(sendCountMatrix, api, "sendCountMatrix"));
  const uint32_t n = c->nranks, me = c->rank;
  const uint64_t *m = static_cast<const uint64_t *>(sendCountMatrix);  // row = sender
  OpDesc d(OpKind::kAlltoAllV, api, sendBuf, const_cast<void *>(recvBuf), 0, sendType);
  uint64_t soff = 0, roff = 0;
  for (uint32_t q = 0; q < n; ++q) {
    d.send_counts.push_back(m[me * n + q]);
    d.send_displs.push_back(soff);
    d.recv_counts.push_back(m[q * n + me]);
    d.recv_displs.push_back(roff);
    if (__builtin_add_overflow(soff, m[me * n + q], &soff) ||
        __builtin_add_overflow(roff, m[q * n + me], &roff)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: sendCountMatrix counts are too large", api);
    }
  }
  return alltoallv_common(c, d, stream);
}

HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf, const void *recvCounts,
                          const void *recvDispls, HcclDataType dataType, HcclComm comm,
                          aclrtStream stream) {
  const char *api = "HcclAllGatherV";
  std::shared_ptr<Comm> c;
  size_t sbytes, rbytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_dtype(dataType, api));
  OpDesc d(OpKind::kAllGatherV, api, sendBuf, recvBuf, sendCount, dataType);
  HCCL_TRY(hccl::read_counts(recvCounts, c->nranks, api, "recvCounts", &d.recv_counts));
  HCCL_TRY(hccl::read_counts(recvDispls, c->nranks, api, "recvDispls", &d.recv_displs));
  if (d.recv_counts[c->rank] != sendCount) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: sendCount (%llu) differs from recvCounts[%u] (%llu)", api,
                                  static_cast<unsigned long long>(sendCount), c->rank,
                                  static_cast<unsigned long long>(d.recv_counts[c->rank]));
  }
  HCCL_TRY(hccl::check_buffer(sendBuf, sendCount, 1, dataType, api, "sendBuf", &sbytes));
  HCCL_TRY(hccl::check_extent(recvBuf, d.recv_counts, d.recv_displs, dataType, api, "recvBuf",
                              &rbytes));
  bool in_place = static_cast<char *>(sendBuf) ==
                  static_cast<char *>(recvBuf) + d.recv_displs[c->rank] * hccl::dtype_size(dataType);
  HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, sbytes, "recvBuf", recvBuf, rbytes,
                               in_place, "sendBuf == recvBuf + recvDispls[rank] elements"));
  return hccl::enqueue_op(c, stream, std::move(d));
}

HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls,
                              void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                              HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char *api = "HcclReduceScatterV";
  std::shared_ptr<Comm> c;
  size_t sbytes, rbytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_reduction(dataType, op, api));
  OpDesc d(OpKind::kReduceScatterV, api, sendBuf, recvBuf, recvCount, dataType, op);
  HCCL_TRY(hccl::read_counts(sendCounts, c->nranks, api, "sendCounts", &d.send_counts));
  HCCL_TRY(hccl::read_counts(sendDispls, c->nranks, api, "sendDispls", &d.send_displs));
  if (d.send_counts[c->rank] != recvCount) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: recvCount (%llu) differs from sendCounts[%u] (%llu)", api,
                                  static_cast<unsigned long long>(recvCount), c->rank,
                                  static_cast<unsigned long long>(d.send_counts[c->rank]));
  }
  HCCL_TRY(hccl::check_extent(sendBuf, d.send_counts, d.send_displs, dataType, api, "sendBuf",
                              &sbytes));
  HCCL_TRY(hccl::check_buffer(recvBuf, recvCount, 1, dataType, api, "recvBuf", &rbytes));
  bool in_place = static_cast<char *>(recvBuf) ==
                  static_cast<char *>(sendBuf) + d.send_displs[c->rank] * hccl::dtype_size(dataType);
  HCCL_TRY(hccl::check_overlap(api, "sendBuf", sendBuf, sbytes, "recvBuf", recvBuf, rbytes,
                               in_place, "recvBuf == sendBuf + sendDispls[rank] elements"));
  return hccl::enqueue_op(c, stream, std::move(d));
}

}  // extern "C"
