// An operation's C arguments as one value (OpRequest), checked without side
// effects into a CheckedOp that owns everything the op needs (its
// communicator, and pins on the mapped memory of its buffers), which
// enqueue() consumes. A refused request leaves nothing behind: the pins are
// dropped with the half-built CheckedOp, so aclrtUnmapMem of a buffer named
// by a refused call succeeds at once.
#pragma once

#include <cstdint>
#include <memory>

#include "hccl/op/op.h"
#include "hccl/comm/comm.h"
#include "hccl/hccl.h"

namespace hccl {

struct OpRequest {
  // Which C signature the arguments came from, where one OpKind has several.
  enum class Form : uint8_t {
    kPlain,        // the call named by `kind`
    kCountMatrix,  // HcclAlltoAllVC: count_matrix instead of the four arrays
    kSend,         // HcclSend: send, count, dtype, peer
    kRecv,         // HcclRecv: recv, count, dtype, peer
    kItems,        // HcclBatchSendRecv: items, item_num
  };

  OpRequest(OpKind kind, const char *api, HcclComm comm, aclrtStream stream)
      : kind(kind), api(api), comm(comm), stream(stream) {}

  OpKind kind;
  const char *api;  // "HcclAllReduce": how messages name the call
  HcclComm comm;
  aclrtStream stream;
  Form form = Form::kPlain;
  const void *send = nullptr;
  void *recv = nullptr;
  uint64_t count = 0;       // as the call names it (count, sendCount, recvCount)
  uint64_t recv_count = 0;  // HcclAlltoAll's recvCount
  HcclDataType dtype = HCCL_DATA_TYPE_INT8;      // dataType, or sendType
  HcclDataType recv_type = HCCL_DATA_TYPE_INT8;  // the AlltoAll family's recvType
  HcclReduceOp op = HCCL_REDUCE_SUM;
  uint32_t root = 0;  // root, or the peer of HcclSend / HcclRecv
  // The V variants' uint64_t[nRanks] arrays, as the caller passed them.
  const void *send_counts = nullptr, *send_displs = nullptr;
  const void *recv_counts = nullptr, *recv_displs = nullptr;
  const void *count_matrix = nullptr;  // uint64_t[nRanks][nRanks], row = sender
  const HcclSendRecvItem *items = nullptr;
  uint32_t item_num = 0;
};

// A request that passed its checks. op.pins keep its buffers' mapped memory
// mapped until the op has run (or is dropped).
struct CheckedOp {
  std::shared_ptr<Comm> comm;
  aclrtStream stream = nullptr;
  OpDesc op;
};

// HCCL_SUCCESS and *out filled, or an error code with its message set
// (hccl/fail.h); *out is untouched then.
HcclResult check(const OpRequest &req, CheckedOp *out);
// Hands the op to its communicator (comm/enqueue.h).
HcclResult enqueue(CheckedOp &&op);
// check, then enqueue: what every operation's entry point returns.
HcclResult submit(const OpRequest &req);

}  // namespace hccl
