// The acltdt collectives: byte sizes checked against the element size, then
// the HCCL collective of the same name on the communicator's HcclComm, on the
// caller's stream (or the communicator's when NULL). No copy of their own.
#include "hccl/tdt/tdt.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace tdt {

aclError to_hccl(aclDataType dt, size_t bytes, const char *api, const char *bytes_arg, HcclDataType *out,
                 uint64_t *count) {
  HcclDataType h;
  switch (dt) {
    case ACL_FLOAT: h = HCCL_DATA_TYPE_FP32; break;
    case ACL_FLOAT16: h = HCCL_DATA_TYPE_FP16; break;
    case ACL_BF16: h = HCCL_DATA_TYPE_BFP16; break;
    case ACL_DOUBLE: h = HCCL_DATA_TYPE_FP64; break;
    case ACL_INT8: h = HCCL_DATA_TYPE_INT8; break;
    case ACL_INT16: h = HCCL_DATA_TYPE_INT16; break;
    case ACL_INT32: h = HCCL_DATA_TYPE_INT32; break;
    case ACL_INT64: h = HCCL_DATA_TYPE_INT64; break;
    case ACL_UINT8: h = HCCL_DATA_TYPE_UINT8; break;
    case ACL_UINT16: h = HCCL_DATA_TYPE_UINT16; break;
    case ACL_UINT32: h = HCCL_DATA_TYPE_UINT32; break;
    case ACL_UINT64: h = HCCL_DATA_TYPE_UINT64; break;
    case ACL_HIFLOAT8: h = HCCL_DATA_TYPE_HIF8; break;
    case ACL_FLOAT8_E4M3FN: h = HCCL_DATA_TYPE_FP8E4M3; break;
    case ACL_FLOAT8_E5M2: h = HCCL_DATA_TYPE_FP8E5M2; break;
    case ACL_FLOAT8_E8M0: h = HCCL_DATA_TYPE_FP8E8M0; break;
    default:
      hostrt::set_error("%s: dataType (%d) has no HCCL counterpart (HCCL moves float, float16, bf16, double, "
                        "int8/16/32/64, uint8/16/32/64 and the 8-bit floats)", api, static_cast<int>(dt));
      return ACL_ERROR_INVALID_PARAM;
  }
  size_t elem = aclDataTypeSize(dt);
  if (bytes % elem != 0) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: %s (%zu) is not a multiple of the element size of dataType %d (%zu bytes): "
                                              "sizes are in bytes", api, bytes_arg, bytes, static_cast<int>(dt), elem);
  }
  *out = h;
  *count = bytes / elem;
  return ACL_SUCCESS;
}

}  // namespace tdt
}  // namespace hccl

using hccl::tdt::check_comm;
using hccl::tdt::fail;
using hccl::tdt::to_hccl;

#define TDT_TRY(expr)                 \
  do {                                \
    aclError tdt_try_e_ = (expr);     \
    if (tdt_try_e_ != ACL_SUCCESS) return tdt_try_e_; \
  } while (0)

namespace {

aclrtStream pick(acltdtComm comm, aclrtStream stream) { return stream != nullptr ? stream : comm->stream; }

// The acltdt op as HCCL's (same values); E_PARA from HCCL for anything else.
HcclReduceOp op_of(acltdtCommReduceOp op) { return static_cast<HcclReduceOp>(op); }

aclError check_root(acltdtComm comm, int32_t root, const char *api) {
  if (root < 0 || root >= comm->size) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: root (%d) must be in [0, worldSize) = [0, %d)", api, root, comm->size);
  }
  return ACL_SUCCESS;
}

}  // namespace

extern "C" {

aclError acltdtCommAllReduce(acltdtComm comm, void *buf, size_t bytes, aclDataType dataType, acltdtCommReduceOp op,
                             aclrtStream stream) {
  const char *api = "acltdtCommAllReduce";
  HcclDataType dt;
  uint64_t count;
  TDT_TRY(check_comm(comm, api));
  TDT_TRY(to_hccl(dataType, bytes, api, "bytes", &dt, &count));
  HcclResult r = HcclAllReduce(buf, buf, count, dt, op_of(op), comm->hccl, pick(comm, stream));
  return r == HCCL_SUCCESS ? ACL_SUCCESS : fail(api, r);
}

aclError acltdtCommBroadcast(acltdtComm comm, void *buf, size_t bytes, aclDataType dataType, int32_t root,
                             aclrtStream stream) {
  const char *api = "acltdtCommBroadcast";
  HcclDataType dt;
  uint64_t count;
  TDT_TRY(check_comm(comm, api));
  TDT_TRY(to_hccl(dataType, bytes, api, "bytes", &dt, &count));
  TDT_TRY(check_root(comm, root, api));
  HcclResult r = HcclBroadcast(buf, count, dt, static_cast<uint32_t>(root), comm->hccl, pick(comm, stream));
  return r == HCCL_SUCCESS ? ACL_SUCCESS : fail(api, r);
}

aclError acltdtCommAllGather(acltdtComm comm, void *sendBuf, void *recvBuf, size_t sendBytes, aclDataType dataType,
                             aclrtStream stream) {
  const char *api = "acltdtCommAllGather";
  HcclDataType dt;
  uint64_t count;
  TDT_TRY(check_comm(comm, api));
  TDT_TRY(to_hccl(dataType, sendBytes, api, "sendBytes", &dt, &count));
  HcclResult r = HcclAllGather(sendBuf, recvBuf, count, dt, comm->hccl, pick(comm, stream));
  return r == HCCL_SUCCESS ? ACL_SUCCESS : fail(api, r);
}

aclError acltdtCommReduceScatter(acltdtComm comm, void *sendBuf, void *recvBuf, size_t recvBytes,
                                 aclDataType dataType, acltdtCommReduceOp op, aclrtStream stream) {
  const char *api = "acltdtCommReduceScatter";
  HcclDataType dt;
  uint64_t count;
  TDT_TRY(check_comm(comm, api));
  TDT_TRY(to_hccl(dataType, recvBytes, api, "recvBytes", &dt, &count));
  HcclResult r = HcclReduceScatter(sendBuf, recvBuf, count, dt, op_of(op), comm->hccl, pick(comm, stream));
  return r == HCCL_SUCCESS ? ACL_SUCCESS : fail(api, r);
}

}  // extern "C"
