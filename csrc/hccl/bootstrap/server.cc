// The rendezvous server: one detached thread per root info, one poll() loop
// over the listen socket and every rank's connection (all non-blocking, so a
// slow or hostile peer never stalls the others). It admits ranks that answer
// its challenge with an HMAC keyed by the job secret (wire.h), answers allgather rounds once all have joined, and turns any
// departure or inconsistency into an error sent to every rank still there.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "common/random.h"
#include "hccl/bootstrap/server_impl.h"
#include "hccl/net/addr.h"
#include "runtime/hostrt.h"
#include "common/log.h"
#include "hccl/fail.h"

namespace hccl {
namespace bsnet {
namespace {

// Jobs whose server runs in this process (never destroyed: threads may end after exit starts).
std::mutex *g_running_mu = new std::mutex;
std::condition_variable *g_running_cv = new std::condition_variable;
std::set<std::string> *g_running = new std::set<std::string>;
int g_unflushed = 0;  // servers holding frames not yet sent (under g_running_mu)

std::atomic<pid_t> g_server_pid{0};  // the process whose threads run the servers

// The server is a thread of the root's process: if that process exits between
// answering one rank and the next, the others lose the answer (rank 0 may
// finish its work and exit while the server thread waits for a core). Exit
// waits, briefly, until every queued frame is with the kernel, which still
// delivers it after the process is gone.
void wait_flushed_at_exit() {
  // A fork()ed child has none of its parent's threads (and maybe a copy of
  // the lock taken): nothing to wait for.
  if (getpid() != g_server_pid.load()) return;
  std::unique_lock<std::mutex> lock(*g_running_mu);
  g_running_cv->wait_for(lock, std::chrono::seconds(2), [] { return g_unflushed == 0; });
}

}  // namespace

namespace srv {

void Server::set_unflushed(bool v) {
  if (v == unflushed_) return;
  unflushed_ = v;
  std::lock_guard<std::mutex> lock(*g_running_mu);
  g_unflushed += v ? 1 : -1;
  if (!v) g_running_cv->notify_all();
}

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

std::string format(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

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
    bool pending = false;
    for (Conn &c : conns_) {
      if (c.fd >= 0 && !c.out.empty()) {
        flush(c);
        if (slow_) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      pending = pending || (c.fd >= 0 && !c.out.empty());
    }
    set_unflushed(pending);
    check_deadlines(Clock::now());
    for (auto it = conns_.begin(); it != conns_.end();) it = it->fd < 0 ? conns_.erase(it) : std::next(it);
  }
}

void Server::accept_all() {
  for (;;) {
    net::SockAddr sa;
    sa.len = sizeof(sa.ss);
    int fd = ::accept4(cfg_.listen_fd, sa.sa(), &sa.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors: stop polling the listener briefly instead of spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        accept_pause_until_ = Clock::now() + std::chrono::milliseconds(100);
      return;
    }
    size_t pending = 0;
    Conn *oldest = nullptr;
    for (Conn &c : conns_) {
      if (c.fd < 0 || c.state != Conn::kPending) continue;
      ++pending;
      if (oldest == nullptr || c.deadline < oldest->deadline) oldest = &c;
    }
    if (pending >= kMaxPending && oldest != nullptr) drop(*oldest);
    set_nodelay(fd);
    Conn c;
    c.fd = fd;
    c.peer = sa.str();
    c.deadline = Clock::now() + kHelloDeadline;
    ChallengePayload ch;
    std::memcpy(ch.magic, kHelloMagic, sizeof(ch.magic));
    if (!fill_random(ch.nonce, sizeof(ch.nonce))) {
      PYHCCL_NOTICE(common::kBootstrap, "bootstrap (root %s): getrandom() failed: %s; dropped a connection from %s",
                    cfg_.where.c_str(), errno_text(errno).c_str(), c.peer.c_str());
      close_fd(fd);
      continue;
    }
    std::memcpy(c.challenge, ch.nonce, sizeof(c.challenge));
    conns_.push_back(std::move(c));
    send_to(conns_.back(), make_frame(kChallenge, &ch, sizeof(ch)));
  }
}

void Server::on_readable(Conn &c) {
  bool eof = false;
  int err = 0;
  for (;;) {
    // Before the hello only a hello's worth is read: unauthenticated peers
    // get no buffer space (and only a 40-byte challenge is sent to them).
    constexpr size_t kHelloFrame = kHeaderBytes + sizeof(HelloPayload);
    size_t old = c.in.size();
    if (c.state == Conn::kPending && old >= kHelloFrame) break;
    size_t want = c.state == Conn::kPending ? kHelloFrame - old : 65536;
    c.in.resize(old + want);
    ssize_t n = ::recv(c.fd, c.in.data() + old, want, MSG_DONTWAIT);
    c.in.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n > 0) {
      if (c.state == Conn::kClosing || c.state == Conn::kBye) c.in.clear();  // nothing more is expected
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
    if (c.state == Conn::kJoined &&
        (!tag_ok || (type != kContrib && type != kBye && type != kFail) ||
         (type == kContrib && len > kMaxContribution) ||
         (type == kFail && (len < 4 || len > kMaxErrorText + 4)))) {
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
  if (type == kContrib) {
    on_contrib(c, p, len);
  } else if (type == kFail) {
    // A rank failed a step every rank must pass (e.g. its data connections):
    // everyone gets its message instead of waiting for it.
    uint32_t code_be;
    std::memcpy(&code_be, p, 4);
    uint32_t code = ntohl(code_be);
    fail(code == 0 ? HCCL_E_INTERNAL : static_cast<HcclResult>(code),
         std::string(reinterpret_cast<const char *>(p) + 4, len - 4));
  } else {
    on_bye(c);
  }
  return c.fd >= 0 && c.state == Conn::kJoined;
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
    PYHCCL_NOTICE(common::kBootstrap, "bootstrap (root %s): refused a connection from %s: %s%s", cfg_.where.c_str(),
                 c.peer.c_str(), why, ++refusals_logged_ == kMaxLoggedRefusals ? " (further refusals not logged)" : "");
  }
  if (tell_peer)
    start_closing(c, make_error(HCCL_E_TCP_CONNECT, format("the root at %s refused this rank: %s", cfg_.where.c_str(), why)));
  else
    drop(c);
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

}  // namespace srv

using srv::Server;

void wait_server(const std::string &job, std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(*g_running_mu);
  g_running_cv->wait_for(lock, limit, [&] { return g_running->count(job) == 0; });
}

HcclResult start_server(const ServerConfig &cfg) {
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(wait_flushed_at_exit); });
  g_server_pid.store(getpid());
  Server *server = nullptr;
  try {
    server = new Server(cfg);  // owns the listen socket from here on
    {
      std::lock_guard<std::mutex> lock(*g_running_mu);
      g_running->insert(cfg.job);
    }
    std::thread([server, job = cfg.job]() {
      std::unique_ptr<Server> s(server);
      try {
        s->run();
      } catch (const std::exception &e) {
        PYHCCL_NOTICE(common::kBootstrap, "bootstrap (root %s): server stopped: %s", s->where().c_str(), e.what());
      }
      s.reset();
      std::lock_guard<std::mutex> lock(*g_running_mu);
      g_running->erase(job);
      g_running_cv->notify_all();
    }).detach();
    return HCCL_SUCCESS;
  } catch (const std::exception &e) {
    {
      std::lock_guard<std::mutex> lock(*g_running_mu);
      g_running->erase(cfg.job);
    }
    if (server != nullptr)
      delete server;
    else
      close_fd(cfg.listen_fd);
    return HCCL_FAIL(HCCL_E_INTERNAL, "HcclGetRootInfo: cannot start the bootstrap server thread: %s", e.what());
  }
}

}  // namespace bsnet
}  // namespace hccl
