// Runs posted transfers to completion and answers for a communicator's
// peers. Its parts: the progress of a batch (engine.cc: every connection
// involved, until each transfer completes; a cycle of stalled blocking sends
// among local ranks fails as a deadlock), the one wait policy (waiter.h:
// spinning, sleeping, timeouts, interrupts, failure probes, the order
// check), board exchanges (shm/board_exchange.h) and inline arrival.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "hccl/transport/shm/board_exchange.h"
#include "hccl/transport/shm/hub.h"
#include "hccl/transport/transport.h"
#include "hccl/transport/waiter.h"

namespace hccl {

class Engine {
 public:
  Engine(int rank, int nranks);
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  // conns[peer] (conns[rank] is the loopback); the hub when there are local peers.
  std::vector<std::unique_ptr<Connection>> conns;
  std::unique_ptr<shm::Hub> hub;

  // Posts the transfers and runs them all to completion, or fails (*err).
  // `blocking_send`: the transfers are the sends of one HcclSend (or of a
  // group of sends only), which no receive of this rank can follow before
  // they complete: when they stall, a cycle of such sends among local ranks
  // is reported as a deadlock, and a timeout says that a ring needs a group.
  // Receives marked `later` (header-only) are copied and kept here: the
  // batch completes without them, and every later run progresses them.
  // Sends marked `lazy` that a connection holds back complete at once
  // (Transfer::lazy); the engine sends them before it sleeps in a wait,
  // once the oldest was held kHoldNs, and in drain(..., flush); data
  // messages as soon as a wait is not done at once (flush_data).
  HcclResult run(Transfer *const *xfers, size_t n, WaitError *err, bool blocking_send = false);
  // Waits until every kept `later` receive of collectives up to `seq` has
  // completed (their headers came in and matched), and with `flush` until
  // every held header went out, or fails (*err).
  HcclResult drain(uint64_t seq, bool flush, WaitError *err);
  // Whether any `later` receive is kept (drain() would have something to do).
  bool keeps_later() const {
    for (const auto &q : later_)
      if (!q.empty()) return true;
    return false;
  }
  // Whether a connection may still hold lazy headers (drain(..., true) sends them).
  bool holds_headers() const { return !held_.empty(); }

  // Tells every peer, best effort, that this rank failed in collective `seq`
  // because of rank `culprit` (-1: this rank).
  void notify_failure(HcclResult code, const std::string &why, uint64_t seq, int culprit = -1);
  // Makes running and later waits fail at once with `why` (abort). Any thread.
  void interrupt(HcclResult code, const std::string &why) { waiter_.interrupt(code, why); }
  // After collective `seq` succeeded here: fails it (*err) if a peer reported
  // a failure in it, or earlier, so that no rank succeeds where another failed.
  HcclResult settle(uint64_t seq, WaitError *err);
  // Destroy's linger: waits, until `deadline_ns` (common::now_ns()), for
  // peers to take the messages this rank sent (a small send completes before
  // its receiver took it). Fails (*err) when a peer that has not taken them
  // failed or left: the message was never received. Succeeds when all were
  // taken, or at the deadline (the peer may still take them later).
  HcclResult linger(int64_t deadline_ns, WaitError *err);
  // Tells every peer that this rank leaves normally (Connection::leave).
  void leave();
  // Whether some peer reported a failure (or died); any thread, at any time.
  bool peer_failure(WaitError *err);

  // Arrival, for running a small collective on the calling thread (comm/exec.cc):
  // announce() says this rank runs collective sig.seq (as `sig`) now or next,
  // with nothing before it (peers also compare it, shm/board_exchange.cc);
  // arrive() announces and then waits briefly (PYHCCL_INLINE_US, spinning
  // only when cores are not oversubscribed) for every peer to have announced
  // it too. False when one is late or on another host.
  void announce(const OpSig &sig) {
    if (hub) hub->announce(sig);
  }
  bool arrive(const OpSig &sig);

  // Boards, for small collectives when every rank is on this host
  // (shm/board_exchange.h): each rank pins its part on its own board, peers
  // read it in place.
  size_t board_bytes() const { return boards_.board_bytes(); }
  HcclResult board_exchange(const OpSig &sig, const void *mine, size_t bytes, WaitError *err) {
    return boards_.exchange(sig, mine, bytes, err);
  }
  const char **board_views() { return boards_.views(); }
  const size_t *board_sizes() const { return boards_.sizes(); }
  bool arrive_on_board(const OpSig &sig, const void *mine, size_t bytes) {
    return boards_.arrive(sig, mine, bytes);
  }

  // The operation the following waits belong to, for the watchdog's lines.
  void begin_op(const char *api, uint64_t seq) { waiter_.begin_op(api, seq); }
  void set_exec_timeout(int seconds) { waiter_.set_exec_timeout(seconds); }
  int exec_timeout_s() const { return waiter_.exec_timeout_s(); }
  // Busy-wait and yield budgets of a wait (PYHCCL_SPIN_US, PYHCCL_YIELD_US);
  // no spinning when the ranks on this machine outnumber its cores, longer
  // yields when peers are on other hosts.
  void set_spin(int machine_ranks, bool remote_peers) { waiter_.set_spin(machine_ranks, remote_peers); }
  int64_t spin_ns() const { return waiter_.spin_ns(); }
  int64_t yield_base_ns() const { return waiter_.yield_base_ns(); }
  int64_t yield_max_ns() const { return waiter_.yield_max_ns(); }

  Connection &conn(int peer) { return *conns[peer]; }

 private:
  class Batch;  // one run()'s wait (engine.cc)
  class Drain;  // drain()'s wait (engine.cc)

  // Moves what can move on every connection of active_.
  HcclResult progress_active(bool *moved, WaitError *err);
  // After a failed wait: the connections of active_ forget their transfers,
  // and the kept receives go too.
  void forget_active();
  // Connections of the kept `later` receives still open, into active_.
  void add_later_conns();
  // Forgets the completed kept receives at the front of each peer's queue.
  void pop_later();
  // Held headers: flush_held() starts sending them all; prune_held() forgets
  // the connections that hold none any more.
  void flush_held();
  void prune_held();
  // A connection holds sends now: into held_, and the hold's clock starts.
  void note_held(Connection *c);
  // While a wait is not done: the held data messages go out (a peer may
  // wait for them, and this rank may wait for that peer). Holding pays only
  // where operations complete without waiting.
  void flush_data();
  // Before a wait sleeps: the held headers, and the headers that wait for
  // their payload (TcpConnection::header_waits), go out.
  void before_sleep();

  const int rank_;
  const int nranks_;
  Waiter waiter_;
  shm::BoardExchange boards_;
  std::vector<Connection *> active_;  // the running batch's connections
  std::vector<Transfer *> own_;       // the running batch's transfers, less the `later` ones
  // The kept `later` receives, per peer in posting order (which is the order
  // they complete in); a deque keeps the addresses their connections hold.
  std::vector<std::deque<Transfer>> later_;
  // Connections that held a lazy header, and since when the oldest unflushed
  // one waits (0: none). A receiver needs the header only when its stream
  // idles or runs far ahead (comm/exec.cc), so a short hold delays nobody.
  std::vector<Connection *> held_;
  int64_t held_since_ns_ = 0;
  static constexpr int64_t kHoldNs = 200000;
  std::vector<pollfd> fds_;           // settle()'s notice sockets
  static constexpr int64_t kNoticePollNs = 1000000;  // settle()'s looks at them, at most one a ms
  int64_t notice_poll_ns_ = 0;
};

}  // namespace hccl
