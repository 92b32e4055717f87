// Stream worker: pops tasks in order, runs them outside the lock, records the
// first failure with the message the task left on the worker thread.
#include "runtime/stream.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <exception>

#include "common/clock.h"
#include "common/env.h"
#include "runtime/internal.h"

namespace hostrt {
namespace {
thread_local Stream *t_worker = nullptr;
thread_local bool t_worker_thread = false;  // a stream's own worker (not a synchronizer running its tasks)
// Set by hostrtFailCurrentTask during a task; read when the task returns.
thread_local aclError t_task_failure = ACL_SUCCESS;
thread_local std::string *t_task_failure_msg = nullptr;

// ACL_STREAM_FAST_SYNC streams (or every stream, PYHCCL_FAST_SYNC=1) defer
// waking their workers (stream.h); the tick is PYHCCL_FAST_SYNC_TICK_US.
int64_t fast_sync_tick_ns(uint32_t flags) {
  if ((flags & ACL_STREAM_FAST_SYNC) == 0 && common::env_int("PYHCCL_FAST_SYNC", 0, 0, 1) == 0) return 0;
  return 1000 * common::env_int("PYHCCL_FAST_SYNC_TICK_US", 1000, 1, 1000000000);
}
}  // namespace

Stream::Stream(uint64_t id_, int32_t device_, uint64_t ctx_id_, bool is_default_,
               uint32_t priority_, uint32_t flags_)
    : id(id_), device(device_), ctx_id(ctx_id_), is_default(is_default_), priority(priority_),
      flags(flags_), tick_ns_(fast_sync_tick_ns(flags_)) {
  worker_ = std::thread([this] { run(); });
}

Stream::~Stream() { close_and_join(); }

void Stream::trace_task(const char *api, uint64_t bytes, int64_t start_ns, bool ok) const {
  TraceEvent ev;
  ev.name = api;
  ev.device = device;
  ev.stream = id;
  ev.start_ns = start_ns;
  ev.end_ns = common::now_ns();
  ev.bytes = bytes;
  ev.ok = ok;
  trace_record(ev);
}

aclError Stream::push(Task task, bool always_run, const char *api,
                      std::function<void()> finish, uint64_t bytes, const void *tag) {
  if (!task) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: task is empty", api);
  std::unique_lock<std::mutex> lk(mu_);
  if (closing_) {
    return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "%s: stream is being destroyed", api);
  }
  queue_.push_back(Item{std::move(task), always_run, std::move(finish),
                        bytes == kSelfTraced ? nullptr : api, bytes, tag});
  ++pushed_;
  // Whoever runs a task now takes this one next or wakes the worker for it;
  // while a deferral stands, the synchronizer or the worker's tick does. An
  // event's task ends the deferral: another stream or an event's waiter
  // depends on it, not only this stream's synchronizer.
  if (always_run) deferring_ = false;
  const bool wake = !running_ && !deferring_ && (always_run || !defer_wake());
  lk.unlock();
  if (wake) work_cv_.notify_one();
  return ACL_SUCCESS;
}

aclError Stream::push_marker(const char *api, std::function<void()> finish) {
  {
    std::unique_lock<std::mutex> lk(mu_);
    if (closing_) return ACL_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "%s: stream is being destroyed", api);
    if (!running_ && queue_.empty()) {  // everything pushed so far has finished
      ++pushed_;
      finish();
      ++finished_;
      lk.unlock();
      if (trace_on()) trace_task(api, 0, common::now_ns(), true);
      return ACL_SUCCESS;
    }
  }
  return push([]() { return ACL_SUCCESS; }, /*always_run=*/true, api, std::move(finish), 0);
}

bool Stream::defer_wake() {
  // Only while the worker ticks (so it takes the task a tick later if no
  // synchronize comes), and not for a push from a stream task, which will not
  // synchronize this stream.
  if (!ticking_ || !caller_waits_ || t_worker != nullptr || closing_) return false;
  deferring_ = true;
  deferred_at_ = common::now_ns();
  return true;
}

bool Stream::worker_may_take() const {
  if (running_ || queue_.empty()) return false;
  // The clock only for a deferred task: streams without the flag never read it here.
  return !deferring_ || closing_ || common::now_ns() - deferred_at_ >= tick_ns_;
}

void Stream::run() {
  t_worker = this;
  t_worker_thread = true;
  std::unique_lock<std::mutex> lk(mu_);
  int idle_ticks = 0;  // ticks in a row with nothing pushed
  uint64_t seen = pushed_;
  for (;;) {
    bool slept = false;
    while (!worker_may_take() && !(queue_.empty() && closing_)) {
      // While the caller works in round trips, look every tick instead of
      // sleeping until woken (a deferred task: a tick after it came); after
      // 100 ticks in which nothing was pushed, sleep until woken.
      if (tick_ns_ > 0 && caller_waits_ && idle_ticks < 100) {
        const int64_t wait_ns = deferring_ ? deferred_at_ + tick_ns_ - common::now_ns() : tick_ns_;
        ticking_ = true;
        work_cv_.wait_for(lk, std::chrono::nanoseconds(std::max<int64_t>(wait_ns, 1000)));
        ticking_ = false;
      } else {
        work_cv_.wait(lk);
      }
      idle_ticks = pushed_ != seen ? 0 : idle_ticks + 1;
      seen = pushed_;
      slept = true;
    }
    if (queue_.empty()) break;  // closing and drained
    if (deferring_) {  // no synchronize came within a tick: back to waking the worker
      deferring_ = false;
      caller_waits_ = false;
      slept = false;
    }
    if (slept) {
      // Just woken for new work: let the thread that pushed it go first; if
      // it synchronizes now, it runs the work itself (no hand-off back and forth).
      lk.unlock();
      sched_yield();
      lk.lock();
      if (running_ || queue_.empty()) continue;
    }
    run_front(lk);
  }
  t_worker = nullptr;
}

void Stream::run_front(std::unique_lock<std::mutex> &lk) {
  Item item = std::move(queue_.front());
  queue_.pop_front();
  running_ = true;
  run_item(lk, item);
}

bool Stream::claim_idle() {
  std::lock_guard<std::mutex> lk(mu_);
  if (t_worker != nullptr || closing_ || running_ || !queue_.empty() ||
      (failure_mode == 1 && first_error_ != ACL_SUCCESS))
    return false;
  running_ = true;
  ++pushed_;
  return true;
}

void Stream::run_claimed(Task task) {
  // Not locked: claim_idle() found no error that would skip the task, and none
  // comes while the claim stands (no other task runs).
  std::unique_lock<std::mutex> lk(mu_, std::defer_lock);
  Item item{std::move(task), false, nullptr};
  run_item(lk, item);
  wake_worker_if_needed();
}

void Stream::hand_over(Task task) {
  std::unique_lock<std::mutex> lk(mu_);
  queue_.push_front(Item{std::move(task), false, nullptr});
  running_ = false;
  if (waiters_ > 0) {  // a synchronizer may run it itself
    wake_at_ = UINT64_MAX;
    done_cv_.notify_all();
  }
  const bool wake = !deferring_ && !defer_wake();
  lk.unlock();
  if (wake) work_cv_.notify_one();
}

void Stream::run_item(std::unique_lock<std::mutex> &lk, Item &item) {
  bool skip = false;
  if (lk.owns_lock()) {
    skip = !item.always_run && failure_mode == 1 && first_error_ != ACL_SUCCESS;
    lk.unlock();
  }

  Stream *outer = t_worker;  // a synchronizer runs the task as the stream's worker would
  t_worker = this;
  aclError rc = ACL_SUCCESS;
  std::string msg;
  const int64_t traced_at = !skip && item.api != nullptr && trace_on() ? common::now_ns() : 0;
  if (!skip) {
    clear_error();
    std::string failure_msg;
    t_task_failure = ACL_SUCCESS;
    t_task_failure_msg = &failure_msg;
    try {
      rc = item.fn();
    } catch (const std::exception &e) {
      rc = ACL_FAIL(ACL_ERROR_RT_INTERNAL_ERROR, "stream task threw: %s", e.what());
    } catch (...) {
      rc = ACL_FAIL(ACL_ERROR_RT_INTERNAL_ERROR, "stream task threw an exception");
    }
    t_task_failure_msg = nullptr;
    if (rc == ACL_SUCCESS && t_task_failure != ACL_SUCCESS) {
      rc = t_task_failure;
      set_error("%s", failure_msg.c_str());
    }
    t_task_failure = ACL_SUCCESS;
    if (rc != ACL_SUCCESS) {
      msg = has_error() ? last_error() : "";
      if (msg.empty()) msg = "stream task failed with error " + std::to_string(rc);
    }
  }
  if (traced_at != 0) trace_task(item.api, item.bytes, traced_at, rc == ACL_SUCCESS);
  item.fn = nullptr;  // release captured state outside the lock
  t_worker = outer;

  lk.lock();
  if (rc != ACL_SUCCESS && first_error_ == ACL_SUCCESS) {
    first_error_ = rc;
    first_msg_ = std::move(msg);
  }
  if (item.finish) item.finish();  // same step as the count: see push()
  ++finished_;
  running_ = false;
  if (t_worker_thread && waiters_ == 0) caller_waits_ = false;  // nobody waited for it
  // Synchronizers wake when the first of them is done, not after every task:
  // a wake-up per task would cost a thread switch each on a busy stream.
  if (waiters_ > 0 && (finished_ >= wake_at_ || rc != ACL_SUCCESS)) {
    wake_at_ = UINT64_MAX;
    done_cv_.notify_all();
  }
}

void Stream::wake_worker_if_needed() {
  // The worker sleeps while another thread runs a task; it takes over what
  // that thread leaves queued. Not after every task a synchronizer runs: it
  // goes on with the next itself, and a wake-up per task would cost two thread
  // switches each (the worker wakes, finds the stream busy, sleeps again).
  if (!queue_.empty() || closing_) work_cv_.notify_one();
}

bool Stream::wait_drained(int64_t deadline_ns, const uint64_t *irq) {
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t target = pushed_;
  // Running a task here could overrun a deadline; and never from a stream
  // task (see the header).
  const bool may_run = t_worker == nullptr && deadline_ns == INT64_MAX;
  bool ran = false;
  struct Leave {  // whatever way the wait ends
    Stream *s;
    const bool &ran;
    ~Leave() {
      if (ran) s->wake_worker_if_needed();
    }
  } leave{this, ran};
  // Had to wait (or run): the caller synchronizes right after its pushes.
  if (finished_ < target) caller_waits_ = true;
  while (finished_ < target) {
    if (irq != nullptr && interrupts() != *irq) return false;
    if (deferring_) {  // this thread runs the tasks, or, where it may not, the worker
      deferring_ = false;
      if (!may_run) work_cv_.notify_one();
    }
    if (may_run && !running_ && !queue_.empty()) {
      run_front(lk);
      ran = true;
      continue;
    }
    const int64_t now = common::now_ns();
    if (deadline_ns != INT64_MAX && now >= deadline_ns) return false;
    int64_t until = deadline_ns;
    if (irq != nullptr && until - now > 100000000) until = now + 100000000;  // notice interrupts
    ++waiters_;
    if (target < wake_at_) wake_at_ = target;
    if (until == INT64_MAX)
      done_cv_.wait(lk);
    else
      done_cv_.wait_until(lk, common::to_time_point(until));
    --waiters_;
  }
  return true;
}

bool Stream::idle() {
  std::lock_guard<std::mutex> lk(mu_);
  return finished_ == pushed_;
}

void Stream::counts(uint64_t *pushed, uint64_t *finished) {
  std::lock_guard<std::mutex> lk(mu_);
  *pushed = pushed_;
  *finished = finished_;
}

aclError Stream::take_error(std::string *msg) {
  std::lock_guard<std::mutex> lk(mu_);
  aclError rc = first_error_;
  if (msg) *msg = first_msg_;
  first_error_ = ACL_SUCCESS;
  first_msg_.clear();
  return rc;
}

void Stream::set_failure_mode(uint64_t mode) {
  std::lock_guard<std::mutex> lk(mu_);
  failure_mode = mode;
}

void Stream::close_and_join() {
  std::lock_guard<std::mutex> jl(join_mu_);
  if (joined_) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    closing_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) {
    // Never reached from the worker itself (entry points refuse that), but
    // detaching is the only safe choice if it happens.
    if (worker_.get_id() == std::this_thread::get_id()) {
      worker_.detach();
    } else {
      worker_.join();
    }
  }
  joined_ = true;
}

const void *Stream::next_tag() {
  std::lock_guard<std::mutex> lk(mu_);
  return queue_.empty() ? nullptr : queue_.front().tag;
}

bool Stream::on_worker() const { return t_worker == this; }

bool Stream::holds_caller() {
  if (!t_worker_thread) return true;
  std::lock_guard<std::mutex> lk(mu_);
  return waiters_ > 0;
}

bool fail_current_task(aclError code, const char *message) {
  if (t_task_failure_msg == nullptr) return false;
  if (t_task_failure == ACL_SUCCESS) {  // the first failure of the task counts
    t_task_failure = code;
    *t_task_failure_msg = message;
  }
  return true;
}

Stream *Stream::current_worker() { return t_worker; }

}  // namespace hostrt

extern "C" HOSTRT_API aclError hostrtFailCurrentTask(aclError code, const char *message) {
  const char *api = "hostrtFailCurrentTask";
  if (code == ACL_SUCCESS) {
    return hostrt::fail(ACL_ERROR_INVALID_PARAM, "%s: code is ACL_SUCCESS", api);
  }
  std::string msg = message != nullptr && message[0] != '\0'
                        ? message
                        : "host function failed with error " + std::to_string(code);
  if (!hostrt::fail_current_task(code, msg.c_str())) {
    return hostrt::fail(ACL_ERROR_INVALID_PARAM, "%s: not called from a stream task", api);
  }
  return ACL_SUCCESS;
}
