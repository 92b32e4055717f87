// A stream: an in-order task queue drained by its own worker thread, or by a
// thread that synchronizes with it: a synchronize that finds the worker idle
// runs the queued tasks itself instead of waking the worker and sleeping (two
// thread hand-offs fewer; what a round trip of one small operation feels).
// One task runs at a time either way, in order.
//
// A stream created with ACL_STREAM_FAST_SYNC (or every stream, with
// PYHCCL_FAST_SYNC=1) also spares the wake-up of its worker when the caller
// synchronizes right after its pushes (round trips: one operation, then
// synchronize): a push onto the idle stream leaves the worker asleep, and the
// synchronize runs the task. The worker wakes, and the caller races it for the
// task, otherwise; on these 2 cores that cost up to half of a small round
// trip (docs/C_API.md). So that a task still runs
// if no synchronize comes (the caller computes, or waits on something else
// that needs it), the idle worker of such a stream looks at its queue every
// tick (PYHCCL_FAST_SYNC_TICK_US) while the caller works in round trips, and
// takes a task left a tick; such a task ends the pattern. An event's task
// ends a deferral at once (its waiters may be other streams or threads).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/hostrt.h"

namespace hostrt {

struct Stream {
  Stream(uint64_t id, int32_t device, uint64_t ctx_id, bool is_default, uint32_t priority,
         uint32_t flags);
  ~Stream();  // close_and_join() if still running
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  // Appends a task. `always_run` tasks (event record/wait/reset) run even when
  // the stream is in stop-on-failure mode after an error, so no other stream
  // waits forever on them. Fails (message names `api`) once the stream is closing.
  // `finish` (may be empty) runs on the worker after the task, under the
  // stream's lock, in the same step that counts the task finished: whoever
  // sees its effect (an event completing) also sees the stream past the task.
  // It must be short and must not call back into this stream.
  // `bytes`: what the task moves, for the trace (trace.h), which names the
  // task after `api` (so a static string); kSelfTraced: the task records
  // itself (HCCL operations).
  static constexpr uint64_t kSelfTraced = UINT64_MAX;
  // `tag`: what the task belongs to (next_tag()).
  aclError push(Task task, bool always_run, const char *api,
                std::function<void()> finish = nullptr, uint64_t bytes = 0,
                const void *tag = nullptr);
  // A marker (an event record or reset): `finish` alone, in stream order. On
  // an idle stream it runs at once on the calling thread, so recording an
  // event after work that is already done wakes no worker.
  aclError push_marker(const char *api, std::function<void()> finish);

  // Waits until every task pushed before the call has finished, or until
  // deadline_ns (common::now_ns units, INT64_MAX = forever). True if drained.
  // Runs queued tasks on the calling thread while the worker is idle (not
  // from a stream task: a task waiting for its own stream would deadlock).
  // With `interrupts` (a count of hostrt::interrupts() taken by the caller),
  // also returns false as soon as that count changes (checked every 100 ms).
  bool wait_drained(int64_t deadline_ns, const uint64_t *interrupts = nullptr);
  // A task the caller runs itself, with no hand-off, when the stream is idle:
  // claim_idle() is true if nothing is queued or running and the caller is
  // not a stream worker; the claim then counts as a pushed task that every
  // later task and synchronize waits behind, and the caller ends it with
  // run_claimed (runs the task now, on this thread) or hand_over (the task
  // goes to the front of the queue, for the worker or a synchronizer).
  bool claim_idle();
  void run_claimed(Task task);
  void hand_over(Task task);
  // The tag of the first queued task (not the running one), or null.
  const void *next_tag();
  // True if no task is queued or running.
  bool idle();
  // Tasks ever pushed (a claim counts) and ever finished (run or skipped), in
  // one snapshot: hostrtStreamMark / hostrtStreamFinished.
  void counts(uint64_t *pushed, uint64_t *finished);
  // Returns and clears the first error a task hit (ACL_SUCCESS if none); its
  // message goes to *msg.
  aclError take_error(std::string *msg);

  // Stops accepting tasks, runs what is queued, joins the worker. Idempotent.
  void close_and_join();

  // True when called from this stream's worker thread.
  bool on_worker() const;
  // From a task of this stream: whether it holds up a thread of the program,
  // that is, it runs on a caller's thread (claimed, or run by a synchronize)
  // or a thread synchronizes with the stream now (hostrt::task_holds_caller).
  bool holds_caller();
  // The stream whose worker is the calling thread, or nullptr.
  static Stream *current_worker();

  const uint64_t id;
  const int32_t device;
  const uint64_t ctx_id;
  const bool is_default;
  const uint32_t priority;
  const uint32_t flags;
  uint64_t failure_mode = 0;  // 0 continue on failure, 1 stop (guarded by mu_)

  void set_failure_mode(uint64_t mode);

 private:
  struct Item {
    Task fn;
    bool always_run;
    std::function<void()> finish;
    const char *api = nullptr;  // trace name; nullptr: not traced
    uint64_t bytes = 0;
    const void *tag = nullptr;
  };
  void run();
  // Runs the front task (lk held on entry and on return; released meanwhile).
  void run_front(std::unique_lock<std::mutex> &lk);
  // running_ set; lk held on return (on entry too, except for a claimed run).
  void run_item(std::unique_lock<std::mutex> &lk, Item &item);
  // After another thread ran tasks (mu_ held): lets the worker take the rest.
  void wake_worker_if_needed();
  // Whether a push onto the idle stream leaves the worker asleep (mu_ held).
  bool defer_wake();
  // Whether the worker takes the front task now (mu_ held).
  bool worker_may_take() const;
  void trace_task(const char *api, uint64_t bytes, int64_t start_ns, bool ok) const;

  std::mutex mu_;
  std::condition_variable work_cv_;   // worker sleeps here when idle
  std::condition_variable done_cv_;   // synchronizers sleep here
  std::deque<Item> queue_;
  uint64_t pushed_ = 0;     // tasks ever pushed
  uint64_t finished_ = 0;   // tasks ever finished (run or skipped)
  uint32_t waiters_ = 0;    // threads in wait_drained
  uint64_t wake_at_ = UINT64_MAX;  // the smallest finished_ a waiter waits for
  bool running_ = false;    // a task is running (on the worker or a synchronizer)
  const int64_t tick_ns_;   // fast sync's tick (see the top); 0: never defer
  bool caller_waits_ = false;  // the caller synchronized right after its last pushes
  bool ticking_ = false;    // the idle worker looks at the queue every tick_ns_
  bool deferring_ = false;  // queued tasks wait for a synchronizer or the worker's tick
  int64_t deferred_at_ = 0;
  aclError first_error_ = ACL_SUCCESS;
  std::string first_msg_;
  bool closing_ = false;
  bool joined_ = false;
  std::mutex join_mu_;
  std::thread worker_;
};

// Backs hostrtFailCurrentTask: false outside a stream task.
bool fail_current_task(aclError code, const char *message);

}  // namespace hostrt
