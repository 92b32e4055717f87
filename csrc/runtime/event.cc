// Event objects and the aclrt*Event entry points.
#include "runtime/event.h"

#include <cmath>

#include "common/clock.h"
#include "runtime/internal.h"
#include "runtime/stream.h"

namespace hostrt {

uint64_t Event::issue(bool record) {
  std::lock_guard<std::mutex> lk(mu_);
  last_is_record_ = record;
  pending_.insert(++gen_);
  return gen_;
}

void Event::complete(uint64_t g, bool record) {
  int64_t t = common::now_ns();
  std::lock_guard<std::mutex> lk(mu_);
  pending_.erase(g);
  if (g > done_gen_) {
    done_gen_ = g;
    done_ns_ = record ? t : 0;
  }
  if (waiters_ > 0) cv_.notify_all();
}

bool Event::wait(uint64_t g, int64_t deadline_ns) {
  std::unique_lock<std::mutex> lk(mu_);
  auto done = [&] { return pending_.count(g) == 0; };
  if (done()) return true;
  ++waiters_;
  bool ok;
  if (deadline_ns == INT64_MAX) {
    cv_.wait(lk, done);
    ok = true;
  } else {
    ok = cv_.wait_until(lk, common::to_time_point(deadline_ns), done);
  }
  --waiters_;
  return ok;
}

uint64_t Event::latest() {
  std::lock_guard<std::mutex> lk(mu_);
  return gen_;
}

Event::Snapshot Event::snapshot() {
  std::lock_guard<std::mutex> lk(mu_);
  return Snapshot{gen_, last_is_record_, done_gen_, done_ns_};
}

namespace {

constexpr uint32_t kKnownEventFlags = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS |
                                      ACL_EVENT_TIME_LINE | ACL_EVENT_DEVICE_USE_ONLY |
                                      ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;

aclError create_event(aclrtEvent *event, uint32_t flag, const char *api) {
  if (event == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", api);
  if (aclError rc = check_not_finalized(api)) return rc;
  if ((flag & ~kKnownEventFlags) != 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: flag (0x%x) has unknown bits", api, flag);
  }
  Registry &r = registry();
  uint64_t id = next_handle_id();
  std::lock_guard<std::mutex> lk(r.mu);
  r.events.emplace(id, std::make_shared<Event>(id, flag));
  *event = make_handle(HandleKind::kEvent, id);
  return ACL_SUCCESS;
}

// Record and reset are stream tasks that complete one generation.
aclError issue(aclrtEvent event, aclrtStream stream, bool record, const char *api) {
  aclError err;
  std::shared_ptr<Event> ev = lookup_event(event, api, &err);
  if (!ev) return err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  uint64_t g = ev->issue(record);
  // The generation completes in the step that counts the task finished, so a
  // thread woken by the event also finds the stream past it (aclrtStreamQuery).
  aclError rc = s->push_marker(api, [ev, g, record]() { ev->complete(g, record); });
  // A push can only fail on a closing stream: complete the generation so
  // nobody waits on it forever.
  if (rc != ACL_SUCCESS) ev->complete(g, false);
  return rc;
}

bool recorded_complete(const Event::Snapshot &s) {
  return s.gen > 0 && s.last_is_record && s.done_gen >= s.gen;
}

aclError sync_event(aclrtEvent event, int32_t timeout, const char *api) {
  if (!valid_timeout(timeout)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: timeout (%d) must be -1, 0 or positive ms", api,
                timeout);
  }
  aclError err;
  std::shared_ptr<Event> ev = lookup_event(event, api, &err);
  if (!ev) return err;
  uint64_t g = ev->latest();
  if (g == 0) return ACL_SUCCESS;  // never recorded: nothing to wait for
  if (!ev->wait(g, common::deadline_after_ms(timeout))) {
    return ACL_FAIL(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "%s: event not complete after %d ms", api,
                timeout);
  }
  return ACL_SUCCESS;
}

}  // namespace
}  // namespace hostrt

using namespace hostrt;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event) {
  return create_event(event, ACL_EVENT_SYNC, "aclrtCreateEvent");
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
  return create_event(event, flag, "aclrtCreateEventWithFlag");
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event) {
  uint64_t id = handle_id(HandleKind::kEvent, event);
  Registry &r = registry();
  std::shared_ptr<Event> ev;  // released after the lock (tasks may still hold it)
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = id ? r.events.find(id) : r.events.end();
    if (it == r.events.end()) {
      return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyEvent: event %p is not a live event",
                  event);
    }
    ev = std::move(it->second);
    r.events.erase(it);
  }
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  return issue(event, stream, true, "aclrtRecordEvent");
}

ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  return issue(event, stream, false, "aclrtResetEvent");
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status) {
  if (status == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtQueryEvent: status is NULL");
  aclError err;
  std::shared_ptr<Event> ev = lookup_event(event, "aclrtQueryEvent", &err);
  if (!ev) return err;
  Event::Snapshot s = ev->snapshot();
  // Nothing outstanding (including never recorded) counts as complete.
  *status = s.done_gen >= s.gen ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
                                                   aclrtEventRecordedStatus *status) {
  if (status == nullptr) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: status is NULL");
  }
  aclError err;
  std::shared_ptr<Event> ev = lookup_event(event, "aclrtQueryEventStatus", &err);
  if (!ev) return err;
  // COMPLETE only once the latest record has actually run.
  *status = recorded_complete(ev->snapshot()) ? ACL_EVENT_RECORDED_STATUS_COMPLETE
                                              : ACL_EVENT_RECORDED_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event) {
  return sync_event(event, -1, "aclrtSynchronizeEvent");
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
  return sync_event(event, timeout, "aclrtSynchronizeEventWithTimeout");
}

ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
                                                   aclrtEvent endEvent) {
  const char *api = "aclrtEventElapsedTime";
  if (ms == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: ms is NULL", api);
  aclError err;
  std::shared_ptr<Event> a = lookup_event(startEvent, api, &err);
  if (!a) return err;
  std::shared_ptr<Event> b = lookup_event(endEvent, api, &err);
  if (!b) return err;
  Event::Snapshot sa = a->snapshot(), sb = b->snapshot();
  if (!recorded_complete(sa)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: startEvent has no completed record", api);
  }
  if (!recorded_complete(sb)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: endEvent has no completed record", api);
  }
  *ms = static_cast<float>(static_cast<double>(sb.done_ns - sa.done_ns) / 1e6);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  const char *api = "aclrtStreamWaitEvent";
  aclError err;
  std::shared_ptr<Event> ev = lookup_event(event, api, &err);
  if (!ev) return err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  uint64_t g = ev->latest();  // the most recent record as of this call
  if (g == 0) return ACL_SUCCESS;
  return s->push(
      [ev, g]() {
        ev->wait(g, INT64_MAX);
        return ACL_SUCCESS;
      },
      /*always_run=*/true, api);
}

}  // extern "C"
