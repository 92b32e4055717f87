// Checks of HcclSend, HcclRecv and HcclBatchSendRecv (api/check_ops.h): each
// becomes one kSendRecv op with its items.
#include <cstdio>
#include <cstring>

#include "hccl/api/check_ops.h"
#include "hccl/api/checks.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

HcclResult check_one(const OpRequest &q, CheckedOp *c) {
  const bool send = q.form == OpRequest::Form::kSend;
  void *buf = send ? const_cast<void *>(q.send) : q.recv;
  OpDesc &d = c->op;
  size_t bytes;
  HCCL_TRY(check_dtype(q.dtype, q.api));
  HCCL_TRY(check_buffer(buf, q.count, 1, q.dtype, q.api, send ? "sendBuf" : "recvBuf", &bytes,
                        &d.pins));
  HCCL_TRY(check_rank(q.root, c->comm->nranks, q.api, send ? "destRank" : "srcRank"));
  d.items.push_back(P2pItem{send, buf, q.count, q.dtype, q.root});
  return HCCL_SUCCESS;
}

HcclResult check_items(const OpRequest &q, CheckedOp *c) {
  OpDesc &d = c->op;
  if (q.item_num > 0) HCCL_TRY(check_ptr(q.items, q.api, "sendRecvInfo"));
  for (uint32_t i = 0; i < q.item_num; ++i) {
    const HcclSendRecvItem &it = q.items[i];
    char arg[64];
    // The enums are read as raw integers first: loading an out-of-range value
    // through the enum type is undefined behaviour (UBSan's -fsanitize=enum).
    int32_t type_raw, dtype_raw;
    static_assert(sizeof(it.sendRecvType) == 4 && sizeof(it.dataType) == 4, "enums are 32-bit");
    std::memcpy(&type_raw, &it.sendRecvType, sizeof(type_raw));
    std::memcpy(&dtype_raw, &it.dataType, sizeof(dtype_raw));
    if (type_raw != HCCL_SEND && type_raw != HCCL_RECV) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: sendRecvInfo[%u].sendRecvType (%d) is neither HCCL_SEND nor HCCL_RECV",
                                    q.api, i, type_raw);
    }
    std::snprintf(arg, sizeof(arg), "sendRecvInfo[%u].dataType", i);
    HCCL_TRY(check_dtype_raw(dtype_raw, q.api, arg));
    std::snprintf(arg, sizeof(arg), "sendRecvInfo[%u].buf", i);
    size_t bytes;
    HCCL_TRY(check_buffer(it.buf, it.count, 1, it.dataType, q.api, arg, &bytes, &d.pins));
    std::snprintf(arg, sizeof(arg), "sendRecvInfo[%u].remoteRank", i);
    HCCL_TRY(check_rank(it.remoteRank, c->comm->nranks, q.api, arg));
    d.items.push_back(P2pItem{type_raw == HCCL_SEND, it.buf, it.count, it.dataType, it.remoteRank});
  }
  return HCCL_SUCCESS;
}

}  // namespace

HcclResult check_send_recv(const OpRequest &q, CheckedOp *c) {
  c->op = OpDesc(OpKind::kSendRecv, q.api);
  return q.form == OpRequest::Form::kItems ? check_items(q, c) : check_one(q, c);
}

}  // namespace hccl
