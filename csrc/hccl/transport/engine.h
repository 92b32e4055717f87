// Runs posted transfers to completion: progresses every connection involved,
// and when nothing moves spins briefly (only when ranks do not outnumber
// cores), yields, then sleeps: on the shared-memory doorbell (a futex) when
// only local peers are involved, in poll() over the sockets (and a wake-up
// socket local peers signal) otherwise. Every wait is bounded by the exec
// timeout without progress, and ends early when a peer fails or dies. A
// cycle of stalled blocking sends among local ranks fails as a deadlock.
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

  // Tells every peer, best effort, that this rank failed in collective `seq`.
  void notify_failure(HcclResult code, const std::string &why, uint64_t seq);
  // Makes running and later waits fail at once with `why` (abort). Any thread.
  void interrupt(HcclResult code, const std::string &why);
  // After collective `seq` succeeded here: fails it (*err) if a peer reported
  // a failure in it, or earlier, so that no rank succeeds where another failed.
  HcclResult settle(uint64_t seq, WaitError *err);
  // Whether some peer reported a failure (or died); any thread, at any time.
  bool peer_failure(WaitError *err);

  // Arrival, for running a small collective on the calling thread (comm/exec.cc):
  // announce() says this rank runs collective `seq` now or next, with nothing
  // before it; arrive() announces and then waits briefly (PYHCCL_INLINE_US,
  // spinning only when cores are not oversubscribed) for every peer to have
  // announced it too. False when one is late or on another host.
  void announce(uint64_t seq) {
    if (hub) hub->announce(seq);
  }
  bool arrive(uint64_t seq);

  void set_exec_timeout(int seconds);
  int exec_timeout_s() const { return timeout_s_; }
  // Busy-wait and yield budgets of a wait (PYHCCL_SPIN_US, PYHCCL_YIELD_US);
  // no spinning when this host's ranks outnumber its cores.
  void set_spin(int local_ranks);

  Connection &conn(int peer) { return *conns[peer]; }

 private:
  HcclResult check_failures(bool probe, WaitError *err);
  void sleep(uint32_t bell, int64_t until, bool *notice);
  // Deadlock detection while a blocking send to local peer `to` stalls
  // (engine.cc); *seen carries the cycle's words from the last look.
  bool send_deadlock(int to, std::vector<uint64_t> *seen, WaitError *err);

  const int rank_;
  const int nranks_;
  int timeout_s_ = 1836;
  int64_t timeout_ns_ = 0;
  int64_t spin_ns_ = 0, yield_ns_ = 0, arrive_ns_ = 0;
  std::vector<Connection *> active_;
  std::vector<pollfd> fds_;
  std::atomic<int> interrupted_{0};
  uint64_t irq_ = 0;  // hostrt::interrupts() when the running batch started
  std::mutex interrupt_mu_;
  std::string interrupt_why_;
};

}  // namespace hccl
