#include "hccl/comm/comm.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/env.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/transport/engine.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

// Handles look like aligned pointers but are ids, never reused in a process.
constexpr uint64_t kHandleBase = 0x7ac000000000ull;

std::mutex &registry_mu() {
  static std::mutex *mu = new std::mutex;
  return *mu;
}
std::unordered_map<uint64_t, std::shared_ptr<Comm>> &registry() {
  static auto *map = new std::unordered_map<uint64_t, std::shared_ptr<Comm>>;
  return *map;
}
uint64_t g_next_id = 1;

// How long a destroy (or an exit) waits for peers to take what was sent.
int64_t linger_ms() { return common::env_int("PYHCCL_LINGER_MS", 2000, 0, 3600 * 1000); }

// A process that exits without destroying its communicators (a C program's
// exit(); Python's finalize destroys them): for at most PYHCCL_LINGER_MS (1 s
// at most), let peers take what it sent, then tell them it left, so that they
// read its last messages instead of failing as if it had died. Only idle
// communicators: one with an operation in flight dies with the process.
// Nothing is freed here (other threads may still run).
void leave_at_exit() {
  const int64_t ms = std::min<int64_t>(linger_ms(), 1000);
  const int64_t deadline = common::now_ns() + ms * 1000000;
  std::vector<std::shared_ptr<Comm>> live;
  {
    std::lock_guard<std::mutex> lock(registry_mu());
    for (auto &kv : registry()) live.push_back(kv.second);
  }
  for (auto &c : live) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->destroyed || c->in_flight > 0 || !c->engine) continue;
    WaitError e;
    c->engine->linger(deadline, &e);
    c->engine->leave();
  }
}

}  // namespace

Comm::~Comm() {
  engine.reset();
  bootstrap_close(bootstrap);
}

void Comm::fail(HcclResult code, const std::string &msg, uint64_t seq, int culprit, bool notify) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (async_error != HCCL_SUCCESS) return;
    async_error = code;
    async_msg = msg;
  }
  cv.notify_all();  // operations waiting for their turn fail now
  if (!notify) return;
  if (seq == 0) seq = running_seq != 0 ? running_seq.load() : op_seq + 1;
  if (engine) engine->notify_failure(code, msg, seq, culprit);
}

HcclResult Comm::error(std::string *msg) {
  std::lock_guard<std::mutex> lock(mu);
  if (msg != nullptr) *msg = async_msg;
  return async_error;
}

HcclResult Comm::poll_error(std::string *msg) {
  // A peer's failure is this communicator's too (one verdict on every rank),
  // even while this rank has nothing running.
  WaitError e;
  if (error(nullptr) == HCCL_SUCCESS && engine && engine->peer_failure(&e))
    fail(e.code, e.what, e.failed_seq);
  return error(msg);
}

HcclComm comm_register(std::shared_ptr<Comm> comm) {
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(leave_at_exit); });
  std::lock_guard<std::mutex> lock(registry_mu());
  comm->id = kHandleBase + 16 * g_next_id++;
  registry()[comm->id] = comm;
  return comm->handle();
}

size_t comm_count() {
  std::lock_guard<std::mutex> lock(registry_mu());
  return registry().size();
}

std::shared_ptr<Comm> comm_lookup(HcclComm handle) {
  std::lock_guard<std::mutex> lock(registry_mu());
  auto it = registry().find(reinterpret_cast<uint64_t>(handle));
  return it == registry().end() ? nullptr : it->second;
}

std::shared_ptr<Comm> comm_unregister(HcclComm handle) {
  std::lock_guard<std::mutex> lock(registry_mu());
  auto it = registry().find(reinterpret_cast<uint64_t>(handle));
  if (it == registry().end()) return nullptr;
  std::shared_ptr<Comm> c = std::move(it->second);
  registry().erase(it);
  return c;
}

std::shared_ptr<Comm> comm_lookup_name(const char *name) {
  std::lock_guard<std::mutex> lock(registry_mu());
  std::shared_ptr<Comm> best;
  for (auto &kv : registry())
    if (kv.second->name == name && (!best || kv.first < best->id)) best = kv.second;
  return best;
}

std::shared_ptr<Comm> comm_lookup_uid(uint64_t uid) {
  std::lock_guard<std::mutex> lock(registry_mu());
  for (auto &kv : registry())
    if (kv.second->engine && kv.second->engine->hub && kv.second->engine->hub->uid() == uid)
      return kv.second;
  return nullptr;
}

void comm_abort(Comm &c, const std::string &peers_see, const std::string &here) {
  // Peers learn who aborted (first notice wins); this rank's operations get
  // their own, distinct error.
  const uint64_t seq = c.running_seq != 0 ? c.running_seq.load() : c.op_seq + 1;
  c.engine->notify_failure(HCCL_E_REMOTE, peers_see, seq);
  c.fail(HCCL_E_UNAVAIL, here);
  c.engine->interrupt(HCCL_E_UNAVAIL, here);
}

namespace {

// "#12 HcclAllReduce (running), HcclSend (queued)": the operations not done.
std::string unfinished(const Comm &c) {
  std::string out;
  int shown = 0, more = 0;
  for (const OpRecord &r : c.flight.snapshot()) {
    if (r.state != OpRecord::kQueued && r.state != OpRecord::kRunning) continue;
    if (shown == 4) {
      ++more;
      continue;
    }
    if (!out.empty()) out += ", ";
    if (r.seq != 0) out += "#" + std::to_string(r.seq) + " ";
    out += std::string(r.api) + (r.state == OpRecord::kRunning ? " (running)" : " (queued)");
    ++shown;
  }
  if (more) out += " and " + std::to_string(more) + " more";
  return out;
}

// Whether the user has heard of the communicator's failure: an operation of
// this rank failed, or HcclGetCommAsyncError returned it.
bool told(const Comm &c) {
  if (c.error_told) return true;
  for (const OpRecord &r : c.flight.snapshot())
    if (r.state == OpRecord::kFailed) return true;
  return false;
}

}  // namespace

HcclResult comm_destroy(std::shared_ptr<Comm> comm, const char *api, int64_t timeout_ms) {
  // Work already enqueued still runs: wait for it (each op is bounded by the
  // exec timeout once it starts). If it does not drain in time (a stream held
  // up by something else), ops that start later fail fast, and the resources
  // go with the last task's reference.
  // A failed communicator's operations only need to notice: interrupt them,
  // so that destroying it takes moments, not the exec timeout.
  const bool failed = comm->poll_error(nullptr) != HCCL_SUCCESS;
  if (failed && comm->engine)
    comm->engine->interrupt(HCCL_E_REMOTE, "the communicator failed and is being destroyed");
  std::unique_lock<std::mutex> lock(comm->mu);
  // In 64 bits: hcclExecTimeOut may be as large as INT32_MAX. Queued
  // operations of a failed communicator hold it until they run (and fail at
  // once): no need to wait for them.
  const long long limit_s =
      failed ? 1 : static_cast<long long>(comm->settings.exec_timeout_s) + 10;
  std::chrono::milliseconds limit = std::chrono::seconds(limit_s);
  if (timeout_ms >= 0 && !failed) limit = std::chrono::milliseconds(timeout_ms);
  bool drained = comm->cv.wait_for(lock, limit, [&] { return comm->in_flight == 0; });
  if (!drained && timeout_ms >= 0 && !failed) {
    // The caller's deadline: abandon the rest, and say what it was.
    const std::string what = unfinished(*comm);
    const int n = comm->in_flight;
    lock.unlock();
    comm_abort(*comm, "rank " + std::to_string(comm->rank) + " destroyed the communicator with "
                          "operations in flight (its deadline passed)",
               "the communicator was destroyed with this operation in flight");
    lock.lock();
    comm->cv.wait_for(lock, std::chrono::seconds(2), [&] { return comm->in_flight == 0; });
    comm->destroyed = true;
    lock.unlock();
    return HCCL_FAIL(HCCL_E_TIMEOUT, "%s: %d operation(s) did not finish within %lld ms and were aborted: %s",
                                     api, n, static_cast<long long>(timeout_ms), what.c_str());
  }
  const bool heard = failed && told(*comm);  // the flight record is under mu
  comm->destroyed = true;
  lock.unlock();
  if (drained && comm->engine && !heard) {
    // Linger for the messages sent but not yet taken (PYHCCL_LINGER_MS, within
    // the caller's deadline; a failed communicator only looks): a peer that
    // fails or leaves without them means a send had no matching receive,
    // which this rank must hear of, although the send itself succeeded
    // (unless it has heard of the failure already).
    int64_t ms = failed ? 0 : linger_ms();
    if (timeout_ms >= 0) ms = std::min<int64_t>(ms, timeout_ms);
    WaitError e;
    if (comm->engine->linger(common::now_ns() + ms * 1000000, &e) != HCCL_SUCCESS) {
      return HCCL_FAIL(e.code, "%s: %s", api, e.what.c_str());
    }
  }
  if (!drained && !failed) {
    return HCCL_FAIL(HCCL_E_TIMEOUT, "%s: operations of the communicator did not finish within %lld s; "
                                     "it was destroyed anyway", api, limit_s);
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
