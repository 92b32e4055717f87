// Devices (aclrtSetDevice reference counts, default contexts) and contexts.
#include "runtime/internal.h"
#include "runtime/stream.h"

namespace hostrt {
namespace {

// Serialises aclrtSetDevice / aclrtResetDevice (taken before Registry::mu).
ForkLocal<std::mutex> g_device_mu;

std::mutex &device_mu() { return g_device_mu.get(); }

bool valid_device(int32_t d) { return d >= 0 && d < device_count(); }

aclError bad_device(const char *api, int32_t d) {
  return ACL_FAIL(ACL_ERROR_RT_INVALID_DEVICEID, "%s: deviceId (%d) is out of range [0, %d)", api, d,
              device_count());
}

}  // namespace

void devices_after_fork() { g_device_mu.drop(); }

}  // namespace hostrt

using namespace hostrt;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count) {
  if (count == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
  *count = static_cast<uint32_t>(device_count());
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId) {
  if (!valid_device(deviceId)) return bad_device("aclrtSetDevice", deviceId);
  if (aclError rc = check_not_finalized("aclrtSetDevice")) return rc;
  std::lock_guard<std::mutex> dl(device_mu());
  Registry &r = registry();
  uint64_t ctx_id;
  {
    std::lock_guard<std::mutex> lk(r.mu);
    DeviceState &ds = r.devices[static_cast<size_t>(deviceId)];
    ctx_id = ds.refs > 0 ? ds.default_ctx : 0;
  }
  if (ctx_id == 0) {
    std::shared_ptr<Context> ctx = create_context(deviceId, /*is_default=*/true, "aclrtSetDevice");
    if (!ctx) return ACL_ERROR_BAD_ALLOC;
    ctx_id = ctx->id;
  }
  {
    std::lock_guard<std::mutex> lk(r.mu);
    DeviceState &ds = r.devices[static_cast<size_t>(deviceId)];
    ds.default_ctx = ctx_id;
    ++ds.refs;
  }
  current_ctx_id() = ctx_id;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId) {
  const char *api = "aclrtResetDevice";
  if (!valid_device(deviceId)) return bad_device(api, deviceId);
  if (aclError rc = check_not_finalized(api)) return rc;
  std::vector<std::shared_ptr<Stream>> doomed;
  {
    std::lock_guard<std::mutex> dl(device_mu());
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    DeviceState &ds = r.devices[static_cast<size_t>(deviceId)];
    if (ds.refs == 0) {
      return ACL_FAIL(ACL_ERROR_RT_INVALID_DEVICEID, "%s: device %d is not set (call aclrtSetDevice)",
                  api, deviceId);
    }
    if (ds.refs > 1) {
      --ds.refs;
      return ACL_SUCCESS;
    }
    // Last reference: the default context and every stream created in it go.
    std::vector<std::shared_ptr<Stream>> probe;
    for (auto &kv : r.streams) {
      if (kv.second->ctx_id == ds.default_ctx) probe.push_back(kv.second);
    }
    if (called_from_worker_of(probe, api)) return ACL_ERROR_INVALID_PARAM;
    unregister_context_locked(r, ds.default_ctx, &doomed);
    ds = DeviceState{};
  }
  shutdown_streams(doomed);  // waits for their queued work
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId) {
  if (deviceId == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL");
  std::shared_ptr<Context> ctx = current_context();
  if (!ctx) {
    return ACL_FAIL(ACL_ERROR_RT_CONTEXT_NULL,
                "aclrtGetDevice: no device is set on this thread (call aclrtSetDevice)");
  }
  *deviceId = ctx->device;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode) {
  if (runMode == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode is NULL");
  *runMode = ACL_HOST;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void) {
  const char *api = "aclrtSynchronizeDevice";
  std::shared_ptr<Context> ctx = current_context();
  if (!ctx) {
    return ACL_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread", api);
  }
  std::vector<std::shared_ptr<Stream>> streams;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    for (auto &kv : r.streams) {
      if (kv.second->device == ctx->device) streams.push_back(kv.second);
    }
  }
  Stream *me = Stream::current_worker();
  for (auto &s : streams) {
    if (s.get() == me) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: called from a task of a stream of this device",
                  api);
    }
  }
  aclError first = ACL_SUCCESS;
  std::string msg;
  for (auto &s : streams) {
    s->wait_drained(INT64_MAX);
    std::string m;
    aclError rc = s->take_error(&m);
    if (rc != ACL_SUCCESS && first == ACL_SUCCESS) {
      first = rc;
      msg = std::move(m);
    }
  }
  if (first != ACL_SUCCESS) set_error("%s", msg.c_str());
  return first;
}

ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode) {
  const char *api = "aclrtSetDeviceSatMode";
  if (mode != ACL_RT_OVERFLOW_MODE_SATURATION && mode != ACL_RT_OVERFLOW_MODE_INFNAN) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: mode (%d) must be 0 (saturation) or 1 (inf/nan)",
                api, static_cast<int>(mode));
  }
  std::shared_ptr<Context> ctx = current_context();
  if (!ctx) return ACL_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread", api);
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.devices[static_cast<size_t>(ctx->device)].sat_mode = static_cast<int32_t>(mode);
  return ACL_SUCCESS;
}

// ---- contexts -------------------------------------------------------------

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
  const char *api = "aclrtCreateContext";
  if (context == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: context is NULL", api);
  if (!valid_device(deviceId)) return bad_device(api, deviceId);
  std::shared_ptr<Context> ctx = create_context(deviceId, /*is_default=*/false, api);
  if (!ctx) return ACL_ERROR_BAD_ALLOC;
  current_ctx_id() = ctx->id;
  *context = make_handle(HandleKind::kContext, ctx->id);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context) {
  const char *api = "aclrtDestroyContext";
  uint64_t id = handle_id(HandleKind::kContext, context);
  std::vector<std::shared_ptr<Stream>> doomed;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = id ? r.contexts.find(id) : r.contexts.end();
    if (it == r.contexts.end()) {
      return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "%s: context %p is not a live context", api,
                  context);
    }
    if (it->second->is_default) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                  "%s: context %p is a device's default context (use aclrtResetDevice)", api,
                  context);
    }
    std::vector<std::shared_ptr<Stream>> probe;
    for (auto &kv : r.streams) {
      if (kv.second->ctx_id == id) probe.push_back(kv.second);
    }
    if (called_from_worker_of(probe, api)) return ACL_ERROR_INVALID_PARAM;
    unregister_context_locked(r, id, &doomed);
  }
  if (current_ctx_id() == id) current_ctx_id() = 0;
  shutdown_streams(doomed);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context) {
  const char *api = "aclrtSetCurrentContext";
  if (context == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: context is NULL", api);
  uint64_t id = handle_id(HandleKind::kContext, context);
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  if (id == 0 || r.contexts.find(id) == r.contexts.end()) {
    return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "%s: context %p is not a live context", api, context);
  }
  current_ctx_id() = id;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context) {
  const char *api = "aclrtGetCurrentContext";
  if (context == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: context is NULL", api);
  std::shared_ptr<Context> ctx = current_context();
  if (!ctx) {
    *context = nullptr;
    return ACL_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "%s: no current context on this thread", api);
  }
  *context = make_handle(HandleKind::kContext, ctx->id);
  return ACL_SUCCESS;
}

}  // extern "C"
