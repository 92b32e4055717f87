// The wait loop (waiter.h) and its parts: spin and yield budgets, sleeping on
// the doorbell or in poll(), interrupts, failure probes, the exec timeout and
// the watchdog. The order check is in order.cc.
#include "hccl/transport/waiter.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>

#include "common/env.h"
#include "common/log.h"
#include "runtime/hostrt.h"

namespace hccl {
namespace {

int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

// The most ranks on this machine any communicator of this process has
// counted, `n` included: one split off (torch's new_group,
// HcclCreateSubCommConfig) knows only its members, yet its ranks share the
// cores with the whole job's.
int most_machine_ranks(int n) {
  static std::atomic<int> most{0};
  int seen = most.load();
  while (n > seen && !most.compare_exchange_weak(seen, n)) {
  }
  return std::max(n, seen);
}

}  // namespace

Waiter::Waiter(int rank, int nranks, const std::vector<std::unique_ptr<Connection>> &conns,
               const std::unique_ptr<shm::Hub> &hub)
    : rank_(rank), nranks_(nranks), conns_(conns), hub_(hub) {
  set_exec_timeout(1836);
  set_spin(1, false);
}

void Waiter::set_exec_timeout(int seconds) {
  timeout_s_ = seconds > 0 ? seconds : 1836;
  timeout_ns_ = static_cast<int64_t>(timeout_s_) * 1000000000LL;
}

void Waiter::set_spin(int machine_ranks, bool remote_peers) {
  const int ranks = most_machine_ranks(machine_ranks), cpus = usable_cpus();
  spin_ns_ = 1000 * common::env_int("PYHCCL_SPIN_US", ranks > cpus ? 0 : 5, 0, 1000000);
  // With peers on other hosts and more than two ranks to a core, yielding 2 ms took the
  // cores from the ranks with work to do and from the kernel's network processing: a
  // wait there yields as on one host, but stretched to at most kCrowdedYieldNs
  // (docs/TRANSPORT.md, "How long a wait yields").
  const bool crowded = remote_peers && ranks > 2 * cpus;
  const int yield_us = remote_peers && !crowded ? 2000 : 50;
  yield_.configure(1000 * common::env_int("PYHCCL_YIELD_US", yield_us, 0, 1000000),
                   crowded ? kCrowdedYieldNs : common::YieldWindow::kMax);
  arrive_ns_ = 1000 * common::env_int("PYHCCL_INLINE_US", 20, 0, 1000000);
  watchdog_ns_ = 1000000000LL * common::env_int("PYHCCL_WATCHDOG_S", 30, 0, 1 << 30);
  order_check_ = common::env_int("PYHCCL_ORDER_CHECK", 1, 0, 1) != 0;
}

int64_t Waiter::blame_grace_ns(int peer) const {
  if (!hub_ || peer == rank_ || hub_->local_index(peer) < 0) return 0;
  return std::min<int64_t>(2000000000LL, timeout_ns_ / 4);
}

bool Waiter::watchdog_due(int64_t waited_ns, int64_t *next_mark) const {
  if (watchdog_ns_ == 0 || waited_ns < *next_mark) return false;
  *next_mark *= 2;
  return common::log_level() <= common::kError;  // level 4: nothing at all
}

void Waiter::watchdog_warn(int64_t waited_ns, const std::vector<int> &missing) const {
  std::string ranks;
  for (int p : missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(p);
  std::string what = op_api_;
  if (op_seq_ != 0) what += " #" + std::to_string(op_seq_);
  // Not an error yet: printed whatever the log level, so nobody stares at a silent
  // terminal for the whole exec timeout.
  common::log_write(common::kWarning, common::kColl,
                    "rank %d: %s has made no progress for %lld s, waiting for rank(s) %s "
                    "(which have not arrived or not sent); it fails at the exec timeout, %d s "
                    "(HCCL_EXEC_TIMEOUT). PYHCCL_WATCHDOG_S=0 silences this",
                    rank_, what.c_str(), static_cast<long long>(waited_ns / 1000000000LL),
                    ranks.c_str(), timeout_s_);
}

bool Waiter::spin_or_yield(int64_t idle_ns) const {
  if (idle_ns < spin_ns_) {
    for (int i = 0; i < 16; ++i) common::cpu_relax();
    return true;
  }
  if (idle_ns < spin_ns_ + yield_.ns()) {
    sched_yield();
    return true;
  }
  return false;
}

std::string Waiter::timeout_text(int peer) const {
  return "timed out after " + std::to_string(timeout_s_) + " s waiting for rank " +
         std::to_string(peer) + " (HCCL_EXEC_TIMEOUT / hcclExecTimeOut)";
}

void Waiter::interrupt(HcclResult code, const std::string &why) {
  {
    std::lock_guard<std::mutex> lock(interrupt_mu_);
    if (interrupted_.load() != 0) return;
    interrupt_why_ = why;
    interrupted_.store(static_cast<int>(code == HCCL_SUCCESS ? HCCL_E_INTERNAL : code));
  }
  if (hub_) hub_->ring(rank_);  // wake this rank if it sleeps on its doorbell
}

HcclResult Waiter::check_failures(bool probe, WaitError *err) {
  if (hostrt::interrupts() != irq_) {  // Ctrl-C in the Python binding: give up, tell the peers
    interrupt(HCCL_E_UNAVAIL, "interrupted (SIGINT)");
  }
  if (int code = interrupted_.load()) {
    std::lock_guard<std::mutex> lock(interrupt_mu_);
    return WaitError::interrupted(static_cast<HcclResult>(code), interrupt_why_).into(err);
  }
  // Any peer's failure ends the wait: every rank of the operation must fail.
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_ && conns_[p] && conns_[p]->peer_failed(probe, err)) return err->code;
  return HCCL_SUCCESS;
}

void Waiter::sleep(WaitFor &w, uint32_t bell, int64_t until, bool *notice) {
  *notice = false;
  fds_.clear();
  w.poll_fds(&fds_);
  const size_t data_fds = fds_.size();
  for (auto &c : conns_)
    if (c && c->notice_fd() >= 0) fds_.push_back({c->notice_fd(), POLLIN, 0});
  int64_t now = common::now_ns();
  if (until <= now) return;
  if (data_fds == 0 || fds_.empty()) {
    if (!hub_) {  // nothing to wait on but time (a transfer waiting for its own input)
      timespec ts{0, std::min<int64_t>(until - now, 1000000)};
      nanosleep(&ts, nullptr);
      return;
    }
    hub_->sleep_on_doorbell(bell, until, [&] { return w.still_idle(); });
    return;
  }
  // Sockets involved: poll them, and let local peers wake us by datagram.
  if (hub_) {
    if (!hub_->begin_poll_sleep(bell)) return;
    fds_.push_back({hub_->wake_fd(), POLLIN, 0});
  }
  int ms = static_cast<int>((until - now + 999999) / 1000000);
  int n = poll(fds_.data(), fds_.size(), ms);
  if (hub_) hub_->end_poll_sleep();
  for (size_t i = data_fds; n > 0 && i < fds_.size(); ++i)
    if (fds_[i].revents != 0 && (!hub_ || fds_[i].fd != hub_->wake_fd())) *notice = true;
}

HcclResult Waiter::wait(WaitFor &w, WaitError *err) {
  irq_ = hostrt::interrupts();
  HcclResult rc = HCCL_SUCCESS;
  int64_t last_progress = common::now_ns();
  int64_t idle_since = 0;
  int64_t next_probe = last_progress + kSliceNs;
  int64_t next_warn = watchdog_ns_;
  OrderWatch order;  // ends (unpublished) with the wait
  for (;;) {
    const uint32_t bell = hub_ ? hub_->doorbell()->value.load(std::memory_order_acquire) : 0;
    bool done = false, moved = false;
    rc = w.poll(&done, &moved, err);
    if ((done || moved) && idle_since != 0) yield_.learn(common::now_ns() - idle_since);
    if (rc != HCCL_SUCCESS || done) break;
    if (moved) {
      idle_since = 0;
      continue;
    }
    const int64_t now = common::now_ns();
    if (idle_since == 0) {
      idle_since = now;
      last_progress = now;
    }
    const bool probe = now >= next_probe;
    if (probe) next_probe = now + kSliceNs;
    if ((rc = check_failures(probe, err)) != HCCL_SUCCESS) break;
    if (probe && watchdog_due(now - last_progress, &next_warn))
      watchdog_warn(now - last_progress, w.missing());
    if (probe && w.stalled(now - last_progress, err)) {
      rc = err->code;
      break;
    }
    const int peer = w.blocker();
    if (probe && order.wait.active() && order_deadlock(&order, peer, now, err)) {
      rc = err->code;
      break;
    }
    const int64_t limit = timeout_ns_ + (w.blame_grace ? blame_grace_ns(peer) : 0);
    if (now - last_progress >= limit) {
      rc = w.timed_out(peer, timeout_text(peer)).into(err);
      break;
    }
    if (!w.patient() && spin_or_yield(now - idle_since)) continue;
    if (!order.wait.active()) order_publish(&order, peer);
    w.before_sleep();
    bool notice = false;
    sleep(w, bell, std::min(next_probe, last_progress + limit), &notice);
    if (notice && (rc = check_failures(true, err)) != HCCL_SUCCESS) break;
  }
  if (rc != HCCL_SUCCESS) rc = order_override(&order, err);
  return rc;
}

}  // namespace hccl
