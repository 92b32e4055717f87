#include "hccl/api/enqueue.h"

#include <vector>

#include "runtime/hostrt.h"

namespace hccl {
namespace {

struct Pending {
  std::shared_ptr<Comm> comm;
  hostrt::Stream *stream;
  OpDesc op;
};

// Ops held between HcclGroupStart and HcclGroupEnd on this thread.
struct GroupState {
  int depth = 0;
  std::vector<Pending> ops;
};
thread_local GroupState g_group;

HcclResult from_acl(aclError e) {
  switch (e) {
    case ACL_ERROR_INVALID_PARAM:
    case ACL_ERROR_RT_PARAM_INVALID:
    case ACL_ERROR_RT_INVALID_HANDLE:
      return HCCL_E_PARA;
    default:
      return HCCL_E_RUNTIME;
  }
}

}  // namespace

HcclResult enqueue_op(const std::shared_ptr<Comm> &comm, aclrtStream stream, OpDesc op) {
  aclError aerr = ACL_SUCCESS;
  hostrt::Stream *s = hostrt::resolve_stream(stream, op.api, &aerr);
  if (s == nullptr) return from_acl(aerr);
  int32_t dev = hostrt::stream_device(s);
  if (dev != comm->device) {
    hostrt::set_error("%s: stream belongs to device %d, communicator to device %d", op.api, dev,
                      comm->device);
    return HCCL_E_PARA;
  }
  std::string why;
  HcclResult failed = comm->error(&why);
  if (failed != HCCL_SUCCESS) {
    hostrt::set_error("%s: the communicator failed earlier: %s", op.api, why.c_str());
    return failed;
  }
  if (g_group.depth > 0) {
    g_group.ops.push_back(Pending{comm, s, std::move(op)});
    return HCCL_SUCCESS;
  }
  return comm_submit(comm, s, std::move(op));
}

HcclResult group_start() {
  ++g_group.depth;
  return HCCL_SUCCESS;
}

bool group_active() { return g_group.depth > 0; }

HcclResult group_end() {
  if (g_group.depth == 0) {
    hostrt::set_error("HcclGroupEnd: no HcclGroupStart to match");
    return HCCL_E_PARA;
  }
  if (--g_group.depth > 0) return HCCL_SUCCESS;
  std::vector<Pending> ops = std::move(g_group.ops);
  g_group.ops.clear();
  // Consecutive sends/receives on the same comm and stream run as one batch,
  // so that pairs of them cannot deadlock; everything else keeps its order.
  std::vector<Pending> merged;
  for (Pending &p : ops) {
    if (!merged.empty() && p.op.kind == OpKind::kSendRecv &&
        merged.back().op.kind == OpKind::kSendRecv && merged.back().comm == p.comm &&
        merged.back().stream == p.stream) {
      auto &items = merged.back().op.items;
      items.insert(items.end(), p.op.items.begin(), p.op.items.end());
      merged.back().op.api = "HcclGroupEnd";
      continue;
    }
    merged.push_back(std::move(p));
  }
  HcclResult first = HCCL_SUCCESS;
  for (Pending &p : merged) {
    HcclResult r = comm_submit(p.comm, p.stream, std::move(p.op));
    if (first == HCCL_SUCCESS) first = r;
  }
  return first;
}

}  // namespace hccl
