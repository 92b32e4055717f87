// Bringing up a communicator's TCP connections (setup.h): dialing, the
// authenticated hello, accepting and refusing, until every peer is connected.
#include "hccl/transport/tcp/setup.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <list>

#include "common/cancel.h"
#include "common/env.h"
#include "common/hmac.h"
#include "common/random.h"
#include "hccl/transport/tcp/conn.h"
#include "hccl/transport/tcp/wire.h"
#include "common/log.h"

namespace hccl {
namespace tcp {
namespace {

using net::Clock;
constexpr auto kHelloDeadline = std::chrono::seconds(1);  // for an accepted socket to say hello
constexpr size_t kMaxPending = 64;                       // accepted, hello not read yet

// The Hello's mac (wire.h): first = challenge, second = the dialer's nonce;
// the Ack's swaps them and has its own label, so neither stands in for the other.
void pair_mac(const uint8_t key[32], const char *label, const uint8_t *first, const uint8_t *second,
              const Hello &h, uint8_t mac[32]) {
  HmacSha256 m(key, 32);
  m.update(label, std::strlen(label) + 1).update(first, kNonceBytes).update(second, kNonceBytes);
  m.update(h.comm, sizeof(h.comm)).u32(h.from).u32(h.to).u32(h.index).u32(h.nsock).finish(mac);
}
constexpr char kHelloLabel[] = "pyhccl tcp hello";
constexpr char kAckLabel[] = "pyhccl tcp ack";

// A socket this rank dials: lower rank -> higher rank, one per (peer, index).
struct Dial {
  int peer = 0;
  uint32_t index = 0;
  int fd = -1;
  enum State { kIdle, kConnecting, kAwaitChallenge, kAwaitAck, kDone } state = kIdle;
  Clock::time_point retry_at;
  std::chrono::milliseconds backoff{10};
  Challenge challenge{};
  size_t challenge_got = 0;
  Hello hello{};  // as sent, to check the Ack's mac
  Ack ack{};
  size_t ack_got = 0;
  int last_err = 0;
};

// An accepted socket that has not said an authentic hello yet.
struct Pending {
  int fd;
  std::string from;  // address, for log lines
  uint8_t challenge[kNonceBytes];
  Hello hello{};
  size_t got = 0;
  Clock::time_point deadline;
};

class Connector {
 public:
  Connector(const Setup &s, int listen_fd) : s_(s), listen_fd_(listen_fd) {
    std::memcpy(key_, s.secret, sizeof(key_));
    // PYHCCL_FAULT=bad_data_secret: this rank proves (and expects) a wrong secret.
    if (std::strcmp(common::env_str("PYHCCL_FAULT", ""), "bad_data_secret") == 0) key_[0] ^= 0x5a;
    in_.assign(static_cast<size_t>(s.nranks) * (s.nsock + 1), -1);
    for (int p = s.rank + 1; p < s.nranks; ++p)
      if (s.remote[p])
        for (int i = 0; i <= s.nsock; ++i) {
          dials_.emplace_back();
          dials_.back().peer = p;
          dials_.back().index = static_cast<uint32_t>(i);
        }
    for (int p = 0; p < s.rank; ++p)
      if (s.remote[p]) expected_in_ += s.nsock + 1;
  }
  ~Connector() {
    for (Dial &d : dials_) net::close_fd(d.fd);
    for (Pending &p : pending_) net::close_fd(p.fd);
    for (int fd : in_) net::close_fd(fd);
  }

  HcclResult run(std::vector<std::unique_ptr<Connection>> *conns, std::string *why);

 private:
  std::string where(int peer) const {
    std::string w = "rank " + std::to_string(peer) + " at " + s_.addrs[peer].str();
    if (static_cast<size_t>(peer) < s_.hosts.size()) w += " (host " + s_.hosts[peer] + ")";
    return w;
  }
  void start(Dial &d);
  HcclResult on_dial_event(Dial &d, short revents, std::string *why);
  HcclResult send_hello(Dial &d, std::string *why);
  void retry_later(Dial &d, int err);
  void accept_all();
  void on_pending(Pending &p);
  void refuse(Pending &p, AckStatus status, const char *reason);
  bool done() const {
    for (const Dial &d : dials_)
      if (d.state != Dial::kDone) return false;
    return accepted_ == expected_in_;
  }
  std::string missing() const;

  const Setup &s_;
  uint8_t key_[32];  // the job secret, the HMAC key
  int listen_fd_;
  std::vector<Dial> dials_;
  std::list<Pending> pending_;
  std::vector<int> in_;  // accepted sockets by peer * (nsock + 1) + index
  int expected_in_ = 0, accepted_ = 0;
  int refusals_logged_ = 0;
};

void Connector::start(Dial &d) {
  d.fd = net::connect_start(s_.addrs[d.peer], &d.last_err);
  if (d.fd < 0) {
    d.state = Dial::kIdle;
    d.retry_at = Clock::now() + d.backoff;
    d.backoff = std::min(d.backoff * 2, std::chrono::milliseconds(500));
    return;
  }
  d.state = Dial::kConnecting;
  d.challenge_got = 0;
  d.ack_got = 0;
}

// The socket closed or failed before the handshake ended (e.g. too many
// pending connections there): dial again after a backoff.
void Connector::retry_later(Dial &d, int err) {
  d.last_err = err;
  net::close_fd(d.fd);
  d.fd = -1;
  d.state = Dial::kIdle;
  d.retry_at = Clock::now() + d.backoff;
  d.backoff = std::min(d.backoff * 2, std::chrono::milliseconds(500));
}

// Answers the acceptor's challenge (d.challenge) with this rank's Hello.
HcclResult Connector::send_hello(Dial &d, std::string *why) {
  if (std::memcmp(d.challenge.magic, kHelloMagic, sizeof(d.challenge.magic)) != 0) {
    *why = where(d.peer) + " is not a pyhccl TCP listener of this version (wrong challenge)";
    return HCCL_E_TCP_CONNECT;
  }
  Hello &h = d.hello;
  h = Hello{};
  std::memcpy(h.magic, kHelloMagic, sizeof(h.magic));
  if (!fill_random(h.nonce, sizeof(h.nonce))) {
    *why = "getrandom() failed: " + net::errno_text(errno);
    return HCCL_E_TCP_CONNECT;
  }
  std::memcpy(h.comm, s_.nonce, sizeof(h.comm));
  h.from = static_cast<uint32_t>(s_.rank);
  h.to = static_cast<uint32_t>(d.peer);
  h.index = d.index;
  h.nsock = static_cast<uint32_t>(s_.nsock);
  pair_mac(key_, kHelloLabel, d.challenge.nonce, h.nonce, h, h.mac);
  // 88 bytes on a fresh socket: the send buffer takes them whole.
  if (send(d.fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(h))) {
    retry_later(d, errno);
    return HCCL_SUCCESS;
  }
  d.state = Dial::kAwaitAck;
  return HCCL_SUCCESS;
}

HcclResult Connector::on_dial_event(Dial &d, short revents, std::string *why) {
  (void)revents;
  if (d.state == Dial::kConnecting) {
    int e = net::connect_result(d.fd);
    if (e != 0) {
      retry_later(d, e);
      return HCCL_SUCCESS;
    }
    net::set_nodelay(d.fd);
    net::set_buffers(d.fd, s_.buffer_bytes);
    d.state = Dial::kAwaitChallenge;
    return HCCL_SUCCESS;
  }
  const bool challenge = d.state == Dial::kAwaitChallenge;
  char *buf = challenge ? reinterpret_cast<char *>(&d.challenge) + d.challenge_got
                        : reinterpret_cast<char *>(&d.ack) + d.ack_got;
  size_t want = challenge ? sizeof(d.challenge) - d.challenge_got : sizeof(d.ack) - d.ack_got;
  ssize_t r = recv(d.fd, buf, want, MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return HCCL_SUCCESS;
  if (r <= 0) {
    retry_later(d, r == 0 ? ECONNRESET : errno);
    return HCCL_SUCCESS;
  }
  if (challenge) {
    d.challenge_got += static_cast<size_t>(r);
    return d.challenge_got < sizeof(d.challenge) ? HCCL_SUCCESS : send_hello(d, why);
  }
  d.ack_got += static_cast<size_t>(r);
  if (d.ack_got < sizeof(d.ack)) return HCCL_SUCCESS;
  if (std::memcmp(d.ack.magic, kHelloMagic, sizeof(d.ack.magic)) != 0 || d.ack.status != kAckOk) {
    *why = where(d.peer) + " refused this rank's data connection: " +
           (d.ack.status == kAckBadSecret ? "the job secret did not match"
                                          : "it was not expected there (another communicator?)");
    return HCCL_E_TCP_CONNECT;
  }
  uint8_t mac[32];
  pair_mac(key_, kAckLabel, d.hello.nonce, d.challenge.nonce, d.hello, mac);
  if (!equal_ct(mac, d.ack.mac, sizeof(mac))) {
    *why = where(d.peer) + " could not prove it holds the job secret (another process listening at its address?)";
    return HCCL_E_TCP_CONNECT;
  }
  d.state = Dial::kDone;
  return HCCL_SUCCESS;
}

void Connector::accept_all() {
  for (;;) {
    net::SockAddr from;
    from.len = sizeof(from.ss);
    int fd = accept4(listen_fd_, from.sa(), &from.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN, or out of descriptors: dialers retry
    }
    if (pending_.size() >= kMaxPending) {
      net::close_fd(fd);
      continue;
    }
    Challenge c{};
    std::memcpy(c.magic, kHelloMagic, sizeof(c.magic));
    // 24 bytes on a fresh socket: the send buffer takes them whole.
    if (!fill_random(c.nonce, sizeof(c.nonce)) ||
        send(fd, &c, sizeof(c), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(c))) {
      net::close_fd(fd);  // the dialer retries
      continue;
    }
    pending_.push_back(Pending{fd, from.str(), {}, Hello{}, 0, Clock::now() + kHelloDeadline});
    std::memcpy(pending_.back().challenge, c.nonce, sizeof(c.nonce));
  }
}

void Connector::refuse(Pending &p, AckStatus status, const char *reason) {
  Ack a{};
  std::memcpy(a.magic, kHelloMagic, sizeof(a.magic));
  a.status = status;
  a.rank = static_cast<uint32_t>(s_.rank);
  send(p.fd, &a, sizeof(a), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (refusals_logged_++ < 8)
    PYHCCL_NOTICE(common::kNet, "rank %d refused a data connection from %s: %s", s_.rank,
                 p.from.c_str(), reason);
  net::close_fd(p.fd);
  p.fd = -1;
}

void Connector::on_pending(Pending &p) {
  ssize_t r = recv(p.fd, reinterpret_cast<char *>(&p.hello) + p.got, sizeof(p.hello) - p.got,
                   MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (r <= 0) {
    net::close_fd(p.fd);
    p.fd = -1;
    return;
  }
  p.got += static_cast<size_t>(r);
  if (p.got < sizeof(p.hello)) return;
  const Hello &h = p.hello;
  uint8_t mac[32];
  pair_mac(key_, kHelloLabel, p.challenge, h.nonce, h, mac);
  if (std::memcmp(h.magic, kHelloMagic, sizeof(h.magic)) != 0 || !equal_ct(mac, h.mac, sizeof(mac)))
    return refuse(p, kAckBadSecret, "wrong job secret (or a hello replayed from another connection)");
  const bool ok = std::memcmp(h.comm, s_.nonce, sizeof(h.comm)) == 0 &&
                  h.to == static_cast<uint32_t>(s_.rank) && h.from < static_cast<uint32_t>(s_.rank) &&
                  s_.remote[h.from] && h.nsock == static_cast<uint32_t>(s_.nsock) &&
                  h.index <= static_cast<uint32_t>(s_.nsock) &&
                  in_[h.from * (s_.nsock + 1) + h.index] < 0;
  if (!ok) return refuse(p, kAckBadPeer, "not a connection of this communicator");
  Ack a{};
  std::memcpy(a.magic, kHelloMagic, sizeof(a.magic));
  a.status = kAckOk;
  a.rank = static_cast<uint32_t>(s_.rank);
  pair_mac(key_, kAckLabel, h.nonce, p.challenge, h, a.mac);
  if (send(p.fd, &a, sizeof(a), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(a))) {
    net::close_fd(p.fd);
    p.fd = -1;
    return;
  }
  net::set_nodelay(p.fd);
  net::set_buffers(p.fd, s_.buffer_bytes);
  in_[h.from * (s_.nsock + 1) + h.index] = p.fd;
  ++accepted_;
  p.fd = -1;
}

std::string Connector::missing() const {
  for (const Dial &d : dials_)
    if (d.state != Dial::kDone)
      return "this rank could not connect to " + where(d.peer) +
             (d.last_err ? ": " + net::errno_text(d.last_err) : std::string(": no answer"));
  for (int p = 0; p < s_.rank; ++p)
    if (s_.remote[p])
      for (int i = 0; i <= s_.nsock; ++i)
        if (in_[p * (s_.nsock + 1) + i] < 0)
          return where(p) + " never connected to this rank";
  return "";
}

HcclResult Connector::run(std::vector<std::unique_ptr<Connection>> *conns, std::string *why) {
  for (Dial &d : dials_) start(d);
  std::vector<pollfd> fds;
  std::vector<Dial *> dial_of;
  std::vector<Pending *> pend_of;
  while (!done()) {
    if (common::setup_cancelled()) {
      *why = "set-up was interrupted on this rank";
      return HCCL_E_UNAVAIL;
    }
    Clock::time_point now = Clock::now();
    if (now >= s_.deadline) {
      *why = missing() + " within the set-up timeout (HCCL_CONNECT_TIMEOUT)";
      return HCCL_E_TIMEOUT;
    }
    fds.clear();
    dial_of.clear();
    pend_of.clear();
    Clock::time_point wake = s_.deadline;
    fds.push_back({listen_fd_, POLLIN, 0});
    dial_of.push_back(nullptr);
    pend_of.push_back(nullptr);
    fds.push_back({s_.watch_fd, POLLIN, 0});
    dial_of.push_back(nullptr);
    pend_of.push_back(nullptr);
    for (Dial &d : dials_) {
      if (d.state == Dial::kIdle) {
        if (now >= d.retry_at) start(d);
        else wake = std::min(wake, d.retry_at);
      }
      if (d.state == Dial::kConnecting || d.state == Dial::kAwaitChallenge || d.state == Dial::kAwaitAck) {
        fds.push_back({d.fd, static_cast<short>(d.state == Dial::kConnecting ? POLLOUT : POLLIN), 0});
        dial_of.push_back(&d);
        pend_of.push_back(nullptr);
      }
    }
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->fd < 0 || now >= it->deadline) {  // silent too long: drop it
        net::close_fd(it->fd);
        it = pending_.erase(it);
        continue;
      }
      wake = std::min(wake, it->deadline);
      fds.push_back({it->fd, POLLIN, 0});
      dial_of.push_back(nullptr);
      pend_of.push_back(&*it);
      ++it;
    }
    int n = poll(fds.data(), fds.size(), net::poll_ms(wake, 100));  // slices: notice cancels
    if (n < 0 && errno != EINTR) {
      *why = "poll() failed during set-up: " + net::errno_text(errno);
      return HCCL_E_TCP_CONNECT;
    }
    for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (i == 0) {
        accept_all();
      } else if (i == 1) {
        *why = "another rank failed during set-up";
        return HCCL_E_REMOTE;
      } else if (dial_of[i] != nullptr) {
        HcclResult r = on_dial_event(*dial_of[i], fds[i].revents, why);
        if (r != HCCL_SUCCESS) return r;
      } else {
        on_pending(*pend_of[i]);
      }
    }
  }
  // Every socket is up: hand them to the connections.
  const int per = s_.nsock + 1;
  std::vector<std::vector<int>> socks(s_.nranks, std::vector<int>(per, -1));
  for (Dial &d : dials_) {
    socks[d.peer][d.index] = d.fd;
    d.fd = -1;
  }
  for (int p = 0; p < s_.rank; ++p)
    if (s_.remote[p])
      for (int i = 0; i < per; ++i) {
        socks[p][i] = in_[p * per + i];
        in_[p * per + i] = -1;
      }
  for (int p = 0; p < s_.nranks; ++p) {
    if (!s_.remote[p]) continue;
    for (int fd : socks[p]) {
      net::set_outage_limits(fd, s_.exec_timeout_s);
      if (!s_.congestion.empty()) net::set_congestion(fd, s_.congestion);  // checked at set-up's start
    }
    std::vector<int> data(socks[p].begin() + 1, socks[p].end());
    (*conns)[p].reset(new TcpConnection(p, where(p), socks[p][0], data, s_.stage_bytes));
  }
  return HCCL_SUCCESS;
}

}  // namespace

int open_listener(const net::SockAddr &local, const char *api, net::SockAddr *bound, HcclResult *code) {
  return net::listen_on(local, api, bound, code);
}

HcclResult connect_all(const Setup &s, int listen_fd,
                       std::vector<std::unique_ptr<Connection>> *conns, const OnError &on_error) {
  HcclResult r;
  {
    Connector c(s, listen_fd);
    std::string why;
    r = c.run(conns, &why);
    if (r != HCCL_SUCCESS) r = on_error(r, why);
  }
  net::close_fd(listen_fd);
  return r;
}

}  // namespace tcp
}  // namespace hccl
