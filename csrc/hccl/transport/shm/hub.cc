#include "hccl/transport/shm/hub.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "common/futex.h"
#include "hccl/transport/shm/conn.h"

namespace hccl {
namespace shm {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "shm layout assumes little endian");

// Abstract-namespace address of a rank's wake-up socket. Abstract names are
// per network namespace, which is part of what "one host" means here.
sockaddr_un wake_addr(const std::string &name, socklen_t *len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::string n = name + "-w";
  size_t max = sizeof(a.sun_path) - 1;
  if (n.size() > max) n.resize(max);
  std::memcpy(a.sun_path + 1, n.data(), n.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n.size());
  return a;
}

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

Hub::Hub(const Options &opt, const std::string &name)
    : rank_(opt.rank),
      nranks_(opt.nranks),
      layout_(opt.nranks, static_cast<int>(opt.local.size()), opt.slot_bytes, opt.slots,
              opt.board_bytes),
      name_(name),
      local_index_(opt.nranks, -1),
      local_(opt.local),
      peers_(opt.nranks) {
  for (size_t i = 0; i < opt.local.size(); ++i) local_index_[opt.local[i]] = static_cast<int>(i);
  local_count_ = opt.local.size();
}

std::unique_ptr<Hub> Hub::create(const Options &opt, const std::string &name, std::string *why) {
  std::unique_ptr<Hub> h(new Hub(opt, name));
  Peer &me = h->peers_[opt.rank];
  if (!shm_segment_create(name, h->layout_.total, &me.map, why)) return nullptr;
  Control *c = h->ctl(opt.rank);
  c->magic = kMagic;
  c->nranks = static_cast<uint32_t>(opt.nranks);
  c->rank = static_cast<uint32_t>(opt.rank);
  c->slot_bytes = opt.slot_bytes;
  c->slots = opt.slots;
  c->nlocal = static_cast<uint32_t>(opt.local.size());
  c->board_bytes = opt.board_bytes;
  h->wake_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  socklen_t len;
  sockaddr_un a = wake_addr(name, &len);
  if (h->wake_fd_ < 0 || bind(h->wake_fd_, reinterpret_cast<sockaddr *>(&a), len) != 0) {
    *why = "cannot bind the wake-up socket of " + name + ": " + std::strerror(errno);
    return nullptr;  // the destructor unlinks the segment
  }
  return h;
}

bool Hub::connect(const std::vector<PeerDesc> &peers, std::string *why) {
  for (int r = 0; r < nranks_; ++r) {
    if (local_index_[r] < 0) continue;
    Peer &p = peers_[r];
    p.desc = peers[r];
    p.wake_name = peers[r].segment;
    if (r == rank_) continue;
    if (!shm_segment_open(peers[r].segment, layout_.total, &p.map, why)) return false;
    const Control *c = ctl(r);
    if (c->magic != kMagic || c->rank != static_cast<uint32_t>(r) ||
        c->nranks != static_cast<uint32_t>(nranks_) || c->slot_bytes != layout_.slot_bytes ||
        c->slots != layout_.slots || c->board_bytes != layout_.board_bytes) {
      *why = "shared-memory segment of rank " + std::to_string(r) + " (" + peers[r].segment +
             ") has an unexpected layout";
      return false;
    }
  }
  return true;
}

void Hub::unlink_own() {
  if (!unlinked_) shm_segment_unlink(name_);
  unlinked_ = true;
}

Hub::~Hub() {
  leave();  // peers tell a rank that left from one that died
  unlink_own();
  if (wake_fd_ >= 0) close(wake_fd_);
  for (Peer &p : peers_) {
    for (auto &kv : p.mem) munmap(kv.second.base, kv.second.size);
    shm_segment_close(&p.map);
  }
}

std::unique_ptr<Connection> Hub::connection(int peer) {
  return std::unique_ptr<Connection>(new ShmConnection(*this, peer));
}

void Hub::ring(int r) {
  Control *c = ctl(r);
  c->doorbell.value.fetch_add(1, std::memory_order_seq_cst);
  if (c->doorbell.waiters.load(std::memory_order_seq_cst) != 0)
    common::futex_wake(&c->doorbell.value, INT_MAX, /*shared=*/true);
  if (r != rank_ && c->poll_sleeper.load(std::memory_order_seq_cst) != 0) {
    socklen_t len;
    sockaddr_un a = wake_addr(peers_[r].wake_name, &len);
    char b = 1;
    sendto(wake_fd_, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL, reinterpret_cast<sockaddr *>(&a), len);
  }
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

void Hub::drain_wake() {
  char buf[64];
  while (recv(wake_fd_, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
  }
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

void Hub::publish_send_wait(int to) {
  uint64_t w = 0;
  if (to >= 0) {
    if (++send_wait_gen_ == 0) ++send_wait_gen_;
    w = static_cast<uint64_t>(send_wait_gen_) << 32 | static_cast<uint32_t>(to + 1);
  }
  ctl(rank_)->send_wait.store(w, std::memory_order_seq_cst);
}

bool Hub::send_wait_cycle(std::vector<int> *cycle, std::vector<uint64_t> *words) const {
  cycle->clear();
  words->clear();
  int r = rank_;
  do {
    // Longer than the host's ranks: the chain ends in a cycle without this rank.
    if (cycle->size() >= local_count_) return false;
    const uint64_t w = ctl(r)->send_wait.load(std::memory_order_seq_cst);
    const int to = static_cast<int>(static_cast<uint32_t>(w)) - 1;
    if (w == 0 || to < 0 || to >= nranks_ || to == r || local_index_[to] < 0) return false;
    cycle->push_back(r);
    words->push_back(w);
    r = to;
  } while (r != rank_);
  for (size_t i = 0; i < cycle->size(); ++i) {
    const int from = (*cycle)[i], to = (*cycle)[(i + 1) % cycle->size()];
    const uint32_t published = head(from, to)->value.load(std::memory_order_seq_cst);
    const uint32_t consumed = tail(to, from)->value.load(std::memory_order_seq_cst);
    if (published - consumed < layout_.slots) return false;  // room left: it may still move
  }
  return true;
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
  err->code = HCCL_E_REMOTE;
  err->peer = r;
  err->what = "rank " + std::to_string(r) + " (pid " + std::to_string(d.pid) +
              ") exited or destroyed its communicator";
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
    err->code = static_cast<HcclResult>(code);
    err->peer = r;
    err->culprit = c->culprit >= 0 && c->culprit < nranks_ ? c->culprit : -1;
    err->what = "rank " + std::to_string(r) + " failed (" + reason + ")";
    err->failed_seq = c->failed_seq;
    return true;
  }
  return probe && !peer_left(r) && peer_dead(r, err);
}

void *Hub::map_peer_memory(int r, const MemDesc &d) {
  if (r < 0 || r >= nranks_ || local_index_[r] < 0 || d.fd < 0 || d.offset > d.file_size ||
      d.bytes > d.file_size - d.offset)
    return nullptr;
  Peer &p = peers_[r];
  std::lock_guard<std::mutex> lock(mem_mu_);
  auto key = std::make_pair(static_cast<int>(d.fd), d.ino);
  auto it = p.mem.find(key);
  if (it != p.mem.end() && it->second.size < d.file_size) {  // the file grew: map it again
    munmap(it->second.base, it->second.size);
    p.mem.erase(it);
    it = p.mem.end();
  }
  if (it == p.mem.end()) {
    // The fd number may name a new file now: drop what it named before.
    for (auto old = p.mem.begin(); old != p.mem.end();) {
      if (old->first.first != d.fd) {
        ++old;
        continue;
      }
      munmap(old->second.base, old->second.size);
      old = p.mem.erase(old);
    }
    if (!p.desc.same_pid_ns) return nullptr;
    std::string path = "/proc/" + std::to_string(p.desc.pid) + "/fd/" + std::to_string(d.fd);
    int f = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (f < 0) return nullptr;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(f, &st) == 0 && static_cast<uint64_t>(st.st_ino) == d.ino)
      m = mmap(nullptr, d.file_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, f, 0);
    close(f);
    if (m == MAP_FAILED) return nullptr;
    it = p.mem.emplace(key, Peer::Mapped{m, d.file_size}).first;
  }
  return static_cast<char *>(it->second.base) + d.offset;
}

}  // namespace shm
}  // namespace hccl
