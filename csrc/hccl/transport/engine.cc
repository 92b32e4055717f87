#include "hccl/transport/engine.h"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/clock.h"
#include "common/env.h"
#include "common/futex.h"
#include "common/log.h"
#include "runtime/hostrt.h"

namespace hccl {
namespace {

// A blocking send stalled this long publishes its wait and looks for a cycle
// (at each failure probe); nothing of it runs before, nor in collectives.
constexpr int64_t kSendStallNs = 100 * 1000000LL;

int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

Engine::Engine(int rank, int nranks)
    : conns(nranks), rank_(rank), nranks_(nranks), board_views_(nranks), board_sizes_(nranks) {
  set_exec_timeout(1836);
  set_spin(1);
}

Engine::~Engine() {
  conns.clear();  // before the hub their shm connections point into
  hub.reset();
}

void Engine::set_exec_timeout(int seconds) {
  timeout_s_ = seconds > 0 ? seconds : 1836;
  timeout_ns_ = static_cast<int64_t>(timeout_s_) * 1000000000LL;
}

void Engine::set_spin(int local_ranks) {
  bool oversubscribed = local_ranks > usable_cpus();
  spin_ns_ = 1000 * common::env_int("PYHCCL_SPIN_US", oversubscribed ? 0 : 5, 0, 1000000);
  yield_ns_ = 1000 * common::env_int("PYHCCL_YIELD_US", 50, 0, 1000000);
  arrive_ns_ = 1000 * common::env_int("PYHCCL_INLINE_US", 20, 0, 1000000);
  watchdog_ns_ = 1000000000LL * common::env_int("PYHCCL_WATCHDOG_S", 30, 0, 1 << 30);
  order_check_ = common::env_int("PYHCCL_ORDER_CHECK", 1, 0, 1) != 0;
}

int64_t Engine::blame_grace_ns(int peer) const {
  if (!hub || peer == rank_ || hub->local_index(peer) < 0) return 0;
  return std::min<int64_t>(2000000000LL, timeout_ns_ / 4);
}

bool Engine::watchdog_due(int64_t waited_ns, int64_t *next_mark) const {
  if (watchdog_ns_ == 0 || waited_ns < *next_mark) return false;
  *next_mark *= 2;
  return common::log_level() <= common::kError;  // level 4: nothing at all
}

void Engine::watchdog_warn(int64_t waited_ns, const std::vector<int> &missing) const {
  std::string ranks;
  for (int p : missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(p);
  std::string what = op_api_;
  if (op_seq_ != 0) what += " #" + std::to_string(op_seq_);
  // Not an error yet: printed whatever the log level, so nobody stares at a silent
  // terminal for the whole exec timeout.
  common::log_write(common::kWarning, "HCCL",
                    "rank %d: %s has made no progress for %lld s, waiting for rank(s) %s "
                    "(which have not arrived or not sent); it fails at the exec timeout, %d s "
                    "(HCCL_EXEC_TIMEOUT). PYHCCL_WATCHDOG_S=0 silences this",
                    rank_, what.c_str(), static_cast<long long>(waited_ns / 1000000000LL),
                    ranks.c_str(), timeout_s_);
}

bool Engine::spin_or_yield(int64_t idle_ns) const {
  if (idle_ns < spin_ns_) {
    for (int i = 0; i < 16; ++i) common::cpu_relax();
    return true;
  }
  if (idle_ns < spin_ns_ + yield_ns_) {
    sched_yield();
    return true;
  }
  return false;
}

std::string Engine::timeout_text(int peer) const {
  return "timed out after " + std::to_string(timeout_s_) + " s waiting for rank " +
         std::to_string(peer) + " (HCCL_EXEC_TIMEOUT / hcclExecTimeOut)";
}

template <typename Ready>
bool Engine::brief_wait(Ready ready) {
  const int64_t start = common::now_ns();
  for (int p = 0; p < nranks_; ++p) {
    while (p != rank_ && !ready(p)) {
      const int64_t waited = common::now_ns() - start;
      if (waited >= arrive_ns_) return false;
      if (!spin_or_yield(waited)) sched_yield();  // yields past yield_ns_ too: the wait is brief
    }
  }
  return true;
}

bool Engine::arrive(const OpSig &sig) {
  if (nranks_ == 1) return true;
  if (!hub || !hub->all_local() || arrive_ns_ == 0) return false;
  hub->announce(sig);
  return brief_wait([&](int p) { return static_cast<int64_t>(hub->arrived(p) - sig.seq) >= 0; });
}

bool Engine::arrive_on_board(const OpSig &sig, const void *mine, size_t bytes) {
  if (arrive_ns_ == 0) return false;
  hub->announce(sig);
  board_post(sig, mine, bytes);
  ahead_ = {true, mine, bytes};
  const uint64_t gen = board_gen_;
  const int b = static_cast<int>(gen & 1);
  return brief_wait([&](int p) { return hub->board(p, b)->gen.load(std::memory_order_acquire) == gen; });
}

void Engine::notify_failure(HcclResult code, const std::string &why, uint64_t seq, int culprit) {
  if (culprit < 0) culprit = rank_;
  // UNAVAIL is this rank's own verdict (interrupted, aborted); to its peers it is a
  // remote failure, whichever of the two notices (the interrupted op's, the abort's)
  // goes out first.
  if (code == HCCL_E_UNAVAIL) code = HCCL_E_REMOTE;
  for (auto &c : conns)
    if (c) c->notify_failure(code, why, seq, culprit);
}

void Engine::interrupt(HcclResult code, const std::string &why) {
  {
    std::lock_guard<std::mutex> lock(interrupt_mu_);
    if (interrupted_.load() != 0) return;
    interrupt_why_ = why;
    interrupted_.store(static_cast<int>(code == HCCL_SUCCESS ? HCCL_E_INTERNAL : code));
  }
  if (hub) hub->ring(rank_);  // wake this rank if it sleeps on its doorbell
}

HcclResult Engine::linger(int64_t deadline_ns, WaitError *err) {
  for (;;) {
    bool waiting = false;
    for (int p = 0; p < nranks_; ++p) {
      if (p == rank_ || !conns[p] || !conns[p]->unreceived()) continue;
      waiting = true;
      WaitError e;
      const bool failed = conns[p]->peer_failed(true, &e);
      if (!failed && !conns[p]->peer_left()) continue;
      err->code = failed ? e.code : HCCL_E_REMOTE;
      err->peer = p;
      err->what = "rank " + std::to_string(p) + " never received this rank's last message(s): " +
                  (failed ? "it failed: " + e.what : "it destroyed its communicator first") +
                  " (a send completes before its receive when it fits the channel; "
                  "check that every send has a matching receive)";
      return err->code;
    }
    if (!waiting || common::now_ns() >= deadline_ns) return HCCL_SUCCESS;
    usleep(1000);  // rare and at destroy only: a plain sleep, no doorbell
  }
}

void Engine::leave() {
  for (auto &c : conns)
    if (c) c->leave();
  if (hub) hub->leave();
}

bool Engine::peer_failure(WaitError *err) {
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_ && conns[p] && conns[p]->peer_reported_failure(err)) return true;
  return false;
}

HcclResult Engine::settle(uint64_t seq, WaitError *err) {
  // Notices from other hosts wait unread on the control sockets: look only
  // when one is there (one poll for all), shared-memory flags always.
  fds_.clear();
  for (auto &c : conns)
    if (c && c->notice_fd() >= 0) fds_.push_back({c->notice_fd(), POLLIN, 0});
  bool notices = !fds_.empty() && poll(fds_.data(), fds_.size(), 0) > 0;
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_ || !conns[p]) continue;
    WaitError e;
    bool failed = notices || hub ? conns[p]->peer_failed(notices, &e) : false;
    if (failed && (e.failed_seq == 0 || e.failed_seq <= seq)) {
      *err = e;
      return err->code;
    }
  }
  return HCCL_SUCCESS;
}

HcclResult Engine::check_failures(bool probe, WaitError *err) {
  if (hostrt::interrupts() != irq_) {  // Ctrl-C in the Python binding: give up, tell the peers
    interrupt(HCCL_E_UNAVAIL, "interrupted (SIGINT)");
  }
  if (int code = interrupted_.load()) {
    std::lock_guard<std::mutex> lock(interrupt_mu_);
    err->code = static_cast<HcclResult>(code);
    err->what = interrupt_why_;
    return err->code;
  }
  // Any peer's failure ends the wait: every rank of the operation must fail.
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_ && conns[p] && conns[p]->peer_failed(probe, err)) return err->code;
  return HCCL_SUCCESS;
}

// Sleeps until something may have moved, at most until `until`.
void Engine::sleep(uint32_t bell, int64_t until, bool *notice) {
  *notice = false;
  fds_.clear();
  for (Connection *c : active_) c->poll_fds(&fds_);
  const size_t data_fds = fds_.size();
  for (auto &c : conns)
    if (c && c->notice_fd() >= 0) fds_.push_back({c->notice_fd(), POLLIN, 0});
  int64_t now = common::now_ns();
  if (until <= now) return;
  if (data_fds == 0 || fds_.empty()) {
    if (!hub) {  // nothing to wait on but time (a transfer waiting for its own input)
      timespec ts{0, std::min<int64_t>(until - now, 1000000)};
      nanosleep(&ts, nullptr);
      return;
    }
    shm::SyncLine *line = hub->doorbell();
    line->waiters.fetch_add(1, std::memory_order_seq_cst);
    if (line->value.load(std::memory_order_seq_cst) == bell)
      common::futex_wait(&line->value, bell, until, /*shared=*/true);
    line->waiters.fetch_sub(1, std::memory_order_seq_cst);
    return;
  }
  // Sockets involved: poll them, and let local peers wake us by datagram.
  if (hub) {
    fds_.push_back({hub->wake_fd(), POLLIN, 0});
    hub->ctl(rank_)->poll_sleeper.store(1, std::memory_order_seq_cst);
    if (hub->doorbell()->value.load(std::memory_order_seq_cst) != bell) {
      hub->ctl(rank_)->poll_sleeper.store(0, std::memory_order_relaxed);
      return;
    }
  }
  int ms = static_cast<int>((until - now + 999999) / 1000000);
  int n = poll(fds_.data(), fds_.size(), ms);
  if (hub) hub->end_poll_sleep();
  for (size_t i = data_fds; n > 0 && i < fds_.size(); ++i)
    if (fds_[i].revents != 0 && (!hub || fds_[i].fd != hub->wake_fd())) *notice = true;
}

// A cycle of local ranks, each in a blocking send to the next whose FIFO is
// full, is a deadlock: none of them receives before its send completes.
// Seen twice, one probe apart, with the same words (so every member stayed in
// the same operation, and the FIFOs, full in between, could not drain), it is
// certain; a peer that is late, busy or in another operation never publishes.
bool Engine::send_deadlock(int to, std::vector<uint64_t> *seen, WaitError *err) {
  std::vector<int> cycle;
  std::vector<uint64_t> words;
  if (!hub->send_wait_cycle(&cycle, &words)) {
    seen->clear();
    return false;
  }
  const bool again = *seen == words;
  *seen = words;
  if (!again) return false;
  std::string ring;
  for (size_t i = 0; i < cycle.size(); ++i) {
    if (i == 7 && cycle.size() > 8) {
      ring += "... -> ";
      break;
    }
    ring += std::to_string(cycle[i]) + " -> ";
  }
  ring += std::to_string(rank_);
  err->code = HCCL_E_INTERNAL;
  err->peer = to;
  err->what = "send to rank " + std::to_string(to) + " cannot complete, deadlock: ranks " + ring +
              " each wait in a blocking send to the next and none receives; post the sends and "
              "receives of a ring together in HcclGroupStart/HcclGroupEnd (pyhccl.group()) or "
              "HcclBatchSendRecv";
  return true;
}

HcclResult Engine::run(Transfer *const *xfers, size_t n, WaitError *err, bool blocking_send) {
  if (n == 0) return HCCL_SUCCESS;
  irq_ = hostrt::interrupts();
  active_.clear();
  for (size_t i = 0; i < n; ++i) {
    Connection *c = conns[xfers[i]->peer].get();
    c->post(xfers[i]);
    if (std::find(active_.begin(), active_.end(), c) == active_.end()) active_.push_back(c);
  }
  HcclResult rc = HCCL_SUCCESS;
  int64_t last_progress = common::now_ns();
  int64_t idle_since = 0;
  int64_t next_probe = last_progress + kSliceNs;
  size_t first_open = 0;  // transfers before it are complete
  // Deadlock detection: for blocking sends to one local peer only (a rank
  // sending to several may be stalled on another peer than the one named).
  int wait_peer = -1;
  if (blocking_send && hub) {
    wait_peer = xfers[0]->peer;
    for (size_t i = 0; i < n && wait_peer >= 0; ++i)
      if (xfers[i]->peer != wait_peer || xfers[i]->kind != Transfer::kSend) wait_peer = -1;
    if (wait_peer == rank_ || (wait_peer >= 0 && hub->local_index(wait_peer) < 0)) wait_peer = -1;
  }
  bool published = false;
  std::vector<uint64_t> seen;
  OrderWatch order;
  int64_t next_warn = watchdog_ns_;
  for (;;) {
    const uint32_t bell = hub ? hub->doorbell()->value.load(std::memory_order_acquire) : 0;
    bool moved_any = false;
    for (Connection *c : active_) {
      bool moved = false;
      rc = c->progress(&moved, err);
      if (rc != HCCL_SUCCESS) break;
      moved_any |= moved;
    }
    if (rc != HCCL_SUCCESS) break;
    while (first_open < n && xfers[first_open]->complete) ++first_open;
    if (first_open == n) break;
    if (moved_any) {
      idle_since = 0;
      continue;
    }
    int64_t now = common::now_ns();
    if (idle_since == 0) {
      idle_since = now;
      last_progress = now;
    }
    bool probe = now >= next_probe;
    if (probe) next_probe = now + kSliceNs;
    if ((rc = check_failures(probe, err)) != HCCL_SUCCESS) break;
    if (probe && watchdog_due(now - last_progress, &next_warn)) {
      std::vector<int> peers;
      for (size_t i = first_open; i < n; ++i)
        if (!xfers[i]->complete &&
            std::find(peers.begin(), peers.end(), xfers[i]->peer) == peers.end())
          peers.push_back(xfers[i]->peer);
      watchdog_warn(now - last_progress, peers);
    }
    if (wait_peer >= 0 && probe && now - last_progress >= kSendStallNs) {
      if (!published) hub->publish_send_wait(wait_peer);
      published = true;
      if (send_deadlock(wait_peer, &seen, err)) {
        rc = err->code;
        break;
      }
    }
    if (probe && order.wait.active() && order_deadlock(&order, xfers[first_open]->peer, now, err)) {
      rc = err->code;
      break;
    }
    const int peer = xfers[first_open]->peer;
    const int64_t limit = timeout_ns_ + blame_grace_ns(peer);
    if (now - last_progress >= limit) {
      err->code = rc = HCCL_E_TIMEOUT;
      err->what = timeout_text(peer);
      if (blocking_send)  // the likely cause, where peers' states cannot be seen (other hosts)
        err->what += "; a send larger than the channel waits for its receive, so a ring (or any "
                     "cycle) of blocking sends never completes: post its sends and receives "
                     "together in HcclGroupStart/HcclGroupEnd (pyhccl.group()) or HcclBatchSendRecv";
      err->timeout = true;
      err->peer = peer;
      err->last_seen = conns[peer]->last_seen();
      break;
    }
    if (spin_or_yield(now - idle_since)) continue;
    if (!order.wait.active()) order_publish(&order, xfers[first_open]->peer);
    bool notice = false;
    sleep(bell, std::min(next_probe, last_progress + limit), &notice);
    if (notice && (rc = check_failures(true, err)) != HCCL_SUCCESS) break;
  }
  if (published) hub->publish_send_wait(-1);
  if (rc != HCCL_SUCCESS) rc = order_override(&order, err);
  order.wait.end();
  if (rc != HCCL_SUCCESS)
    for (Connection *c : active_) c->clear();
  active_.clear();
  return rc;
}

}  // namespace hccl
