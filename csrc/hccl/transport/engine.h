// Runs posted transfers to completion: progresses every connection involved,
// and when nothing moves spins briefly (only when ranks do not outnumber
// cores), yields, then sleeps: on the shared-memory doorbell (a futex) when
// only local peers are involved, in poll() over the sockets (and a wake-up
// socket local peers signal) otherwise. Every wait is bounded by the exec
// timeout without progress, and ends early when a peer fails or dies. A
// cycle of stalled blocking sends among local ranks fails as a deadlock, and
// so do two local ranks blocked in two communicators used in opposite orders.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hccl/transport/shm/hub.h"
#include "hccl/transport/transport.h"

namespace hccl {

class Engine {
 public:
  Engine(int rank, int nranks);
  ~Engine();

  // conns[peer] (conns[rank] is the loopback); the hub when there are local peers.
  std::vector<std::unique_ptr<Connection>> conns;
  std::unique_ptr<shm::Hub> hub;

  // Posts the transfers and runs them all to completion, or fails (*err).
  // `blocking_send`: the transfers are the sends of one HcclSend (or of a
  // group of sends only), which no receive of this rank can follow before
  // they complete: when they stall, a cycle of such sends among local ranks
  // is reported as a deadlock, and a timeout says that a ring needs a group.
  HcclResult run(Transfer *const *xfers, size_t n, WaitError *err, bool blocking_send = false);

  // Tells every peer, best effort, that this rank failed in collective `seq`
  // because of rank `culprit` (-1: this rank).
  void notify_failure(HcclResult code, const std::string &why, uint64_t seq, int culprit = -1);
  // Makes running and later waits fail at once with `why` (abort). Any thread.
  void interrupt(HcclResult code, const std::string &why);
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
  // with nothing before it (peers also compare it, board.cc); arrive()
  // announces and then waits briefly (PYHCCL_INLINE_US, spinning only when
  // cores are not oversubscribed) for every peer to have announced it too.
  // False when one is late or on another host.
  void announce(const OpSig &sig) {
    if (hub) hub->announce(sig);
  }
  bool arrive(const OpSig &sig);

  // Boards (shm/layout.h), for small collectives when every rank is on this
  // host: each rank pins its part on its own board, peers read it in place.
  // One cache line tells a peer it is there; no FIFO message, no doorbell
  // unless the peer sleeps. board_bytes(): the largest part a board holds, 0
  // when boards cannot be used (a peer on another host, PYHCCL_BOARD_BYTES=0).
  size_t board_bytes() const {
    return hub && hub->all_local() && nranks_ > 1 ? hub->layout().board_bytes : 0;
  }
  // One exchange; every rank makes the same exchanges in the same order.
  // Posts `bytes` of `mine` under `sig`, waits for every peer's part (under
  // the same signature, else a mismatch) and points board_views()[p] at it,
  // board_sizes()[p] its bytes (rank: mine). Views stay valid until this
  // rank's next exchange: a peer rewrites a board only after every rank
  // posted the next. The caller may move the views (they are its scratch).
  HcclResult board_exchange(const OpSig &sig, const void *mine, size_t bytes, WaitError *err);
  const char **board_views() { return board_views_.data(); }
  const size_t *board_sizes() const { return board_sizes_.data(); }
  // Arrival for a small collective whose first step is a board exchange: posts
  // that exchange's part ahead (its board_exchange then only waits), then
  // waits briefly, as arrive() does, for every peer's part.
  bool arrive_on_board(const OpSig &sig, const void *mine, size_t bytes);

  // The operation the following waits belong to, for the watchdog's lines.
  void begin_op(const char *api, uint64_t seq) {
    op_api_ = api;
    op_seq_ = seq;
  }

  void set_exec_timeout(int seconds);
  int exec_timeout_s() const { return timeout_s_; }
  // Busy-wait and yield budgets of a wait (PYHCCL_SPIN_US, PYHCCL_YIELD_US);
  // no spinning when this host's ranks outnumber its cores.
  void set_spin(int local_ranks);

  Connection &conn(int peer) { return *conns[peer]; }

 private:
  template <typename Ready>
  bool brief_wait(Ready ready);  // arrive()'s wait, until ready(p) for every peer
  // One step of a wait idle for idle_ns: spins (spin_ns_), then yields
  // (yield_ns_); false once it is time to sleep.
  bool spin_or_yield(int64_t idle_ns) const;
  // A wait that timed out on a live local peer waits this much longer: that
  // peer may itself wait on the one at fault (a host that vanished), and its
  // own timeout, relayed with the culprit, is the verdict to report; else
  // this rank would blame its healthy neighbour.
  int64_t blame_grace_ns(int peer) const;
  // "timed out after ... waiting for rank <peer> (...)".
  std::string timeout_text(int peer) const;
  void board_post(const OpSig &sig, const void *mine, size_t bytes);

  static constexpr int64_t kSliceNs = 100 * 1000000LL;  // longest sleep between failure probes

  HcclResult check_failures(bool probe, WaitError *err);
  // The watchdog (PYHCCL_WATCHDOG_S): a wait without progress for waited_ns
  // warns once it passes the next mark (the setting, then twice as long each
  // time): watchdog_due() moves the mark, watchdog_warn() prints the line,
  // naming the operation and the ranks it waits for.
  bool watchdog_due(int64_t waited_ns, int64_t *next_mark) const;
  void watchdog_warn(int64_t waited_ns, const std::vector<int> &missing) const;
  // board_exchange's parts (board.cc).
  bool board_ready(int p, uint64_t gen, const OpSig &sig, WaitError *err) const;
  // Whether peer p, which has not posted, never will (a mismatch, or it left).
  bool board_stuck(int p, uint64_t gen, const OpSig &sig, WaitError *err) const;
  void sleep(uint32_t bell, int64_t until, bool *notice);
  // Deadlock detection while a blocking send to local peer `to` stalls
  // (engine.cc); *seen carries the cycle's words from the last look.
  bool send_deadlock(int to, std::vector<uint64_t> *seen, WaitError *err);
  // Communicators used in opposite orders (order.cc), for a wait that sleeps
  // in a collective: order_publish() at its first sleep says where this
  // process is blocked; order_deadlock() at each failure probe looks whether
  // local peer `peer`, which it waits for, is blocked in another
  // communicator's collective that this process has not begun, waiting for
  // it. Nothing of it runs in a wait that does not sleep.
  struct OrderWatch {
    shm::BlockedWait wait;
    int peer = -1;
    uint64_t seen = 0;       // the peer's record (its gen) at the last look
    int64_t verdict_at = 0;  // when this rank concluded (it lingers for the peer)
    uint64_t other = 0;      // the communicator the peer is blocked in
    std::string why;
  };
  void order_publish(OrderWatch *w, int peer);
  bool order_deadlock(OrderWatch *w, int peer, int64_t now, WaitError *err);
  HcclResult order_fail(OrderWatch *w, bool notify, WaitError *err);
  // A wait that failed otherwise (*err) after this rank concluded: the verdict.
  HcclResult order_override(OrderWatch *w, WaitError *err);

  const int rank_;
  const int nranks_;
  int timeout_s_ = 1836;
  int64_t timeout_ns_ = 0;
  int64_t spin_ns_ = 0, yield_ns_ = 0, arrive_ns_ = 0;
  int64_t watchdog_ns_ = 0;  // first warning after this long without progress; 0: never
  bool order_check_ = true;  // PYHCCL_ORDER_CHECK: look for communicators used in opposite orders
  const char *op_api_ = "";
  uint64_t op_seq_ = 0;
  std::vector<Connection *> active_;
  std::vector<pollfd> fds_;
  std::atomic<int> interrupted_{0};
  uint64_t irq_ = 0;  // hostrt::interrupts() when the running batch started
  uint64_t board_gen_ = 0;  // board exchanges posted
  std::vector<const char *> board_views_;  // of the last exchange, by rank
  std::vector<size_t> board_sizes_;
  // arrive_on_board's part, posted ahead of its exchange.
  struct {
    bool pending = false;
    const void *mine;
    size_t bytes;
  } ahead_;
  std::mutex interrupt_mu_;
  std::string interrupt_why_;
};

}  // namespace hccl
