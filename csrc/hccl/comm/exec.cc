// Running enqueued operations: tickets keep a communicator's operations in
// enqueue order across streams; a failure becomes the comm's async error
// (peers are told through the transport) and later operations fail fast.
//
// aclError of a failed task (what aclrtSynchronizeStream returns):
//   HCCL_E_TIMEOUT                   -> ACL_ERROR_RT_WAIT_TIMEOUT
//   HCCL_E_PARA (found while running) -> ACL_ERROR_RT_PARAM_INVALID
//   communicator destroyed           -> ACL_ERROR_RT_INVALID_HANDLE
//   anything else (peer died/failed) -> ACL_ERROR_RT_INTERNAL_ERROR
// The HCCL code itself is HcclGetCommAsyncError's answer.
#include <algorithm>
#include <chrono>

#include "common/clock.h"
#include "common/env.h"
#include "common/log.h"
#include "hccl/algo/board.h"
#include "hccl/algo/ctx.h"
#include "hccl/algo/dispatch.h"
#include "hccl/codes.h"
#include "hccl/comm/op_errors.h"
#include "hccl/comm/comm.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

enum class Turn { kMine, kFailed, kTimedOut };

// Waits until it is this ticket's turn, or the communicator failed (then the
// op gives its turn up at once); also snapshots the comm's state, and marks
// the op started in the flight record when it will run. kTimedOut if that
// takes longer than the exec timeout (an earlier op of this comm is stuck on
// another stream).
Turn wait_turn(Comm &c, const OpDesc &op, uint64_t ticket, bool *destroyed, HcclResult *prior,
               std::string *why) {
  std::unique_lock<std::mutex> lock(c.mu);
  Turn t = Turn::kMine;
  if (c.turn != ticket) {
    auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(c.settings.exec_timeout_s);
    c.cv.wait_until(lock, limit, [&] { return c.turn == ticket || c.async_error != HCCL_SUCCESS; });
    if (c.turn != ticket) {
      c.abandoned.push_back(ticket);
      t = c.async_error != HCCL_SUCCESS ? Turn::kFailed : Turn::kTimedOut;
    }
  }
  *destroyed = c.destroyed;
  *prior = c.async_error;
  if (*prior != HCCL_SUCCESS) *why = c.async_msg;
  // The number Ctx gives it next (only the turn's holder counts collectives).
  if (t == Turn::kMine && !*destroyed && *prior == HCCL_SUCCESS)
    c.flight.started(ticket, op.kind == OpKind::kSendRecv ? 0 : c.op_seq.load() + 1);
  return t;
}

// Ends the op's flight record (a copy goes to *rec when asked) and hands the
// turn on.
void finish(Comm &c, uint64_t ticket, bool had_turn, bool ok = false, const char *algo = "",
            OpRecord *rec = nullptr) {
  std::lock_guard<std::mutex> lock(c.mu);
  c.flight.ended(ticket, ok, algo);
  if (rec != nullptr && !c.flight.get(ticket, rec)) rec->start_ns = 0;
  if (had_turn) {
    ++c.turn;
    for (;;) {
      auto it = std::find(c.abandoned.begin(), c.abandoned.end(), c.turn);
      if (it == c.abandoned.end()) break;
      c.abandoned.erase(it);
      ++c.turn;
    }
  }
  // Waiters: later tickets on other streams, or HcclCommDestroy.
  if (--c.in_flight == 0 || c.next_ticket > c.turn) c.cv.notify_all();
}

// Owned by the enqueued task. If the stream drops the task without running it
// (ACL "stop on failure" mode after an earlier error), the destructor hands
// the ticket on and fails the communicator, whose peers would otherwise wait
// for a collective that never comes.
struct TicketGuard {
  std::shared_ptr<Comm> comm;
  OpDesc op;
  uint64_t ticket = 0;
  bool ran = false;

  ~TicketGuard() {
    if (ran || !comm) return;
    std::string msg = std::string(op.api) +
                      ": skipped because an earlier task on its stream failed";
    comm->fail(HCCL_E_INTERNAL, msg);
    bool my_turn;
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      my_turn = comm->turn == ticket;
      if (!my_turn) comm->abandoned.push_back(ticket);
    }
    finish(*comm, ticket, my_turn);
  }
};

// Operations whose headers may stay unchecked behind the running one.
constexpr uint64_t kLaterOps = 32;

// The headers algorithms did not wait for (Batch::recv_header_later) are
// checked before anything else on the stream sees the operation complete: now,
// unless this communicator's next operation follows at once on this stream
// (it checks them as it runs), and at most kLaterOps operations back. So too
// the headers this rank held back for its peers (Transfer::lazy) go out now,
// unless the next operation follows.
HcclResult check_later(Comm &c, Ctx &x) {
  const bool later = c.engine->keeps_later();
  if (!later && !c.engine->holds_headers()) return HCCL_SUCCESS;  // nor a look at the stream (its lock)
  const uint64_t seq = c.op_seq.load();  // this collective's, or the last one's (send/recv)
  const bool next_is_ours = c.next_queued();
  if (next_is_ours && !later) return HCCL_SUCCESS;
  const uint64_t upto = !next_is_ours ? seq : seq > kLaterOps ? seq - kLaterOps : 0;
  HcclResult r = c.engine->drain(upto, !next_is_ours, &x.err);
  return r == HCCL_SUCCESS ? r : x.failed(r);
}

aclError run_op(Comm &c, const OpDesc &op, uint64_t ticket) {
  bool destroyed = false;
  HcclResult prior = HCCL_SUCCESS;
  std::string earlier;
  Turn turn = wait_turn(c, op, ticket, &destroyed, &prior, &earlier);
  if (turn == Turn::kTimedOut) {
    std::string msg = std::string(op.api) + ": timed out after " +
                      std::to_string(c.settings.exec_timeout_s) +
                      " s waiting for an earlier operation of the communicator (on another stream)";
    c.fail(HCCL_E_TIMEOUT, msg);
    hostrt::set_error("%s", msg.c_str());
    finish(c, ticket, false);
    return ACL_ERROR_RT_WAIT_TIMEOUT;
  }
  if (turn == Turn::kFailed) {
    hostrt::set_error("%s: the communicator failed earlier: %s", op.api, earlier.c_str());
    record_op_error(OpError{prior, op.api, 0, -1, hostrt::last_error()});
    finish(c, ticket, false);
    return acl_code(prior, AclUse::kTask);
  }
  if (destroyed) {
    hostrt::set_error("%s: the communicator was destroyed before this operation ran", op.api);
    finish(c, ticket, true);
    return ACL_ERROR_RT_INVALID_HANDLE;
  }
  if (prior != HCCL_SUCCESS) {
    hostrt::set_error("%s: the communicator failed earlier: %s", op.api, earlier.c_str());
    record_op_error(OpError{prior, op.api, 0, -1, hostrt::last_error()});
    finish(c, ticket, true);
    return acl_code(prior, AclUse::kTask);
  }
  c.running_ticket = ticket;
  Ctx x(c, op);
  if (x.sig.seq != 0) c.engine->announce(x.sig);  // peers may run it inline now
  c.running_seq = x.sig.seq;
  const int64_t t0 = PYHCCL_LOG_ON(common::kDebug, common::kColl) ? common::now_ns() : 0;
  HcclResult r = dispatch(x);
  if (r == HCCL_SUCCESS) r = check_later(c, x);
  // No rank succeeds where another failed: a peer that reported a failure
  // in this collective (it may have timed out while this rank was late)
  // fails it here too.
  if (r == HCCL_SUCCESS && x.sig.seq != 0) r = c.engine->settle(x.sig.seq, &x.err);
  c.running_seq = 0;
  PYHCCL_LOG(common::kDebug, common::kColl, "%s rank %u: #%llu %s count %llu %s stream %llu via %s: %s, %.1f us",
             c.name.c_str(), c.rank, static_cast<unsigned long long>(x.sig.seq), op.api,
             static_cast<unsigned long long>(op.count), dtype_name(op.dtype),
             static_cast<unsigned long long>(hostrt::current_stream_id()), x.algo,
             r == HCCL_SUCCESS ? "ok" : "FAILED", (common::now_ns() - t0) / 1e3);
  std::string msg;
  if (r != HCCL_SUCCESS) {  // before the turn moves on: later ops fail fast
    msg = std::string(op.api) + ": " + x.err.what;
    // The rank at fault: the one a relaying peer named, unless that is this rank
    // (then the peer that told it); else the peer the failure came from.
    const int culprit = x.err.culprit >= 0 ? x.err.culprit : x.err.peer;
    c.fail(r, msg, x.sig.seq, culprit);
    // Two communicators in opposite orders: the other one's collective, which
    // the peer waits in, must not run here now (it may be queued next on this
    // stream) and let the peer's wait complete before it concludes too.
    if (x.err.order_comm != 0)
      if (std::shared_ptr<Comm> other = comm_lookup_uid(x.err.order_comm))
        other->fail(r, msg, 0, culprit, x.err.order_notify);
    hostrt::set_error("%s", msg.c_str());
    record_op_error(OpError{r, op.api, x.sig.seq,
                            culprit == static_cast<int>(c.rank) ? x.err.peer : culprit, msg});
  }
  OpRecord rec;
  const bool traced = hostrt::trace_on();
  finish(c, ticket, true, r == HCCL_SUCCESS, x.algo, traced ? &rec : nullptr);
  if (traced && rec.start_ns != 0) trace_op(c, op, rec);
  if (r != HCCL_SUCCESS) {
    // Once per communicator, at warning level: the error itself reaches the caller
    // (the stream's error, aclGetRecentErrMsg, the Python exception), and the ops
    // failing fast after it would only repeat it.
    if (PYHCCL_LOG_ON(common::kWarning, common::kColl) && !c.failure_logged.exchange(true)) {
      std::vector<OpRecord> records;
      {
        std::lock_guard<std::mutex> lock(c.mu);
        records = c.flight.snapshot();
      }
      PYHCCL_LOG(common::kWarning, common::kColl, "%s rank %u: %s\nflight record (oldest first):%s",
                 c.name.c_str(), c.rank, msg.c_str(), FlightRecorder::dump(records).c_str());
    }
    return acl_code(r, AclUse::kTask);
  }
  return ACL_SUCCESS;
}

// A small collective may run on the calling thread at once (no hand-off to the
// stream's worker, no wake-up of the caller when it synchronizes): when its
// stream is idle, every earlier operation of the communicator has finished,
// and every peer announces within a brief wait that it runs the same
// collective now (Engine::arrive; a collective on the boards posts its part
// and waits for its peers' parts instead, Engine::arrive_on_board); so the
// call never waits on a peer that is busy elsewhere. Large ones always go to
// the worker: the call returns at once.
bool may_run_inline(const Comm &c, const OpDesc &op) {
  static const uint64_t limit = static_cast<uint64_t>(
      common::env_int("PYHCCL_INLINE_BYTES", 32 << 10, 0, 1 << 30));
  return c.engine && inline_candidate(op_spec(op.kind), op.count, dtype_size(op.dtype), c.nranks, limit);
}

}  // namespace

HcclResult comm_submit(const std::shared_ptr<Comm> &comm, hostrt::Stream *stream, OpDesc op) {
  // Declared before the lock: if the stream dropped the task at once, the
  // guard's destructor (which locks comm->mu) runs after the unlock.
  auto guard = std::make_shared<TicketGuard>();
  guard->comm = comm;
  const bool small = may_run_inline(*comm, op);
  guard->op = std::move(op);
  std::unique_lock<std::mutex> lock(comm->mu);
  guard->ticket = comm->next_ticket++;
  ++comm->in_flight;
  if (stream != comm->last_stream) {
    if (comm->last_stream != nullptr) comm->switched_at.store(guard->ticket, std::memory_order_relaxed);
    comm->last_stream = stream;
  }
  auto task = [guard]() {
    guard->ran = true;
    return run_op(*guard->comm, guard->op, guard->ticket);
  };
  // The claim is taken under comm->mu, so tickets stay in stream order.
  if (small && comm->turn == guard->ticket && comm->async_error == HCCL_SUCCESS &&
      hostrt::claim_stream(stream)) {
    comm->flight.enqueued(guard->ticket, guard->op, 0);
    // Nothing of this comm runs now: the op will be collective op_seq + 1.
    const OpSig sig = op_signature(guard->op, comm->op_seq.load() + 1);
    lock.unlock();
    const void *part;
    size_t part_bytes;
    const bool arrived = board_part(*comm, guard->op, &part, &part_bytes)
                             ? comm->engine->arrive_on_board(sig, part, part_bytes)
                             : comm->engine->arrive(sig);
    if (arrived) {
      hostrt::run_claimed(stream, std::move(task));
    } else {
      lock.lock();
      comm->flight.set_enqueued_at(guard->ticket, common::now_ns());
      lock.unlock();
      hostrt::hand_over(stream, std::move(task));
    }
    return HCCL_SUCCESS;
  }
  comm->flight.enqueued(guard->ticket, guard->op, common::now_ns());
  aclError e = hostrt::enqueue(stream, std::move(task), static_cast<const CommView *>(comm.get()));
  if (e != ACL_SUCCESS) {
    guard->ran = true;  // never queued: undone here instead
    --comm->next_ticket;
    --comm->in_flight;
    return HCCL_FAIL(HCCL_E_RUNTIME, "%s: could not enqueue on the stream (aclError %d)", guard->op.api, e);
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
