// aclrt*Stream entry points and the hostrt stream interface used by libhccl.
#include <atomic>

#include "common/clock.h"
#include "runtime/internal.h"
#include "runtime/stream.h"

namespace hostrt {
namespace {

constexpr uint32_t kKnownStreamFlags = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC |
                                       ACL_STREAM_PERSISTENT | ACL_STREAM_HUGE |
                                       ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;
constexpr uint32_t kMaxPriority = 7;

aclError create_stream(aclrtStream *stream, uint32_t priority, uint32_t flag, const char *api) {
  if (stream == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL", api);
  if (aclError rc = check_not_finalized(api)) return rc;
  if (priority > kMaxPriority) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: priority (%u) must be in [0, %u]", api, priority,
                kMaxPriority);
  }
  if ((flag & ~kKnownStreamFlags) != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: flag (0x%x) has unknown bits", api, flag);
  }
  std::shared_ptr<Context> ctx = current_context();
  if (!ctx) {
    return ACL_FAIL(ACL_ERROR_RT_CONTEXT_NULL,
                "%s: no current context on this thread (call aclrtSetDevice first)", api);
  }
  std::shared_ptr<Stream> s = new_stream(*ctx, /*is_default=*/false, priority, flag, api);
  if (!s) return ACL_ERROR_BAD_ALLOC;
  *stream = make_handle(HandleKind::kStream, s->id);
  return ACL_SUCCESS;
}

aclError sync_stream(aclrtStream stream, int32_t timeout, const char *api) {
  if (!valid_timeout(timeout)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: timeout (%d) must be -1, 0 or positive ms", api,
                timeout);
  }
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  if (s->on_worker()) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: called from a task of the same stream (deadlock)",
                api);
  }
  if (!s->wait_drained(common::deadline_after_ms(timeout))) {
    return ACL_FAIL(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "%s: stream not drained after %d ms", api,
                timeout);
  }
  std::string msg;
  aclError rc = s->take_error(&msg);
  if (rc != ACL_SUCCESS) set_error("%s", msg.c_str());  // the task's own message
  return rc;
}

std::atomic<uint64_t> g_interrupts{0};

}  // namespace

uint64_t interrupts() { return g_interrupts.load(std::memory_order_acquire); }

Stream *resolve_stream(aclrtStream stream, const char *api, aclError *err) {
  aclError dummy;
  std::shared_ptr<Stream> s = lookup_stream(stream, api ? api : "resolve_stream", err ? err : &dummy);
  return s.get();  // the registry keeps it alive until aclrtDestroyStream
}

std::shared_ptr<Stream> acquire_stream(aclrtStream stream, const char *api, aclError *err) {
  aclError dummy;
  return lookup_stream(stream, api ? api : "acquire_stream", err ? err : &dummy);
}

aclError enqueue(Stream *stream, Task task, const void *tag) {
  if (stream == nullptr) return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "enqueue: stream is NULL");
  return stream->push(std::move(task), /*always_run=*/false, "enqueue", nullptr,
                      Stream::kSelfTraced, tag);
}

const void *next_task_tag() {
  Stream *s = Stream::current_worker();
  return s ? s->next_tag() : nullptr;
}

bool claim_stream(Stream *stream) { return stream != nullptr && stream->claim_idle(); }
void run_claimed(Stream *stream, Task task) { stream->run_claimed(std::move(task)); }
void hand_over(Stream *stream, Task task) { stream->hand_over(std::move(task)); }

int32_t stream_device(const Stream *stream) { return stream ? stream->device : -1; }

bool stream_wait_idle(Stream *stream, int64_t deadline_ns) {
  return stream != nullptr && stream->wait_drained(deadline_ns);
}

uint64_t stream_id(const Stream *stream) { return stream ? stream->id : 0; }

uint64_t current_stream_id() {
  const Stream *s = Stream::current_worker();
  return s ? s->id : 0;
}

bool task_holds_caller() {
  Stream *s = Stream::current_worker();
  return s == nullptr || s->holds_caller();
}

int32_t current_device() {
  std::shared_ptr<Context> ctx = current_context();
  return ctx ? ctx->device : -1;
}

}  // namespace hostrt

using namespace hostrt;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream) {
  return create_stream(stream, 0, 0, "aclrtCreateStream");
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                                         uint32_t flag) {
  return create_stream(stream, priority, flag, "aclrtCreateStreamWithConfig");
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream) {
  const char *api = "aclrtDestroyStream";
  if (stream == nullptr) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL (the default stream cannot be destroyed)",
                api);
  }
  uint64_t id = handle_id(HandleKind::kStream, stream);
  std::shared_ptr<Stream> s;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = id ? r.streams.find(id) : r.streams.end();
    if (it == r.streams.end()) {
      return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "%s: stream %p is not a live stream", api, stream);
    }
    if (it->second->on_worker()) {
      return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: called from a task of the same stream", api);
    }
    s = std::move(it->second);
    r.streams.erase(it);
  }
  shutdown_streams({s});  // runs what is queued, then joins the worker
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream) {
  return sync_stream(stream, -1, "aclrtSynchronizeStream");
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  return sync_stream(stream, timeout, "aclrtSynchronizeStreamWithTimeout");
}

ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
  const char *api = "aclrtStreamQuery";
  if (status == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: status is NULL", api);
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  *status = s->idle() ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
  const char *api = "aclrtSetStreamFailureMode";
  if (mode > 1) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: mode (%llu) must be 0 (continue) or 1 (stop)", api,
                static_cast<unsigned long long>(mode));
  }
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  s->set_failure_mode(mode);
  return ACL_SUCCESS;
}

}  // extern "C"

// Called from a SIGINT handler (the Python binding installs one): only an
// atomic increment, which is async-signal-safe.
extern "C" HOSTRT_API void hostrtNoteInterrupt(void) {
  hostrt::g_interrupts.fetch_add(1, std::memory_order_acq_rel);
}

extern "C" HOSTRT_API uint64_t hostrtInterruptCount(void) { return hostrt::interrupts(); }

// aclrtSynchronizeStream that returns early (*interrupted = 1, ACL_SUCCESS)
// when hostrtNoteInterrupt is called meanwhile, after `since` (a count from
// hostrtInterruptCount), so that the caller can handle the signal.
extern "C" HOSTRT_API aclError hostrtSynchronizeStreamInterruptible(aclrtStream stream, uint64_t since,
                                                                   int32_t *interrupted) {
  using namespace hostrt;
  const char *api = "aclrtSynchronizeStream";
  if (interrupted == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: interrupted is NULL", api);
  *interrupted = 0;
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  if (s->on_worker()) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: called from a task of the same stream (deadlock)", api);
  }
  // Interrupted also when the stream drained meanwhile (a task that failed on
  // the interrupt may finish the stream first): Ctrl-C wins, and the task's
  // error stays for the next synchronize.
  if (!s->wait_drained(INT64_MAX, &since) || interrupts() != since) {
    *interrupted = 1;
    return ACL_SUCCESS;
  }
  std::string msg;
  aclError rc = s->take_error(&msg);
  if (rc != ACL_SUCCESS) set_error("%s", msg.c_str());
  return rc;
}

extern "C" HOSTRT_API aclError hostrtStreamMark(aclrtStream stream, uint64_t *streamId,
                                                uint64_t *mark, uint64_t *finished) {
  using namespace hostrt;
  const char *api = "hostrtStreamMark";
  if (streamId == nullptr || mark == nullptr) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", api,
                    streamId == nullptr ? "streamId" : "mark");
  }
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  uint64_t done;
  s->counts(mark, finished != nullptr ? finished : &done);
  *streamId = s->id;
  return ACL_SUCCESS;
}

extern "C" HOSTRT_API aclError hostrtStreamFinished(uint64_t streamId, uint64_t *finished) {
  using namespace hostrt;
  if (finished == nullptr) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "hostrtStreamFinished: finished is NULL");
  }
  std::shared_ptr<Stream> s;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.streams.find(streamId);
    if (it != r.streams.end()) s = it->second;
  }
  uint64_t pushed;
  if (s)
    s->counts(&pushed, finished);
  else
    *finished = UINT64_MAX;  // destroyed, so drained
  return ACL_SUCCESS;
}
