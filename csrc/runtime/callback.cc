// Host functions (aclrtLaunchHostFunc) and subscribed-thread callbacks
// (aclrtLaunchCallback + aclrtSubscribeReport / aclrtProcessReport).
#include <pthread.h>

#include <condition_variable>
#include <deque>

#include "common/clock.h"
#include "runtime/internal.h"
#include "runtime/stream.h"

namespace hostrt {
namespace {

// One callback handed from a stream worker to a subscribed thread.
struct Pending {
  aclrtCallback fn = nullptr;
  void *data = nullptr;
  uint64_t stream_id = 0;
  bool done = false;  // guarded by Reports::mu
};

struct ThreadQueue {
  std::deque<std::shared_ptr<Pending>> items;
  uint32_t streams = 0;  // streams subscribed to this thread
};

struct Reports {
  std::mutex mu;
  std::condition_variable cv;  // queue changes and completions (few waiters)
  std::unordered_map<uint64_t, uint64_t> stream_thread;  // stream id -> thread id
  std::unordered_map<uint64_t, ThreadQueue> threads;     // thread id -> queue
};

ForkLocal<Reports> g_reports;

Reports &reports() { return g_reports.get(); }

void run_pending(Reports &r, std::unique_lock<std::mutex> &lk,
                 std::deque<std::shared_ptr<Pending>> &batch) {
  lk.unlock();
  for (auto &p : batch) p->fn(p->data);
  lk.lock();
  for (auto &p : batch) p->done = true;
  r.cv.notify_all();
}

// Moves the queued callbacks of `stream_id` out of thread `tid`'s queue.
std::deque<std::shared_ptr<Pending>> take_stream_items(ThreadQueue &q, uint64_t stream_id) {
  std::deque<std::shared_ptr<Pending>> mine;
  for (auto it = q.items.begin(); it != q.items.end();) {
    if ((*it)->stream_id == stream_id) {
      mine.push_back(std::move(*it));
      it = q.items.erase(it);
    } else {
      ++it;
    }
  }
  return mine;
}

// Ends the subscription `it` (locked by lk). Callbacks of that stream already
// handed over still run, here, so a stream worker blocked on them goes on.
void unsubscribe(Reports &r, std::unique_lock<std::mutex> &lk,
                 std::unordered_map<uint64_t, uint64_t>::iterator it) {
  const uint64_t stream_id = it->first;
  auto q = r.threads.find(it->second);
  r.stream_thread.erase(it);
  std::deque<std::shared_ptr<Pending>> left;
  if (q != r.threads.end()) {
    left = take_stream_items(q->second, stream_id);
    if (--q->second.streams == 0 && q->second.items.empty()) r.threads.erase(q);
  }
  r.cv.notify_all();
  if (!left.empty()) run_pending(r, lk, left);
}

}  // namespace

void reports_after_fork() { g_reports.drop(); }

void forget_stream_subscriptions(uint64_t stream_id) {
  Reports &r = reports();
  std::unique_lock<std::mutex> lk(r.mu);
  auto it = r.stream_thread.find(stream_id);
  if (it != r.stream_thread.end()) unsubscribe(r, lk, it);
}

}  // namespace hostrt

using namespace hostrt;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args) {
  const char *api = "aclrtLaunchHostFunc";
  if (fn == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: fn is NULL", api);
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  return s->push(
      [fn, args]() {
        fn(args);
        return ACL_SUCCESS;
      },
      false, api);
}

ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
  const char *api = "aclrtSubscribeReport";
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  Reports &r = reports();
  std::lock_guard<std::mutex> lk(r.mu);
  if (r.stream_thread.count(s->id)) {
    return ACL_FAIL(ACL_ERROR_REPEAT_SUBSCRIBE, "%s: stream %p is already subscribed by a thread", api,
                stream);
  }
  r.stream_thread.emplace(s->id, threadId);
  ++r.threads[threadId].streams;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
  const char *api = "aclrtUnSubscribeReport";
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  Reports &r = reports();
  std::unique_lock<std::mutex> lk(r.mu);
  auto it = r.stream_thread.find(s->id);
  if (it == r.stream_thread.end() || it->second != threadId) {
    return ACL_FAIL(ACL_ERROR_STREAM_NOT_SUBSCRIBE, "%s: stream %p is not subscribed by thread %llu",
                api, stream, static_cast<unsigned long long>(threadId));
  }
  unsubscribe(r, lk, it);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
                                                 aclrtCallbackBlockType blockType,
                                                 aclrtStream stream) {
  const char *api = "aclrtLaunchCallback";
  if (fn == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: fn is NULL", api);
  if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: blockType (%d) must be 0 or 1", api,
                static_cast<int>(blockType));
  }
  aclError err;
  std::shared_ptr<Stream> s = lookup_stream(stream, api, &err);
  if (!s) return err;
  uint64_t sid = s->id;
  {
    Reports &r = reports();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.stream_thread.count(sid)) {
      return ACL_FAIL(ACL_ERROR_STREAM_NOT_SUBSCRIBE,
                  "%s: no thread is subscribed to stream %p (call aclrtSubscribeReport)", api,
                  stream);
    }
  }
  bool block = blockType == ACL_CALLBACK_BLOCK;
  return s->push(
      [fn, userData, sid, block]() {
        Reports &r = reports();
        auto p = std::make_shared<Pending>();
        p->fn = fn;
        p->data = userData;
        p->stream_id = sid;
        std::unique_lock<std::mutex> lk(r.mu);
        auto st = r.stream_thread.find(sid);
        auto q = st == r.stream_thread.end() ? r.threads.end() : r.threads.find(st->second);
        if (q == r.threads.end()) {
          // Unsubscribed meanwhile: run it here rather than lose it.
          lk.unlock();
          fn(userData);
          return ACL_SUCCESS;
        }
        q->second.items.push_back(p);
        r.cv.notify_all();
        if (block) r.cv.wait(lk, [&] { return p->done; });
        return ACL_SUCCESS;
      },
      false, api);
}

ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout) {
  const char *api = "aclrtProcessReport";
  if (!valid_timeout(timeout)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: timeout (%d) must be -1, 0 or positive ms", api,
                timeout);
  }
  const uint64_t tid = static_cast<uint64_t>(pthread_self());
  const int64_t deadline = common::deadline_after_ms(timeout);
  Reports &r = reports();
  std::unique_lock<std::mutex> lk(r.mu);
  for (;;) {
    auto q = r.threads.find(tid);
    if (q == r.threads.end()) {
      return ACL_FAIL(ACL_ERROR_THREAD_NOT_SUBSCRIBE,
                  "%s: the calling thread is not subscribed to any stream (aclrtSubscribeReport)",
                  api);
    }
    if (!q->second.items.empty()) {
      std::deque<std::shared_ptr<Pending>> batch;
      batch.swap(q->second.items);
      if (q->second.streams == 0) r.threads.erase(q);
      run_pending(r, lk, batch);
      return ACL_SUCCESS;
    }
    if (deadline == INT64_MAX) {
      r.cv.wait(lk);
    } else if (r.cv.wait_until(lk, common::to_time_point(deadline)) == std::cv_status::timeout) {
      auto q2 = r.threads.find(tid);
      if (q2 != r.threads.end() && !q2->second.items.empty()) continue;
      return ACL_FAIL(ACL_ERROR_WAIT_CALLBACK_TIMEOUT, "%s: no callback within %d ms", api, timeout);
    }
  }
}

}  // extern "C"
