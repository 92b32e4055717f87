// Handle registry, current context, stream/event lookup, stream creation and
// shutdown.
#include <pthread.h>

#include <algorithm>
#include <exception>

#include "common/env.h"
#include "runtime/event.h"
#include "runtime/internal.h"
#include "runtime/stream.h"

namespace hostrt {

namespace {
constexpr int kTagShift = 48;
constexpr uint64_t kIdMask = (1ull << kTagShift) - 1;
}  // namespace

int32_t device_count() {
  static const int32_t n =
      static_cast<int32_t>(common::env_int("PYHCCL_DEVICE_COUNT", 8, 1, 1024));
  return n;
}

namespace {
ForkLocal<Registry> g_registry;
std::atomic<uint64_t> g_next_id{1};

void on_fork_child() {
  registry_after_fork();
  devices_after_fork();
  arena_after_fork();
  reports_after_fork();
  host_blocks_after_fork();
  vmm_after_fork();
}

__attribute__((constructor)) void install_fork_handler() {
  pthread_atfork(nullptr, nullptr, on_fork_child);
}
}  // namespace

Registry &registry() { return g_registry.get(); }

void registry_after_fork() { g_registry.drop(); }

uint64_t next_handle_id() { return g_next_id.fetch_add(1, std::memory_order_relaxed); }

void *make_handle(HandleKind kind, uint64_t id) {
  return reinterpret_cast<void *>((static_cast<uint64_t>(kind) << kTagShift) | (id & kIdMask));
}

uint64_t handle_id(HandleKind kind, const void *h) {
  uint64_t v = reinterpret_cast<uintptr_t>(h);
  if ((v >> kTagShift) != static_cast<uint64_t>(kind)) return 0;
  return v & kIdMask;
}

uint64_t &current_ctx_id() {
  thread_local uint64_t id = 0;
  return id;
}

std::shared_ptr<Context> current_context() {
  uint64_t id = current_ctx_id();
  if (id == 0) return nullptr;
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.contexts.find(id);
  return it == r.contexts.end() ? nullptr : it->second;
}

bool valid_timeout(int32_t timeout_ms) { return timeout_ms >= -1; }

std::shared_ptr<Stream> lookup_stream(aclrtStream stream, const char *api, aclError *err) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  if (stream == nullptr) {
    uint64_t cid = current_ctx_id();
    auto it = cid ? r.contexts.find(cid) : r.contexts.end();
    if (it == r.contexts.end()) {
      *err = ACL_FAIL(ACL_ERROR_RT_CONTEXT_NULL,
                  "%s: stream is NULL (default stream) but no device is set on this thread "
                  "(call aclrtSetDevice first)",
                  api);
      return nullptr;
    }
    return it->second->default_stream;
  }
  uint64_t id = handle_id(HandleKind::kStream, stream);
  auto it = id ? r.streams.find(id) : r.streams.end();
  if (it == r.streams.end()) {
    *err = ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "%s: stream %p is not a live stream", api, stream);
    return nullptr;
  }
  return it->second;
}

std::shared_ptr<Event> lookup_event(aclrtEvent event, const char *api, aclError *err) {
  if (event == nullptr) {
    *err = ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", api);
    return nullptr;
  }
  Registry &r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  uint64_t id = handle_id(HandleKind::kEvent, event);
  auto it = id ? r.events.find(id) : r.events.end();
  if (it == r.events.end()) {
    *err = ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "%s: event %p is not a live event", api, event);
    return nullptr;
  }
  return it->second;
}

std::shared_ptr<Stream> new_stream(const Context &ctx, bool is_default, uint32_t priority,
                                   uint32_t flags, const char *api) {
  Registry &r = registry();
  uint64_t id = next_handle_id();
  std::shared_ptr<Stream> s;
  try {
    s = std::make_shared<Stream>(id, ctx.device, ctx.id, is_default, priority, flags);
  } catch (const std::exception &e) {  // std::thread failed (out of threads or memory)
    ACL_FAIL(ACL_ERROR_BAD_ALLOC, "%s: cannot start a stream worker thread: %s", api, e.what());
    return nullptr;
  }
  std::lock_guard<std::mutex> lk(r.mu);
  r.streams.emplace(id, s);
  return s;
}

void shutdown_streams(const std::vector<std::shared_ptr<Stream>> &streams) {
  for (const auto &s : streams) {
    forget_stream_subscriptions(s->id);
    s->close_and_join();
  }
}

// Removes from the registry (lock held) every stream owned by context `cid`
// and the context itself; returns the streams to shut down.
void unregister_context_locked(Registry &r, uint64_t cid,
                               std::vector<std::shared_ptr<Stream>> *out) {
  for (auto it = r.streams.begin(); it != r.streams.end();) {
    if (it->second->ctx_id == cid) {
      out->push_back(std::move(it->second));
      it = r.streams.erase(it);
    } else {
      ++it;
    }
  }
  r.contexts.erase(cid);
}

aclError destroy_all_devices(const char *api) {
  if (Stream::current_worker() != nullptr) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: must not be called from a stream task", api);
  }
  Registry &r = registry();
  std::vector<std::shared_ptr<Stream>> doomed;
  std::vector<std::shared_ptr<Context>> contexts;
  {
    std::lock_guard<std::mutex> lk(r.mu);
    for (auto &kv : r.contexts) contexts.push_back(kv.second);
    for (auto &c : contexts) unregister_context_locked(r, c->id, &doomed);
    for (auto &d : r.devices) d = DeviceState{};
  }
  shutdown_streams(doomed);
  return ACL_SUCCESS;
}

std::shared_ptr<Context> create_context(int32_t device, bool is_default, const char *api) {
  Registry &r = registry();
  auto ctx = std::make_shared<Context>();
  ctx->id = next_handle_id();
  ctx->device = device;
  ctx->is_default = is_default;
  ctx->default_stream = new_stream(*ctx, /*is_default=*/true, 0, 0, api);
  if (!ctx->default_stream) return nullptr;
  std::lock_guard<std::mutex> lk(r.mu);
  r.contexts.emplace(ctx->id, ctx);
  return ctx;
}

bool called_from_worker_of(const std::vector<std::shared_ptr<Stream>> &streams, const char *api) {
  Stream *me = Stream::current_worker();
  if (me == nullptr) return false;
  for (const auto &s : streams) {
    if (s.get() == me) {
      ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: must not be called from a task of a stream it destroys",
           api);
      return true;
    }
  }
  return false;
}

}  // namespace hostrt
