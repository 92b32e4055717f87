// Description of one enqueued operation, packed by the API entry points and
// run later on the stream's worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "hccl/hccl_types.h"
#include "hccl/op/spec.h"

namespace hccl {

class Ctx;
struct WindowSet;

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
