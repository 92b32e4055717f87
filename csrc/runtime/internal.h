// Internal declarations shared by the runtime's .cc files (not used by libhccl).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/hostrt.h"

namespace hostrt {

// Sets the thread's recent error message and returns `code`; lets entry points
// write `return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtFoo: ...")`.
aclError fail(aclError code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// The same as an expression macro, the twin of libhccl's HCCL_FAIL (hccl/fail.h).
#define ACL_FAIL(code, ...) ::hostrt::fail((code), __VA_ARGS__)
// ACL_SUCCESS unless aclFinalize ran and aclInit did not follow: then calls that
// create (aclrtSetDevice, aclrtMalloc, streams, events, contexts) fail, naming `api`.
aclError check_not_finalized(const char *api);
// Forgets the thread's recent error message (aclGetRecentErrMsg -> NULL).
void clear_error();
// True if this thread has a recent error message.
bool has_error();

// Number of logical devices: PYHCCL_DEVICE_COUNT (1..1024), default 8.
int32_t device_count();

// A lazily created, never destroyed process singleton that a fork() child
// drops: the parent's worker threads and held locks do not exist there, and
// the shared arena must not be handed out twice. drop() only stores (it runs
// in the atfork child handler); the child re-creates on next use.
template <typename T>
class ForkLocal {
 public:
  constexpr ForkLocal() = default;
  T &get() {
    T *p = ptr_.load(std::memory_order_acquire);
    if (p != nullptr) return *p;
    std::lock_guard<std::mutex> lk(create_mu_);
    p = ptr_.load(std::memory_order_acquire);
    if (p == nullptr) {
      p = new T();
      ptr_.store(p, std::memory_order_release);
    }
    return *p;
  }
  void drop() {
    // The old one is abandoned, not destroyed (its threads are gone); it stays
    // referenced so leak checkers do not report it.
    retired_ = ptr_.load(std::memory_order_relaxed);
    ptr_.store(nullptr, std::memory_order_relaxed);
    new (&create_mu_) std::mutex();  // may have been held at fork
  }

 private:
  std::atomic<T *> ptr_{nullptr};
  T *retired_ = nullptr;
  std::mutex create_mu_;
};

// Fork-child hooks of each subsystem (registered with pthread_atfork).
void registry_after_fork();
void arena_after_fork();
void reports_after_fork();
void devices_after_fork();
void host_blocks_after_fork();
void vmm_after_fork();

// Handle ids: process-wide, never reused (not even across fork).
uint64_t next_handle_id();

struct Event;
struct Context;

// A context: a device plus its own default stream. Every device has one
// implicit "default" context (aclrtSetDevice); aclrtCreateContext adds more.
struct Context {
  uint64_t id = 0;
  int32_t device = 0;
  bool is_default = false;
  std::shared_ptr<Stream> default_stream;
};

// Per-device bookkeeping (aclrtSetDevice reference count).
struct DeviceState {
  uint32_t refs = 0;
  uint64_t default_ctx = 0;  // context id, 0 when the device is not set
  int32_t sat_mode = 0;      // aclrtFloatOverflowMode
};

// Every live handle, by id. User handles are ids (never reused), not pointers,
// so a destroyed or garbage handle is detected instead of dereferenced.
struct Registry {
  Registry() : devices(static_cast<size_t>(device_count())) {}
  std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<Context>> contexts;
  std::unordered_map<uint64_t, std::shared_ptr<Stream>> streams;
  std::unordered_map<uint64_t, std::shared_ptr<Event>> events;
  std::vector<DeviceState> devices;
};
// The process-wide registry (intentionally never destroyed: worker threads may
// still run while static destructors do at exit).
Registry &registry();

// Handle <-> id. Each kind has its own tag in the top bits so a stream handle
// passed as an event is rejected, and no handle is a dereferenceable address.
enum class HandleKind : uint64_t { kContext = 0xC7, kStream = 0x57, kEvent = 0xE7, kPhysical = 0x9D };
void *make_handle(HandleKind kind, uint64_t id);
// 0 if `h` is not a handle of that kind.
uint64_t handle_id(HandleKind kind, const void *h);

// The calling thread's current context id (0 = none); validated on use.
uint64_t &current_ctx_id();
// The current context if it is still alive, else nullptr.
std::shared_ptr<Context> current_context();

// Resolves a stream argument (NULL = current context's default stream) and
// keeps it alive for the caller. On failure sets the message (naming `api`),
// stores the code in *err and returns nullptr.
std::shared_ptr<Stream> lookup_stream(aclrtStream stream, const char *api, aclError *err);
// Same for events (NULL is an error).
std::shared_ptr<Event> lookup_event(aclrtEvent event, const char *api, aclError *err);

// Creates a stream (worker thread started) owned by `ctx`, registers it and
// returns it; nullptr (message naming `api`) if the thread cannot start.
std::shared_ptr<Stream> new_stream(const Context &ctx, bool is_default, uint32_t priority,
                                   uint32_t flags, const char *api);

// Removes context `cid` and every stream it owns from the registry (r.mu
// held); the streams go to *out for shutdown_streams.
void unregister_context_locked(Registry &r, uint64_t cid,
                               std::vector<std::shared_ptr<Stream>> *out);
// Creates and registers a context on `device` with its default stream;
// nullptr (message naming `api`) if its stream cannot start.
std::shared_ptr<Context> create_context(int32_t device, bool is_default, const char *api);
// True (and sets a message naming `api`) if the calling thread is the worker
// of one of `streams`: shutting them down from there would deadlock.
bool called_from_worker_of(const std::vector<std::shared_ptr<Stream>> &streams, const char *api);

// Drains and joins the given streams (registry lock must NOT be held).
void shutdown_streams(const std::vector<std::shared_ptr<Stream>> &streams);
// Tears down every device, context and stream (aclFinalize); fails when
// called from a stream task.
aclError destroy_all_devices(const char *api);

// Drops report subscriptions of a stream that is going away (callback.cc).
void forget_stream_subscriptions(uint64_t stream_id);

// Validates the int32 ms timeout convention (-1 forever, 0 poll, >0 ms).
bool valid_timeout(int32_t timeout_ms);

}  // namespace hostrt
