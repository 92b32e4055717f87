#include "hccl/comm/host_call.h"

#include <condition_variable>
#include <mutex>
#include <string>

#include "hccl/algo/ctx.h"
#include "hccl/comm/enqueue.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

struct CallState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // the op ran, or was dropped without running
  bool ran = false;
  HcclResult rc = HCCL_SUCCESS;
  std::string what;
};

// Owned by the op's function: when the op is gone (run, skipped, or never
// queued) the waiting caller wakes up.
struct DoneSignal {
  std::shared_ptr<CallState> st;
  ~DoneSignal() {
    std::lock_guard<std::mutex> lock(st->mu);
    st->done = true;
    st->cv.notify_all();
  }
};

}  // namespace

HcclResult comm_host_call(const std::shared_ptr<Comm> &comm, OpKind kind, const char *api,
                          uint64_t tag, std::function<HcclResult(Ctx &)> fn) {
  if (group_active()) {
    return HCCL_FAIL(HCCL_E_NOT_SUPPORT, "%s: cannot be called between HcclGroupStart and HcclGroupEnd", api);
  }
  if (hostrt::current_device() < 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: no device is set on this thread (call aclrtSetDevice(%d), the "
                                  "communicator's device)", api, comm->device);
  }
  // A private stream of the current device: what runs on it (and a failure
  // it ends with) is none of the user's streams' business.
  aclrtStream priv = nullptr;
  if (aclrtCreateStream(&priv) != ACL_SUCCESS) {
    return HCCL_FAIL(HCCL_E_RUNTIME, "%s: cannot create a stream: %s", api, hostrt::last_error());
  }
  struct StreamGone {
    aclrtStream s;
    ~StreamGone() { aclrtDestroyStream(s); }
  } gone{priv};
  aclError aerr = ACL_SUCCESS;
  std::shared_ptr<hostrt::Stream> s = hostrt::acquire_stream(priv, api, &aerr);
  if (!s) return HCCL_E_RUNTIME;
  if (hostrt::stream_device(s.get()) != comm->device) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: the current device is %d, the communicator's is %d (call "
                                  "aclrtSetDevice(%d) first)", api, hostrt::stream_device(s.get()),
                                  comm->device, comm->device);
  }
  std::string why;
  HcclResult failed = comm->error(&why);
  if (failed != HCCL_SUCCESS) {
    return HCCL_FAIL(failed, "%s: the communicator failed earlier: %s", api, why.c_str());
  }
  auto st = std::make_shared<CallState>();
  auto signal = std::make_shared<DoneSignal>();
  signal->st = st;
  OpDesc d(kind, api);
  d.count = tag;
  d.host_fn = [st, signal, fn](Ctx &x) -> HcclResult {
    HcclResult r = fn(x);
    std::lock_guard<std::mutex> lock(st->mu);
    st->ran = true;
    st->rc = r;
    st->what = x.err.what;
    return r;
  };
  signal.reset();  // only the op holds it now
  HcclResult r = comm_submit(comm, s.get(), std::move(d));
  std::unique_lock<std::mutex> lock(st->mu);
  st->cv.wait(lock, [&] { return st->done; });
  if (r != HCCL_SUCCESS) return r;  // never queued; comm_submit set the message
  if (!st->ran) {
    HcclResult code = comm->error(&why);
    if (code != HCCL_SUCCESS) {
      return HCCL_FAIL(code, "%s: did not run: the communicator failed: %s", api, why.c_str());
    }
    return HCCL_FAIL(HCCL_E_INTERNAL, "%s: did not run (the communicator was destroyed, or its stream skips "
                                      "tasks after an earlier failure)", api);
  }
  if (st->rc != HCCL_SUCCESS) hostrt::set_error("%s: %s", api, st->what.c_str());
  return st->rc;
}

}  // namespace hccl
