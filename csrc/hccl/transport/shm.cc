#include "hccl/transport/shm.h"

#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "common/clock.h"
#include "common/env.h"
#include "common/futex.h"

namespace hccl {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "shm layout assumes little endian");

constexpr int64_t kSleepSliceNs = 25 * 1000000LL;     // futex sleep between checks
constexpr int64_t kLivenessEveryNs = 100 * 1000000LL;  // kill/flock probe period

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

ShmTransport::ShmTransport(const Options &opt, const std::string &name)
    : rank_(opt.rank),
      nranks_(opt.nranks),
      layout_(opt.nranks, opt.slot_bytes, opt.p2p_bytes),
      name_(name),
      peers_(opt.nranks),
      tx_count_(opt.nranks, 0),
      rx_count_(opt.nranks, 0) {
  set_exec_timeout(opt.exec_timeout_s);
  // With more ranks than cores a spinning waiter steals the core the rank it
  // waits for needs: go to sched_yield / futex almost at once.
  bool oversubscribed = opt.local_ranks > usable_cpus();
  spin_ns_ = 1000 * common::env_int("PYHCCL_SPIN_US", oversubscribed ? 0 : 5, 0, 1000000);
  yield_ns_ = 1000 * common::env_int("PYHCCL_YIELD_US", 50, 0, 1000000);
}

std::unique_ptr<ShmTransport> ShmTransport::create(const Options &opt, const std::string &name,
                                                   std::string *why) {
  std::unique_ptr<ShmTransport> t(new ShmTransport(opt, name));
  Peer &me = t->peers_[opt.rank];
  if (!shm_segment_create(name, t->layout_.total, &me.map, why)) return nullptr;
  // Held for this rank's lifetime: peers probe it to learn that we died.
  if (flock(me.map.fd, LOCK_EX | LOCK_NB) != 0) {
    *why = "flock on own shared-memory segment failed: " + std::string(std::strerror(errno));
    shm_segment_unlink(name);
    return nullptr;
  }
  me.pid = getpid();
  ShmControl *c = t->ctl(opt.rank);
  c->magic = kShmMagic;
  c->nranks = static_cast<uint32_t>(opt.nranks);
  c->rank = static_cast<uint32_t>(opt.rank);
  c->slot_bytes = opt.slot_bytes;
  c->p2p_bytes = opt.p2p_bytes;
  return t;
}

bool ShmTransport::connect(const std::vector<PeerDesc> &peers, std::string *why) {
  for (int r = 0; r < nranks_; ++r) {
    Peer &p = peers_[r];
    p.pid = peers[r].pid;
    p.same_pid_ns = peers[r].same_pid_ns;
    p.segment_fd = peers[r].segment_fd;
    if (r == rank_) continue;
    if (!shm_segment_open(peers[r].segment, layout_.total, &p.map, why)) return false;
    const ShmControl *c = ctl(r);
    if (c->magic != kShmMagic || c->rank != static_cast<uint32_t>(r) ||
        c->nranks != static_cast<uint32_t>(nranks_) || c->slot_bytes != layout_.slot_bytes ||
        c->p2p_bytes != layout_.p2p_bytes) {
      *why = "shared-memory segment of rank " + std::to_string(r) + " (" + peers[r].segment +
             ") has an unexpected layout";
      return false;
    }
  }
  return true;
}

bool ShmTransport::can_open_peer_fds() const {
  for (int r = 0; r < nranks_; ++r) {
    const Peer &p = peers_[r];
    if (r == rank_ || p.pid == getpid()) continue;
    if (!p.same_pid_ns || p.segment_fd < 0) return false;
    std::string path = "/proc/" + std::to_string(p.pid) + "/fd/" + std::to_string(p.segment_fd);
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    close(fd);
  }
  return true;
}

void ShmTransport::unlink_own() {
  if (!unlinked_) shm_segment_unlink(name_);
  unlinked_ = true;
}

void ShmTransport::unlink_names(const std::vector<PeerDesc> &peers) {
  for (const PeerDesc &p : peers)
    if (!p.segment.empty()) shm_segment_unlink(p.segment);
}

ShmTransport::~ShmTransport() {
  unlink_own();
  for (Peer &p : peers_) {
    if (p.arena_base != nullptr) munmap(p.arena_base, p.arena_size);
    shm_segment_close(&p.map);
  }
}

void ShmTransport::set_exec_timeout(int seconds) {
  timeout_s_ = seconds > 0 ? seconds : 1836;
  timeout_ns_ = static_cast<int64_t>(timeout_s_) * 1000000000LL;
}

void ShmTransport::post_line(SyncLine *line, uint32_t value) {
  line->value.store(value, std::memory_order_seq_cst);
  if (line->waiters.load(std::memory_order_seq_cst) != 0)
    common::futex_wake(&line->value, INT_MAX, /*shared=*/true);
}

void ShmTransport::ring(int peer) {
  SyncLine *bell = &ctl(peer)->doorbell;
  bell->value.fetch_add(1, std::memory_order_seq_cst);
  if (bell->waiters.load(std::memory_order_seq_cst) != 0)
    common::futex_wake(&bell->value, INT_MAX, /*shared=*/true);
}

void ShmTransport::post(uint64_t round) {
  post_line(&ctl(rank_)->progress, static_cast<uint32_t>(round));
}

HcclResult ShmTransport::wait(int peer, uint64_t round, WaitError *err) {
  return wait_line(&ctl(peer)->progress, static_cast<uint32_t>(round), &peer, 1, peer, err);
}

bool ShmTransport::peer_failed(int peer, WaitError *err) const {
  const ShmControl *c = ctl(peer);
  uint32_t code = c->failed.load(std::memory_order_acquire);
  if (code == 0) return false;
  char reason[sizeof(c->reason)];
  std::memcpy(reason, c->reason, sizeof(reason));
  reason[sizeof(reason) - 1] = '\0';
  err->code = HCCL_E_REMOTE;
  err->what = "rank " + std::to_string(peer) + " failed (" + reason + ")";
  return true;
}

bool ShmTransport::peer_dead(int peer, WaitError *err) const {
  if (peer == rank_) return false;
  const Peer &p = peers_[peer];
  bool dead = false;
  // The owner holds LOCK_EX on its segment for as long as it lives (the kernel
  // drops it at exit, zombies included); getting a shared lock means it left.
  if (p.map.fd >= 0 && flock(p.map.fd, LOCK_SH | LOCK_NB) == 0) {
    flock(p.map.fd, LOCK_UN);
    dead = true;
  }
  if (!dead && p.same_pid_ns && p.pid > 0 && kill(p.pid, 0) != 0 && errno == ESRCH) dead = true;
  if (!dead) return false;
  err->code = HCCL_E_REMOTE;
  err->what = "rank " + std::to_string(peer) + " (pid " + std::to_string(p.pid) +
              ") exited or destroyed its communicator";
  return true;
}

HcclResult ShmTransport::wait_line(SyncLine *line, uint32_t target, const int *watch, int nwatch,
                                   int waiting_for, WaitError *err) {
  if (reached(line->value.load(std::memory_order_acquire), target)) return HCCL_SUCCESS;
  // Spin briefly (only when ranks do not outnumber cores), then yield the
  // core to whoever else wants it, then sleep on the futex.
  const int64_t start = common::now_ns();
  if (spin_ns_ > 0) {
    for (;;) {
      for (int i = 0; i < 32; ++i) {
        cpu_relax();
        if (reached(line->value.load(std::memory_order_acquire), target)) return HCCL_SUCCESS;
      }
      if (common::now_ns() - start >= spin_ns_) break;
    }
  }
  while (common::now_ns() - start < spin_ns_ + yield_ns_) {
    sched_yield();
    if (reached(line->value.load(std::memory_order_acquire), target)) return HCCL_SUCCESS;
  }
  const int64_t deadline = start + timeout_ns_;
  int64_t next_probe = start;
  for (;;) {
    for (int i = 0; i < nwatch; ++i)
      if (peer_failed(watch[i], err)) return err->code;
    int64_t now = common::now_ns();
    if (now >= next_probe) {
      for (int i = 0; i < nwatch; ++i)
        if (peer_dead(watch[i], err)) return err->code;
      next_probe = now + kLivenessEveryNs;
    }
    if (now >= deadline) {
      err->code = HCCL_E_TIMEOUT;
      err->what = "timed out after " + std::to_string(timeout_s_) + " s waiting for rank " +
                  std::to_string(waiting_for) + " (HCCL_EXEC_TIMEOUT / hcclExecTimeOut)";
      return err->code;
    }
    line->waiters.fetch_add(1, std::memory_order_seq_cst);
    uint32_t v = line->value.load(std::memory_order_seq_cst);
    if (!reached(v, target)) {
      int64_t until = now + kSleepSliceNs;
      common::futex_wait(&line->value, v, until < deadline ? until : deadline, /*shared=*/true);
    }
    line->waiters.fetch_sub(1, std::memory_order_seq_cst);
    if (reached(line->value.load(std::memory_order_acquire), target)) return HCCL_SUCCESS;
  }
}

void ShmTransport::abort(HcclResult code, const std::string &why) {
  ShmControl *c = ctl(rank_);
  if (c->failed.load(std::memory_order_acquire) != 0) return;
  size_t n = why.size() < sizeof(c->reason) - 1 ? why.size() : sizeof(c->reason) - 1;
  std::memcpy(c->reason, why.data(), n);
  c->reason[n] = '\0';
  c->failed.store(code == HCCL_SUCCESS ? HCCL_E_INTERNAL : code, std::memory_order_seq_cst);
  // Wake everyone who sleeps on our counters or on their doorbell.
  common::futex_wake(&c->progress.value, INT_MAX, true);
  for (int r = 0; r < nranks_; ++r)
    if (r != rank_) ring(r);
}

}  // namespace hccl
