// The rendezvous server: one detached thread per root info, one poll() loop
// over the listen socket and every rank's connection (all non-blocking, so a
// slow or hostile peer never stalls the others). It admits ranks that present
// the job secret, answers allgather rounds once all have joined, and turns any
// departure or inconsistency into an error sent to every rank still there.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <thread>
#include <vector>

#include "hccl/bootstrap/server.h"
#include "hccl/bootstrap/wire.h"
#include "runtime/hostrt.h"

namespace hccl {
namespace bsnet {
namespace {

using Buffer = std::shared_ptr<const std::vector<uint8_t>>;
constexpr auto kLinger = std::chrono::seconds(2);  // to flush errors before closing
constexpr int kMaxLoggedRefusals = 8;
constexpr size_t kMaxPending = 1024;  // connections that have not said hello yet

struct Conn {
  enum State { kPending, kJoined, kBye, kClosing };
  int fd = -1;
  State state = kPending;
  uint32_t rank = 0;
  std::string peer;
  std::vector<uint8_t> in;  // bytes received, not parsed yet
  std::deque<Buffer> out;   // frames to send, shared between connections
  size_t out_off = 0;       // bytes of out.front() already sent
  bool wr_shut = false;
  Clock::time_point deadline;  // hello due (kPending) / give up flushing (kClosing)
};

Buffer make_frame(uint32_t type, const void *payload, size_t len) {
  auto b = std::make_shared<std::vector<uint8_t>>(kHeaderBytes + len);
  encode_header(b->data(), type, len);
  if (len > 0) std::memcpy(b->data() + kHeaderBytes, payload, len);
  return b;
}

Buffer make_error(HcclResult code, const std::string &msg) {
  std::vector<uint8_t> p(4 + std::min<size_t>(msg.size(), kMaxErrorText));
  uint32_t code_be = htonl(static_cast<uint32_t>(code));
  std::memcpy(p.data(), &code_be, 4);
  std::memcpy(p.data() + 4, msg.data(), p.size() - 4);
  return make_frame(kError, p.data(), p.size());
}

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

class Server {
 public:
  explicit Server(const ServerConfig &cfg) : cfg_(cfg) {}
  ~Server() {
    for (Conn &c : conns_) close_fd(c.fd);
    close_fd(cfg_.listen_fd);
  }
  void run();
  const std::string &where() const { return cfg_.where; }

 private:
  void accept_all();
  void on_readable(Conn &c);
  bool on_frame(Conn &c, uint32_t type, const uint8_t *p, uint64_t len);
  void on_hello(Conn &c, const HelloPayload &h);
  void on_contrib(Conn &c, const uint8_t *p, uint64_t len);
  void on_bye(Conn &c);
  void on_lost(Conn &c, const std::string &why);
  void flush(Conn &c);
  void refuse(Conn &c, const char *why, bool tell_peer);
  void fail(HcclResult code, const std::string &msg, Conn *extra = nullptr);
  void send_to(Conn &c, const Buffer &b) { c.out.push_back(b); }
  void start_closing(Conn &c, const Buffer &last);
  void drop(Conn &c);
  void check_deadlines(Clock::time_point now);
  Clock::time_point next_deadline() const;

  ServerConfig cfg_;
  std::list<Conn> conns_;  // stable addresses: by_rank_ points into it
  std::vector<Conn *> by_rank_;
  uint32_t nranks_ = 0;      // 0 until the first rank joined
  uint32_t first_rank_ = 0;  // who set nranks_, for the mismatch message
  uint32_t joined_ = 0, byes_ = 0;
  bool running_ = false;  // all ranks joined
  bool done_ = false;
  Clock::time_point idle_deadline_, join_deadline_, accept_pause_until_;
  // Allgather round in progress.
  std::vector<std::vector<uint8_t>> round_data_;
  std::vector<bool> have_;
  uint32_t round_count_ = 0, round_first_ = 0;
  uint64_t round_bytes_ = 0;
  // After a failure: who arrives until latecomer_until_ gets the error too.
  bool failed_ = false;
  Buffer fail_frame_;
  Clock::time_point latecomer_until_, hard_deadline_;
  int refusals_logged_ = 0;
};

void Server::run() {
  idle_deadline_ = Clock::now() + std::chrono::seconds(cfg_.idle_timeout_s);
  std::vector<pollfd> pfds;
  std::vector<Conn *> who;
  while (!done_) {
    pfds.clear();
    who.clear();
    Clock::time_point now = Clock::now();
    if (now >= accept_pause_until_) {
      pfds.push_back({cfg_.listen_fd, POLLIN, 0});
      who.push_back(nullptr);
    }
    for (Conn &c : conns_) {
      if (c.fd < 0) continue;
      pfds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
      who.push_back(&c);
    }
    Clock::time_point wake = std::min(next_deadline(), accept_pause_until_ > now ? accept_pause_until_
                                                                                  : Clock::time_point::max());
    int n = ::poll(pfds.data(), pfds.size(), poll_ms(wake));
    if (n < 0 && errno != EINTR) {
      fail(HCCL_E_INTERNAL, format("bootstrap server poll() failed: %s", errno_text(errno).c_str()));
      break;
    }
    for (size_t i = 0; n > 0 && i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      if (who[i] == nullptr) {
        accept_all();
        continue;
      }
      Conn &c = *who[i];
      if (c.fd >= 0 && (pfds[i].revents & POLLOUT)) flush(c);
      if (c.fd >= 0 && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) on_readable(c);
    }
    // Frames queued by this round of events go out now rather than a poll later.
    for (Conn &c : conns_)
      if (c.fd >= 0 && !c.out.empty()) flush(c);
    check_deadlines(Clock::now());
    for (auto it = conns_.begin(); it != conns_.end();) it = it->fd < 0 ? conns_.erase(it) : std::next(it);
  }
}

void Server::accept_all() {
  for (;;) {
    sockaddr_in sa{};
    socklen_t len = sizeof(sa);
    int fd = ::accept4(cfg_.listen_fd, reinterpret_cast<sockaddr *>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors: stop polling the listener briefly instead of spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        accept_pause_until_ = Clock::now() + std::chrono::milliseconds(100);
      return;
    }
    size_t pending = 0;
    for (const Conn &c : conns_) pending += (c.fd >= 0 && c.state == Conn::kPending);
    if (pending >= kMaxPending) {
      close_fd(fd);
      continue;
    }
    set_nodelay(fd);
    Conn c;
    c.fd = fd;
    char ip[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    c.peer = std::string(ip) + ":" + std::to_string(ntohs(sa.sin_port));
    c.deadline = Clock::now() + std::chrono::seconds(cfg_.join_timeout_s);
    conns_.push_back(std::move(c));
  }
}

void Server::on_readable(Conn &c) {
  bool eof = false;
  int err = 0;
  for (;;) {
    size_t old = c.in.size();
    c.in.resize(old + 65536);
    ssize_t n = ::recv(c.fd, c.in.data() + old, 65536, MSG_DONTWAIT);
    c.in.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n > 0) {
      if (c.state == Conn::kClosing || c.state == Conn::kBye) c.in.clear();  // nothing more is expected
      // Before the hello only a hello's worth is read: unauthenticated peers
      // get no buffer space.
      if (c.state == Conn::kPending && c.in.size() >= kHeaderBytes + sizeof(HelloPayload)) break;
      continue;
    }
    if (n == 0) {
      eof = true;
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      eof = true;
      err = errno;
    }
    break;
  }
  size_t off = 0;
  while (c.fd >= 0 && c.in.size() - off >= kHeaderBytes) {
    uint32_t type;
    uint64_t len;
    bool tag_ok = decode_header(c.in.data() + off, &type, &len);
    if (c.state == Conn::kPending && (!tag_ok || type != kHello || len != sizeof(HelloPayload))) {
      refuse(c, "not a pyhccl bootstrap peer (bad magic)", false);
      break;
    }
    if (c.state == Conn::kJoined && (!tag_ok || (type != kContrib && type != kBye) ||
                                     (type == kContrib && len > kMaxContribution))) {
      on_lost(c, "it sent a malformed bootstrap message");
      break;
    }
    if (c.in.size() - off - kHeaderBytes < len) break;
    if (!on_frame(c, type, c.in.data() + off + kHeaderBytes, len)) break;
    off += kHeaderBytes + len;
  }
  if (c.fd >= 0) c.in.erase(c.in.begin(), c.in.begin() + std::min(off, c.in.size()));
  if (c.fd < 0 || !eof) return;
  if (c.state == Conn::kJoined)
    on_lost(c, err ? errno_text(err) : "connection closed");
  else
    drop(c);
}

// Returns false when the connection stopped being read (refused, closed).
bool Server::on_frame(Conn &c, uint32_t type, const uint8_t *p, uint64_t len) {
  if (c.state == Conn::kPending) {
    HelloPayload h;
    std::memcpy(&h, p, sizeof(h));
    on_hello(c, h);
    return c.fd >= 0 && c.state == Conn::kJoined;
  }
  if (c.state != Conn::kJoined) return false;
  if (type == kContrib)
    on_contrib(c, p, len);
  else
    on_bye(c);
  return c.fd >= 0 && c.state == Conn::kJoined;
}

void Server::on_hello(Conn &c, const HelloPayload &h) {
  if (std::memcmp(h.magic, kHelloMagic, sizeof(kHelloMagic)) != 0) {
    refuse(c, "not a pyhccl bootstrap peer (bad magic)", false);
    return;
  }
  uint8_t diff = 0;  // constant-time compare: do not leak how much matched
  for (size_t i = 0; i < sizeof(h.secret); ++i) diff |= h.secret[i] ^ cfg_.secret[i];
  if (diff != 0) {
    refuse(c, "peer presented a wrong job secret (refused)", true);
    return;
  }
  uint32_t nranks = ntohl(h.nranks), rank = ntohl(h.rank);
  c.rank = rank;
  if (failed_) {
    start_closing(c, fail_frame_);
    return;
  }
  if (running_) {
    // The job is complete: tell the latecomer, leave the running ranks alone.
    std::string msg = rank < nranks_ && nranks == nranks_
                          ? format("rank %u joined twice (all %u ranks had already joined; a root info is single use)",
                                   rank, nranks_)
                          : format("rank %u of %u arrived after the job of %u ranks was complete", rank, nranks,
                                   nranks_);
    start_closing(c, make_error(HCCL_E_PARA, msg));
    return;
  }
  if (nranks == 0 || nranks > kMaxRanks) {
    fail(HCCL_E_PARA, format("rank %u says nRanks is %u (must be 1 to %u)", rank, nranks, kMaxRanks), &c);
    return;
  }
  if (nranks_ == 0) {
    nranks_ = nranks;
    first_rank_ = rank;
    by_rank_.assign(nranks, nullptr);
    join_deadline_ = Clock::now() + std::chrono::seconds(cfg_.join_timeout_s);
  }
  if (nranks != nranks_) {
    fail(HCCL_E_PARA, format("nRanks mismatch: rank %u says %u, rank %u says %u", rank, nranks, first_rank_, nranks_),
         &c);
  } else if (rank >= nranks) {
    fail(HCCL_E_PARA, format("rank %u is out of range for nRanks %u", rank, nranks), &c);
  } else if (by_rank_[rank] != nullptr) {
    fail(HCCL_E_PARA, format("rank %u joined twice", rank), &c);
  } else {
    c.state = Conn::kJoined;
    by_rank_[rank] = &c;
    if (++joined_ == nranks_) {
      running_ = true;
      round_data_.assign(nranks_, {});
      have_.assign(nranks_, false);
      uint32_t n_be = htonl(nranks_);
      Buffer ready = make_frame(kReady, &n_be, sizeof(n_be));
      for (Conn *r : by_rank_) send_to(*r, ready);  // all present: joined_ == nranks_
    }
  }
}

void Server::on_contrib(Conn &c, const uint8_t *p, uint64_t len) {
  if (!running_) {
    on_lost(c, "it sent allgather data before all ranks had joined");
    return;
  }
  if (byes_ > 0) {
    uint32_t gone = 0;
    while (gone < nranks_ && (by_rank_[gone] != nullptr && by_rank_[gone]->state != Conn::kBye)) ++gone;
    fail(HCCL_E_REMOTE, format("rank %u entered a bootstrap allgather after rank %u had closed", c.rank, gone));
    return;
  }
  if (have_[c.rank]) {
    on_lost(c, "it sent two contributions to one allgather round");
    return;
  }
  if (round_count_ > 0 && len != round_bytes_) {
    fail(HCCL_E_PARA, format("bootstrap allgather size mismatch: rank %u sent %llu bytes, rank %u sent %llu", c.rank,
                             static_cast<unsigned long long>(len), round_first_,
                             static_cast<unsigned long long>(round_bytes_)));
    return;
  }
  if (len * nranks_ > kMaxRoundBytes) {
    fail(HCCL_E_PARA, format("bootstrap allgather of %llu bytes per rank exceeds the %llu-byte round limit",
                             static_cast<unsigned long long>(len), static_cast<unsigned long long>(kMaxRoundBytes)));
    return;
  }
  if (round_count_ == 0) {
    round_bytes_ = len;
    round_first_ = c.rank;
  }
  round_data_[c.rank].assign(p, p + len);
  have_[c.rank] = true;
  if (++round_count_ < nranks_) return;
  auto b = std::make_shared<std::vector<uint8_t>>(kHeaderBytes + len * nranks_);
  encode_header(b->data(), kResult, len * nranks_);
  for (uint32_t r = 0; r < nranks_; ++r) {
    if (len > 0) std::memcpy(b->data() + kHeaderBytes + r * len, round_data_[r].data(), len);
    std::vector<uint8_t>().swap(round_data_[r]);
    have_[r] = false;
  }
  round_count_ = 0;
  for (Conn *r : by_rank_)
    if (r != nullptr) send_to(*r, b);
}

void Server::on_bye(Conn &c) {
  if (!running_) {
    on_lost(c, "it closed before all ranks had joined");
    return;
  }
  c.state = Conn::kBye;
  c.in.clear();
  if (round_count_ > 0) {
    fail(HCCL_E_REMOTE, format("rank %u closed the bootstrap while %u rank(s) waited in an allgather", c.rank,
                               round_count_));
    return;
  }
  if (++byes_ == nranks_) done_ = true;
}

void Server::on_lost(Conn &c, const std::string &why) {
  if (c.state != Conn::kJoined || failed_) {
    drop(c);
    return;
  }
  uint32_t rank = c.rank;
  drop(c);
  fail(HCCL_E_REMOTE, running_ ? format("rank %u left the job before closing its communicator (%s)", rank, why.c_str())
                               : format("rank %u left before all ranks had joined (%s)", rank, why.c_str()));
}

void Server::flush(Conn &c) {
  while (!c.out.empty()) {
    const std::vector<uint8_t> &f = *c.out.front();
    ssize_t n = ::send(c.fd, f.data() + c.out_off, f.size() - c.out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      on_lost(c, errno_text(errno));
      return;
    }
    c.out_off += static_cast<size_t>(n);
    if (c.out_off == f.size()) {
      c.out.pop_front();
      c.out_off = 0;
    }
  }
  // A closing connection half-closes once its last frame is out, then waits for
  // the peer's EOF, so the peer reads everything before the socket goes away.
  if (c.state == Conn::kClosing && !c.wr_shut) {
    ::shutdown(c.fd, SHUT_WR);
    c.wr_shut = true;
  }
}

void Server::refuse(Conn &c, const char *why, bool tell_peer) {
  if (refusals_logged_ < kMaxLoggedRefusals) {
    std::fprintf(stderr, "pyhccl bootstrap (root %s): refused a connection from %s: %s%s\n", cfg_.where.c_str(),
                 c.peer.c_str(), why, ++refusals_logged_ == kMaxLoggedRefusals ? " (further refusals not logged)" : "");
  }
  if (tell_peer)
    start_closing(c, make_error(HCCL_E_TCP_CONNECT, format("the root at %s refused this rank: %s", cfg_.where.c_str(), why)));
  else
    drop(c);
}

void Server::fail(HcclResult code, const std::string &msg, Conn *extra) {
  if (failed_) return;
  failed_ = true;
  fail_frame_ = make_error(code, msg);
  Clock::time_point now = Clock::now();
  latecomer_until_ = running_ ? now : std::max(now, join_deadline_);
  hard_deadline_ = latecomer_until_ + kLinger;
  for (Conn &c : conns_) {
    if (c.fd < 0) continue;
    if (c.state == Conn::kJoined || &c == extra)
      start_closing(c, fail_frame_);
    else if (c.state == Conn::kBye)
      drop(c);
  }
}

void Server::start_closing(Conn &c, const Buffer &last) {
  if (c.state == Conn::kJoined) by_rank_[c.rank] = nullptr;
  send_to(c, last);
  c.state = Conn::kClosing;
  c.in.clear();
  c.deadline = Clock::now() + kLinger;
}

void Server::drop(Conn &c) {
  if ((c.state == Conn::kJoined || c.state == Conn::kBye) && c.rank < by_rank_.size() && by_rank_[c.rank] == &c)
    by_rank_[c.rank] = nullptr;
  close_fd(c.fd);
  c.fd = -1;
  c.out.clear();
}

void Server::check_deadlines(Clock::time_point now) {
  for (Conn &c : conns_)
    if (c.fd >= 0 && (c.state == Conn::kPending || c.state == Conn::kClosing) && now >= c.deadline) drop(c);
  if (failed_) {
    bool open = false;
    for (const Conn &c : conns_) open |= c.fd >= 0;
    if (now >= hard_deadline_ || (!open && now >= latecomer_until_)) done_ = true;
    return;
  }
  if (!running_ && nranks_ > 0 && now >= join_deadline_) {
    std::string missing;
    int listed = 0;
    for (uint32_t r = 0; r < nranks_; ++r) {
      if (by_rank_[r] != nullptr) continue;
      if (listed++ < 8)
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      else if (listed == 9)
        missing += ", ...";
    }
    fail(HCCL_E_TIMEOUT, format("timed out after %d s waiting for %u of %u ranks to join (missing: rank %s)",
                                cfg_.join_timeout_s, nranks_ - joined_, nranks_, missing.c_str()));
  } else if (nranks_ == 0 && now >= idle_deadline_) {
    done_ = true;  // nobody ever used this root info
  }
}

Clock::time_point Server::next_deadline() const {
  Clock::time_point t = Clock::time_point::max();
  for (const Conn &c : conns_)
    if (c.fd >= 0 && (c.state == Conn::kPending || c.state == Conn::kClosing)) t = std::min(t, c.deadline);
  if (failed_) return std::min({t, hard_deadline_, latecomer_until_ > Clock::now() ? latecomer_until_ : t});
  if (!running_) t = std::min(t, nranks_ > 0 ? join_deadline_ : idle_deadline_);
  return t;
}

}  // namespace

HcclResult start_server(const ServerConfig &cfg) {
  Server *server = nullptr;
  try {
    server = new Server(cfg);  // owns the listen socket from here on
    std::thread([server]() {
      std::unique_ptr<Server> s(server);
      try {
        s->run();
      } catch (const std::exception &e) {
        std::fprintf(stderr, "pyhccl bootstrap (root %s): server stopped: %s\n", s->where().c_str(), e.what());
      }
    }).detach();
    return HCCL_SUCCESS;
  } catch (const std::exception &e) {
    if (server != nullptr)
      delete server;
    else
      close_fd(cfg.listen_fd);
    hostrt::set_error("HcclGetRootInfo: cannot start the bootstrap server thread: %s", e.what());
    return HCCL_E_INTERNAL;
  }
}

}  // namespace bsnet
}  // namespace hccl
