// The one wait policy of the transport: every wait for peers (a batch of
// transfers, a board exchange, an inline arrival) runs here. A wait polls
// what it waits for; when nothing moves it spins briefly (only when ranks do
// not outnumber cores), yields, then sleeps: on the shared-memory doorbell (a
// futex) when only local peers are involved, in poll() over the sockets (and
// a wake-up socket local peers signal) otherwise. It is bounded by the exec
// timeout without progress, and ends early when the wait is interrupted, a
// peer fails or dies, or (order.cc) two local ranks are blocked in two
// communicators used in opposite orders. A watchdog line says which ranks a
// long wait waits for.
#pragma once

#include <poll.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/futex.h"
#include "common/yield_window.h"
#include "hccl/transport/shm/hub.h"
#include "hccl/transport/transport.h"

namespace hccl {

// What one wait waits for: the Waiter calls it back.
class WaitFor {
 public:
  virtual ~WaitFor() = default;
  // Moves what can move without blocking: *done when the wait is over,
  // *moved when something moved (the wait starts idling afresh); an error
  // ends the wait (*err).
  virtual HcclResult poll(bool *done, bool *moved, WaitError *err) = 0;
  // The rank waited for now: the timeout and the order check name it.
  virtual int blocker() const = 0;
  // The ranks not heard from yet, for the watchdog's line.
  virtual std::vector<int> missing() const = 0;
  // The timeout error, given its first words (Waiter::timeout_text).
  virtual WaitError timed_out(int peer, std::string what) const = 0;
  // Sockets whose readiness may let the wait move (TCP); none: the doorbell.
  virtual void poll_fds(std::vector<pollfd> *fds) { (void)fds; }
  // The last look before sleeping, once this rank counts among its
  // doorbell's waiters: false when the wait can move now (a board post rings
  // only counted waiters).
  virtual bool still_idle() const { return true; }
  // Before the wait sleeps: what this rank holds back for its peers goes out
  // (a peer may wait for it: Engine's held headers).
  virtual void before_sleep() {}
  // A wait nobody is held up by (this rank ran ahead of a peer): it sleeps at
  // once, leaving the cores to the ranks behind, instead of yielding first.
  virtual bool patient() const { return false; }
  // At each failure probe, after `stalled_ns` without progress: a failure
  // only this wait can see (a cycle of blocking sends); true with *err.
  virtual bool stalled(int64_t stalled_ns, WaitError *err) {
    (void)stalled_ns;
    (void)err;
    return false;
  }
  // Whether a timeout on a live local peer waits blame_grace_ns() longer.
  bool blame_grace = true;
};

class Waiter {
 public:
  // The engine's connections and hub (set after construction).
  Waiter(int rank, int nranks, const std::vector<std::unique_ptr<Connection>> &conns,
         const std::unique_ptr<shm::Hub> &hub);

  // Runs one wait to its end: success when `w` is done, else *err.
  HcclResult wait(WaitFor &w, WaitError *err);
  // A brief wait (inline arrival): until ready(p) for every peer p, spinning
  // and yielding for at most PYHCCL_INLINE_US; false when one is late.
  template <typename Ready>
  bool brief(Ready ready) const;
  bool brief_enabled() const { return arrive_ns_ != 0; }

  // Makes running and later waits fail at once with `why` (abort). Any thread.
  void interrupt(HcclResult code, const std::string &why);
  // The operation the following waits belong to, for the watchdog's lines
  // and the order check.
  void begin_op(const char *api, uint64_t seq) {
    op_api_ = api;
    op_seq_ = seq;
  }
  void set_exec_timeout(int seconds);
  int exec_timeout_s() const { return timeout_s_; }
  // Busy-wait and yield budgets (PYHCCL_SPIN_US, PYHCCL_YIELD_US); no
  // spinning when the ranks on this machine (one kernel, whatever host they
  // count as; the most any communicator of this process counted) outnumber
  // its usable cores: a spinning rank holds a core that the rank it waits for
  // may need. With peers on other
  // hosts a wait yields 2 ms by default: it sleeps in poll(), and waking from
  // a socket there costs more than from the doorbell (a rank that slept held
  // up the next step of its peers: small collectives ran at half speed).
  // With more than two ranks to a core, 50 us, at most kCrowdedYieldNs.
  void set_spin(int machine_ranks, bool remote_peers);
  int64_t spin_ns() const { return spin_ns_; }
  int64_t yield_base_ns() const { return yield_.base_ns(); }
  int64_t yield_max_ns() const { return yield_.max_ns(); }

 private:
  // A wait that sleeps in a collective looks for communicators used in
  // opposite orders (order.cc): order_publish() at its first sleep says where
  // this process is blocked; order_deadlock() at each failure probe looks
  // whether local peer `peer`, which it waits for, is blocked in another
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

  static constexpr int64_t kSliceNs = 100 * 1000000LL;  // longest sleep between failure probes

  // One step of a wait idle for idle_ns: spins (spin_ns_), then yields
  // (yield_, common/yield_window.h); false once it is time to sleep.
  bool spin_or_yield(int64_t idle_ns) const;
  // Sleeps until something may have moved, at most until `until`; *notice
  // when a peer's failure notice (TCP) woke it.
  void sleep(WaitFor &w, uint32_t bell, int64_t until, bool *notice);
  // Interrupts, then every peer's failure (probe: the slower checks too).
  HcclResult check_failures(bool probe, WaitError *err);
  // A wait that timed out on a live local peer waits this much longer: that
  // peer may itself wait on the one at fault (a host that vanished), and its
  // own timeout, relayed with the culprit, is the verdict to report; else
  // this rank would blame its healthy neighbour.
  int64_t blame_grace_ns(int peer) const;
  // "timed out after ... waiting for rank <peer> (...)".
  std::string timeout_text(int peer) const;
  // The watchdog (PYHCCL_WATCHDOG_S): a wait without progress for waited_ns
  // warns once it passes the next mark (the setting, then twice as long each
  // time): watchdog_due() moves the mark, watchdog_warn() prints the line,
  // naming the operation and the ranks it waits for.
  bool watchdog_due(int64_t waited_ns, int64_t *next_mark) const;
  void watchdog_warn(int64_t waited_ns, const std::vector<int> &missing) const;

  const int rank_;
  const int nranks_;
  const std::vector<std::unique_ptr<Connection>> &conns_;
  const std::unique_ptr<shm::Hub> &hub_;
  int timeout_s_ = 1836;
  int64_t timeout_ns_ = 0;
  int64_t spin_ns_ = 0, arrive_ns_ = 0;
  common::YieldWindow yield_;
  // On 2 cores, 6-16 ranks on simulated hosts of 2: 50 us stretched to 200 at
  // most kept the handoffs of a hierarchical AllReduce (32 KiB took 2.1-2.5x
  // as long without yielding) and most of what not yielding gained elsewhere.
  static constexpr int64_t kCrowdedYieldNs = 200000;
  int64_t watchdog_ns_ = 0;  // first warning after this long without progress; 0: never
  bool order_check_ = true;  // PYHCCL_ORDER_CHECK: look for communicators used in opposite orders
  const char *op_api_ = "";
  uint64_t op_seq_ = 0;
  std::vector<pollfd> fds_;
  std::atomic<int> interrupted_{0};
  uint64_t irq_ = 0;  // hostrt::interrupts() when the running wait started
  std::mutex interrupt_mu_;
  std::string interrupt_why_;
};

template <typename Ready>
bool Waiter::brief(Ready ready) const {
  const int64_t start = common::now_ns();
  for (int p = 0; p < nranks_; ++p) {
    while (p != rank_ && !ready(p)) {
      const int64_t waited = common::now_ns() - start;
      if (waited >= arrive_ns_) return false;
      if (!spin_or_yield(waited)) sched_yield();  // yields past the window too: the wait is brief
    }
  }
  return true;
}

}  // namespace hccl
