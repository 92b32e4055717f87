// Hub's liveness (hub.h): what this rank can see of a local peer without a
// message: that it failed (its flag and reason), died (its pid is gone or
// reused), or left; which collective it announced; whether its FIFO toward
// this rank holds a message nobody took.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hccl/transport/shm/hub.h"

namespace hccl {
namespace shm {
namespace {

// Reads a process's state letter and start time from /proc/<pid>/stat.
bool read_stat(int pid, char *state, uint64_t *start) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // The command name may hold anything, ')' included: fields follow the last ')'.
  const char *p = std::strrchr(buf, ')');
  if (p == nullptr) return false;
  p += 2;
  *state = *p;
  // starttime is field 22; after ')' the fields start at 3 (state).
  for (int field = 3; field < 22 && *p != '\0'; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return false;
    ++p;
  }
  *start = std::strtoull(p, nullptr, 10);
  return true;
}

}  // namespace

uint64_t process_start_time(int pid) {
  char state;
  uint64_t start = 0;
  return read_stat(pid, &state, &start) ? start : 0;
}

void Hub::fail(HcclResult code, const std::string &why, uint64_t seq, int culprit) {
  Control *c = ctl(rank_);
  if (c->failed.load(std::memory_order_acquire) != 0) return;
  c->failed_seq = seq;
  c->culprit = culprit;
  size_t n = why.size() < sizeof(c->reason) - 1 ? why.size() : sizeof(c->reason) - 1;
  std::memcpy(c->reason, why.data(), n);
  c->reason[n] = '\0';
  c->failed.store(code == HCCL_SUCCESS ? HCCL_E_INTERNAL : code, std::memory_order_seq_cst);
  for (int r = 0; r < nranks_; ++r)
    if (local_index_[r] >= 0) ring(r);
}

bool Hub::peer_dead(int r, WaitError *err) {
  const PeerDesc &d = peers_[r].desc;
  if (r == rank_ || !d.same_pid_ns || d.pid <= 0) return false;
  bool dead = false;
  if (kill(d.pid, 0) != 0 && errno == ESRCH) {
    dead = true;
  } else {
    char state = '?';
    uint64_t start = 0;
    // Gone between the two checks, a zombie, or the pid now names another process.
    if (!read_stat(d.pid, &state, &start) || state == 'Z' || state == 'X' ||
        (d.start_time != 0 && start != d.start_time))
      dead = true;
  }
  if (!dead) return false;
  WaitError::closed(r, "rank " + std::to_string(r) + " (pid " + std::to_string(d.pid) +
                           ") exited or destroyed its communicator")
      .into(err);
  return true;
}

bool Hub::peer_failed(int r, bool probe, WaitError *err) {
  if (r == rank_ || local_index_[r] < 0) return false;
  const Control *c = ctl(r);
  uint32_t code = c->failed.load(std::memory_order_acquire);
  if (code != 0) {
    char reason[sizeof(c->reason)];
    std::memcpy(reason, c->reason, sizeof(reason));
    reason[sizeof(reason) - 1] = '\0';
    // The peer's verdict is everyone's: same code, its reason.
    WaitError::peer_failed(static_cast<HcclResult>(code), r,
                           c->culprit >= 0 && c->culprit < nranks_ ? c->culprit : -1, c->failed_seq,
                           "rank " + std::to_string(r) + " failed (" + reason + ")")
        .into(err);
    return true;
  }
  return probe && !peer_left(r) && peer_dead(r, err);
}

void Hub::announce(const OpSig &sig) {
  // Once per collective: a rewrite would take the line back from peers reading it.
  if (sig.seq == announced_) return;
  announced_ = sig.seq;
  Announce *a = announcement(rank_);
  uint64_t w[4];
  std::memcpy(w, &sig, sizeof(w));
  // A reader that sees these words sees the earlier `arrived` too (announced()).
  std::atomic_thread_fence(std::memory_order_release);
  for (int i = 0; i < 4; ++i) a->words[sig.seq & 1][i].store(w[i], std::memory_order_relaxed);
  a->arrived.store(sig.seq, std::memory_order_release);
}

bool Hub::announced(int r, uint64_t seq, uint64_t *at, OpSig *sig) const {
  const Announce *a = announcement(r);
  *at = arrived(r);
  if (*at != seq) return false;
  uint64_t w[4];
  for (int i = 0; i < 4; ++i) w[i] = a->words[seq & 1][i].load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  // Still `seq`: the owner had not started on seq + 2, which rewrites these words.
  if (arrived(r) != seq) return false;
  std::memcpy(sig, w, sizeof(w));
  return true;
}

bool Hub::fifo_pending(int r, OpSig *sig) const {
  const uint32_t taken = tail(rank_, r)->value.load(std::memory_order_relaxed);
  if (head(r, rank_)->value.load(std::memory_order_acquire) == taken) return false;
  const char *slot = fifo(r, rank_) + static_cast<size_t>((taken + 1) % layout_.slots) * layout_.slot_bytes;
  *sig = reinterpret_cast<const SlotHeader *>(slot)->msg.sig;
  return true;
}

}  // namespace shm
}  // namespace hccl
