#include "hccl/comm/enqueue.h"

#include "hccl/codes.h"

#include <string>
#include <vector>

#include "common/env.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

// A grouped op keeps the user's stream handle, not the Stream: the stream
// may be destroyed before HcclGroupEnd, which resolves it again.
struct Pending {
  std::shared_ptr<Comm> comm;
  aclrtStream handle;
  std::shared_ptr<hostrt::Stream> stream;  // filled by HcclGroupEnd
  OpDesc op;
};

// Ops held between HcclGroupStart and HcclGroupEnd on this thread.
struct GroupState {
  int depth = 0;
  std::vector<Pending> ops;
};
thread_local GroupState g_group;

// Resolves `stream` for an op of `comm` and checks it belongs to the comm's
// device; messages start with `api`.
HcclResult resolve(const Comm &comm, aclrtStream stream, const char *api,
                   std::shared_ptr<hostrt::Stream> *out) {
  if (stream == nullptr && hostrt::current_device() < 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: stream is NULL and no device is set on this thread (call "
                                  "aclrtSetDevice)", api);
  }
  aclError aerr = ACL_SUCCESS;
  std::shared_ptr<hostrt::Stream> s = hostrt::acquire_stream(stream, api, &aerr);
  if (!s) return hccl_code(aerr);
  int32_t dev = hostrt::stream_device(s.get());
  if (dev != comm.device) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: stream belongs to device %d, communicator to device %d", api, dev,
                                  comm.device);
  }
  *out = std::move(s);
  return HCCL_SUCCESS;
}

// PYHCCL_LAUNCH_BLOCKING=1: every call waits for its operation, so an error
// is returned by the call that caused it (like CUDA_LAUNCH_BLOCKING).
HcclResult wait_if_blocking(Comm &comm, hostrt::Stream *s, const char *api) {
  static const bool blocking = common::env_int("PYHCCL_LAUNCH_BLOCKING", 0, 0, 1) == 1;
  if (!blocking) return HCCL_SUCCESS;
  hostrt::stream_wait_idle(s, INT64_MAX);
  std::string why;
  HcclResult failed = comm.error(&why);
  if (failed != HCCL_SUCCESS) hostrt::set_error("%s: %s", api, why.c_str());
  return failed;
}

}  // namespace

HcclResult comm_enqueue(const std::shared_ptr<Comm> &comm, aclrtStream stream, OpDesc op) {
  std::shared_ptr<hostrt::Stream> s;
  HcclResult r = resolve(*comm, stream, op.api, &s);
  if (r != HCCL_SUCCESS) return r;
  {
    // The symmetric windows registered by now (comm/window.h) go with the op.
    std::lock_guard<std::mutex> lock(comm->mu);
    if (comm->async_error != HCCL_SUCCESS) {
      return HCCL_FAIL(comm->async_error, "%s: the communicator failed earlier: %s", op.api, comm->async_msg.c_str());
    }
    op.windows = comm->windows;
  }
  if (g_group.depth > 0) {
    g_group.ops.push_back(Pending{comm, stream, nullptr, std::move(op)});
    return HCCL_SUCCESS;
  }
  // `s` keeps the stream alive while the task is pushed.
  const char *api = op.api;
  r = comm_submit(comm, s.get(), std::move(op));
  return r == HCCL_SUCCESS ? wait_if_blocking(*comm, s.get(), api) : r;
}

HcclResult group_start() {
  ++g_group.depth;
  return HCCL_SUCCESS;
}

bool group_active() { return g_group.depth > 0; }

HcclResult group_end() {
  if (g_group.depth == 0) {
    return HCCL_FAIL(HCCL_E_PARA, "HcclGroupEnd: no HcclGroupStart to match");
  }
  if (--g_group.depth > 0) return HCCL_SUCCESS;
  std::vector<Pending> ops = std::move(g_group.ops);
  g_group.ops.clear();
  // Resolve every stream first. If one is gone (destroyed, or its device
  // reset), nothing of the group runs here; the communicators involved are
  // failed so that peers waiting for these ops are told instead of waiting
  // out the exec timeout.
  for (Pending &p : ops) {
    HcclResult r = resolve(*p.comm, p.handle, "HcclGroupEnd", &p.stream);
    if (r != HCCL_SUCCESS) {
      std::string msg = std::string(hostrt::last_error()) + " (stream of a grouped " + p.op.api +
                        "; the group was not run)";
      for (Pending &q : ops) q.comm->fail(r, msg);
      return HCCL_FAIL(r, "%s", msg.c_str());
    }
  }
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
    HcclResult r = comm_submit(p.comm, p.stream.get(), std::move(p.op));
    if (first == HCCL_SUCCESS) first = r;
  }
  for (Pending &p : merged) {
    HcclResult r = wait_if_blocking(*p.comm, p.stream.get(), "HcclGroupEnd");
    if (first == HCCL_SUCCESS) first = r;
  }
  return first;
}

}  // namespace hccl
