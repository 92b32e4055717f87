// Description of one enqueued operation, packed by the API entry points and
// run later on the stream's worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "hccl/hccl_types.h"

namespace hccl {

enum class OpKind {
  kAllReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kBarrier,
  kReduce,
  kScatter,
  kAlltoAll,   // counts/displs filled like AlltoAllV
  kAllGatherV,
  kReduceScatterV,
  kAlltoAllV,
  kSendRecv,   // HcclSend, HcclRecv, HcclBatchSendRecv, or a group of them
  // Collective management calls run in the communicator's operation order
  // (comm/host_call.h): their exchanges carry these kinds in signatures.
  kSymWinRegister,
  kSymWinDeregister,
  kCreateSubComm,
};

class Ctx;
struct WindowSet;

// Facts about each kind of operation, in one table (op_table.cc).
struct OpFacts {
  OpKind kind;
  const char *api;  // "HcclAllReduce": how messages name it
  bool rooted;      // root must match on every rank
  bool reducing;    // the reduction op must match on every rank
  // How `count` is compared across ranks: the same everywhere, a digest of
  // recvCounts (AllGatherV) or sendCounts (ReduceScatterV), or not at all.
  enum CountRule : uint8_t { kSameCount, kRecvCountsDigest, kSendCountsDigest, kNotCompared } count_rule;
  HcclResult (*run)(Ctx &x);  // the algorithm entry (algo/<name>.cc)
};
constexpr int kOpKinds = static_cast<int>(OpKind::kCreateSubComm) + 1;
const OpFacts &op_facts(OpKind kind);
// The facts of a kind number read from a peer's message (null if unknown).
const OpFacts *op_facts_or_null(uint32_t kind);

struct P2pItem {
  bool send;
  void *buf;
  uint64_t count;
  HcclDataType dtype;
  uint32_t peer;
};

struct OpDesc {
  OpDesc() = default;
  // Arguments in the order of the C calls; the V vectors and items are filled after.
  OpDesc(OpKind kind, const char *api, const void *send = nullptr, void *recv = nullptr,
         uint64_t count = 0, HcclDataType dtype = HCCL_DATA_TYPE_INT8,
         HcclReduceOp op = HCCL_REDUCE_SUM, uint32_t root = 0)
      : kind(kind), api(api), send(send), recv(recv), count(count), dtype(dtype), op(op),
        root(root) {}

  OpKind kind = OpKind::kBarrier;
  const char *api = "";  // e.g. "HcclAllReduce", for messages
  const void *send = nullptr;
  void *recv = nullptr;
  uint64_t count = 0;  // per-op meaning, as in the C call
  HcclDataType dtype = HCCL_DATA_TYPE_INT8;
  HcclReduceOp op = HCCL_REDUCE_SUM;
  uint32_t root = 0;
  // V variants, copied at enqueue time (elements, nRanks entries each).
  std::vector<uint64_t> send_counts, send_displs, recv_counts, recv_displs;
  std::vector<P2pItem> items;
  // Keep mapped device memory of the buffers mapped until the op has run.
  std::vector<std::shared_ptr<const void>> pins;
  // Symmetric windows registered when the op was enqueued (null: none).
  std::shared_ptr<const WindowSet> windows;
  // Host calls (kSymWinRegister, ...): what runs in the op's turn.
  std::function<HcclResult(Ctx &)> host_fn;
};

}  // namespace hccl
