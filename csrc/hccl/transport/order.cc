// Two communicators used in opposite orders: rank 0 blocked in A's collective
// waits for rank 1, blocked in B's collective, which waits for rank 0, which
// has not begun B's. Among ranks of one host this is seen in shared memory
// (each process publishes where it is blocked, shm/waits.h) and fails on
// both ranks within a second, not at the exec timeout.
//
// It is a deadlock, not lateness, only when neither process can begin the
// collective the other waits in: each has exactly one blocked wait, and that
// wait holds the program (it runs on the caller's thread, or a thread
// synchronizes with its stream: hostrt::task_holds_caller). A process whose
// threads are free may still call it (an operation left running on one
// stream while the program computes): then only the timeout ends the wait.
// The record must stay the same one probe later; the first rank to conclude
// flags its record and lingers until its peer, which then concludes at once,
// has seen it, so that both report. Whatever ends a lingering wait (the peer
// failed, left, died) ends it with this rank's verdict. A rank that concludes
// also fails the other communicator here (exec.cc), without telling its
// peers, unless the peer never saw the verdict: its collective, queued next
// on the stream, must not run into the peer's wait and complete it.
#include <unistd.h>

#include "hccl/transport/waiter.h"
#include "runtime/hostrt.h"

namespace hccl {
namespace {

constexpr int64_t kLingerNs = 1000 * 1000000LL;  // the most a verdict waits for the peer's

}  // namespace

void Waiter::order_publish(OrderWatch *w, int peer) {
  if (w->wait.active() || !order_check_ || !hub_ || hub_->uid() == 0 || op_seq_ == 0 || peer == rank_ ||
      hub_->local_index(peer) < 0)
    return;
  const uint32_t pid = hub_->pid_of(peer);
  if (pid == 0) return;  // another pid namespace: its record would not name this process
  w->peer = peer;
  w->seen = 0;
  w->wait.begin(hub_->uid(), op_seq_, pid, hostrt::task_holds_caller() ? shm::Blocked::kHeld : 0);
}

bool Waiter::order_deadlock(OrderWatch *w, int peer, int64_t now, WaitError *err) {
  if (!w->wait.active()) return false;
  if (peer != w->peer) {  // waits for another peer now: start over
    w->wait.end();
    w->verdict_at = 0;
    order_publish(w, peer);
    return false;
  }
  const bool held = hostrt::task_holds_caller();
  w->wait.set_flags((held ? shm::Blocked::kHeld : 0) | (w->verdict_at != 0 ? shm::Blocked::kVerdict : 0));
  // The peer is blocked, for this process, in another communicator's
  // collective that neither this process has begun nor can begin; nor can
  // the peer begin this one, which it has not begun either.
  shm::BlockedAt theirs;
  uint64_t begun = 0;
  std::string other;
  const bool mirror =
      held && hub_->read_blocked(peer, &theirs) && theirs.comm != 0 && theirs.comm != hub_->uid() &&
      theirs.pid == static_cast<uint32_t>(getpid()) && theirs.waits == 1 &&
      (theirs.flags & shm::Blocked::kHeld) != 0 &&
      static_cast<int64_t>(hub_->arrived(peer) - op_seq_) < 0 && shm::waits_blocked() == 1 &&
      shm::waits_member(theirs.comm, &begun, &other) &&
      static_cast<int64_t>(begun - theirs.seq) < 0;
  const bool flagged = mirror && (theirs.flags & shm::Blocked::kVerdict) != 0;
  if (w->verdict_at != 0) {
    // Lingers while the peer has not seen the verdict: it would wait on alone.
    if (mirror && !flagged && theirs.gen == w->seen && now - w->verdict_at < kLingerNs) return false;
  } else {
    if (!mirror) {
      w->seen = 0;
      return false;
    }
    w->why = "deadlock: rank " + std::to_string(peer) + " is blocked in communicator " + other +
             "'s collective #" + std::to_string(theirs.seq) + " while this rank waits in " +
             hub_->comm_name() + "'s #" + std::to_string(op_seq_) +
             "; use one order on every rank (ranks that call the collectives of two "
             "communicators in opposite orders wait for each other forever)";
    w->other = theirs.comm;
    if (!flagged) {
      if (theirs.gen != w->seen) {  // first look, or it moved: look again one probe later
        w->seen = theirs.gen;
        return false;
      }
      w->verdict_at = now;
      w->wait.set_flags(shm::Blocked::kHeld | shm::Blocked::kVerdict);
      return false;
    }
  }
  order_fail(w, w->verdict_at != 0 && now - w->verdict_at >= kLingerNs, err);
  return true;
}

HcclResult Waiter::order_fail(OrderWatch *w, bool notify, WaitError *err) {
  return WaitError::deadlock(w->peer, w->why, w->other, notify).into(err);
}

HcclResult Waiter::order_override(OrderWatch *w, WaitError *err) {
  // Concluded, the peer failed or left first (it concluded at once on seeing
  // this rank's verdict): that is the verdict's consequence, not the cause.
  if (w->verdict_at != 0 && err->order_comm == 0 && interrupted_.load() == 0)
    return order_fail(w, false, err);
  return err->code;
}

}  // namespace hccl
