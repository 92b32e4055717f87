// Point-to-point entry points and groups. A send completes once its data is
// in the pair's channel (small messages do not wait for the receiver); use
// HcclBatchSendRecv or a group for exchanges that must progress together.
#include <cstdio>
#include <cstring>

#include "hccl/api/checks.h"
#include "hccl/api/enqueue.h"
#include "hccl/hccl.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

using hccl::Comm;
using hccl::OpDesc;
using hccl::OpKind;

namespace {

HcclResult p2p_one(bool send, void *buf, uint64_t count, HcclDataType dt, uint32_t peer,
                   HcclComm comm, aclrtStream stream, const char *api) {
  std::shared_ptr<Comm> c;
  size_t bytes;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_dtype(dt, api));
  HCCL_TRY(hccl::check_buffer(buf, count, 1, dt, api, send ? "sendBuf" : "recvBuf", &bytes));
  HCCL_TRY(hccl::check_rank(peer, c->nranks, api, send ? "destRank" : "srcRank"));
  OpDesc d(OpKind::kSendRecv, api);
  d.items.push_back(hccl::P2pItem{send, buf, count, dt, peer});
  return hccl::enqueue_op(c, stream, std::move(d));
}

}  // namespace

extern "C" {

HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                    HcclComm comm, aclrtStream stream) {
  return p2p_one(true, sendBuf, count, dataType, destRank, comm, stream, "HcclSend");
}

HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                    HcclComm comm, aclrtStream stream) {
  return p2p_one(false, recvBuf, count, dataType, srcRank, comm, stream, "HcclRecv");
}

HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                             aclrtStream stream) {
  const char *api = "HcclBatchSendRecv";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  if (itemNum > 0) HCCL_TRY(hccl::check_ptr(sendRecvInfo, api, "sendRecvInfo"));
  OpDesc d(OpKind::kSendRecv, api);
  for (uint32_t i = 0; i < itemNum; ++i) {
    const HcclSendRecvItem &it = sendRecvInfo[i];
    char arg[64];
    // The enums are read as raw integers first: loading an out-of-range value
    // through the enum type is undefined behaviour (UBSan's -fsanitize=enum).
    int32_t type_raw, dtype_raw;
    static_assert(sizeof(it.sendRecvType) == 4 && sizeof(it.dataType) == 4, "enums are 32-bit");
    std::memcpy(&type_raw, &it.sendRecvType, sizeof(type_raw));
    std::memcpy(&dtype_raw, &it.dataType, sizeof(dtype_raw));
    if (type_raw != HCCL_SEND && type_raw != HCCL_RECV) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: sendRecvInfo[%u].sendRecvType (%d) is neither HCCL_SEND nor HCCL_RECV",
                                    api, i, type_raw);
    }
    std::snprintf(arg, sizeof(arg), "sendRecvInfo[%u].dataType", i);
    HCCL_TRY(hccl::check_dtype_raw(dtype_raw, api, arg));
    std::snprintf(arg, sizeof(arg), "sendRecvInfo[%u].buf", i);
    size_t bytes;
    HCCL_TRY(hccl::check_buffer(it.buf, it.count, 1, it.dataType, api, arg, &bytes));
    std::snprintf(arg, sizeof(arg), "sendRecvInfo[%u].remoteRank", i);
    HCCL_TRY(hccl::check_rank(it.remoteRank, c->nranks, api, arg));
    d.items.push_back(hccl::P2pItem{it.sendRecvType == HCCL_SEND, it.buf, it.count, it.dataType,
                                    it.remoteRank});
  }
  return hccl::enqueue_op(c, stream, std::move(d));
}

HcclResult HcclGroupStart(void) { return hccl::group_start(); }

HcclResult HcclGroupEnd(void) { return hccl::group_end(); }

HcclResult HcclGroupStatusGet(bool *isGroupEnabled) {
  HCCL_TRY(hccl::check_ptr(isGroupEnabled, "HcclGroupStatusGet", "isGroupEnabled"));
  *isGroupEnabled = hccl::group_active();
  return HCCL_SUCCESS;
}

}  // extern "C"
