#include "hccl/net/socket.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <thread>

#include "common/cancel.h"
#include "common/env.h"
#include "common/first_line.h"
#include "common/log.h"
#include "runtime/hostrt.h"

namespace hccl {
namespace net {
namespace {

constexpr int kBasePortSpan = 64;  // ports tried from HCCL_IF_BASE_PORT on

#ifndef TCP_RTO_MAX_MS
#define TCP_RTO_MAX_MS 44  // Linux 6.15's uapi; older headers lack it
#endif

// The first refusal of a socket option, at info level: the same on every socket.
void refused_once(std::atomic<bool> *logged, const char *option, const char *consequence) {
  if (!logged->exchange(true))
    PYHCCL_LOG(common::kInfo, common::kNet, "setsockopt(%s) refused: %s; %s", option,
               errno_text(errno).c_str(), consequence);
}

}  // namespace

int listen_on(const SockAddr &local, const char *api, SockAddr *bound, HcclResult *code) {
  int first = 0, count = 1;
  const char *env = common::env_str("HCCL_IF_BASE_PORT", "");
  if (*env != '\0') {
    int64_t p = 0;
    if (!common::parse_int64(env, &p) || p < 1 || p > 65535) {
      hostrt::set_error("%s: HCCL_IF_BASE_PORT=\"%s\" is not a port number (1-65535)", api, env);
      *code = HCCL_E_PARA;
      return -1;
    }
    first = static_cast<int>(p);
    count = std::min(kBasePortSpan, 65536 - first);
  }
  int last_err = 0;
  for (int i = 0; i < count; ++i) {
    int fd = ::socket(local.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last_err = errno;
      break;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    SockAddr a = local;
    a.set_port(static_cast<uint16_t>(first == 0 ? 0 : first + i));
    if (::bind(fd, a.sa(), a.len) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      bound->len = sizeof(bound->ss);
      ::getsockname(fd, bound->sa(), &bound->len);
      return fd;
    }
    last_err = errno;
    close_fd(fd);
    if (last_err != EADDRINUSE) break;
  }
  *code = HCCL_E_TCP_CONNECT;
  if (first == 0)
    hostrt::set_error("%s: cannot listen on %s: %s", api, local.host().c_str(),
                      errno_text(last_err).c_str());
  else
    hostrt::set_error("%s: cannot listen on %s port %d-%d (HCCL_IF_BASE_PORT): %s", api,
                      local.host().c_str(), first, first + count - 1, errno_text(last_err).c_str());
  return -1;
}

int connect_start(const SockAddr &peer, int *err) {
  int fd = ::socket(peer.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  if (::connect(fd, peer.sa(), peer.len) == 0 || errno == EINPROGRESS || errno == EINTR) return fd;
  *err = errno;
  close_fd(fd);
  return -1;
}

bool self_connected(int fd) {
  sockaddr_storage mine{}, theirs{};
  socklen_t a = sizeof(mine), b = sizeof(theirs);
  if (::getsockname(fd, reinterpret_cast<sockaddr *>(&mine), &a) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr *>(&theirs), &b) != 0)
    return false;
  return a == b && std::memcmp(&mine, &theirs, a) == 0;
}

int connect_result(int fd) {
  int e = 0;
  socklen_t len = sizeof(e);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) return errno;
  return e;
}

int dial(const SockAddr &peer, Clock::time_point deadline, int *last_err, Clock::duration refused_for) {
  auto backoff = std::chrono::milliseconds(10);
  const Clock::time_point start = Clock::now();
  bool only_refused = true;
  for (;;) {
    int fd = connect_start(peer, last_err);
    if (fd >= 0) {
      int e = EINPROGRESS;
      while (e == EINPROGRESS) {
        if (common::setup_cancelled()) e = ECANCELED;
        struct pollfd p = {fd, POLLOUT, 0};
        int n = e == ECANCELED ? 0 : ::poll(&p, 1, poll_ms(deadline, 100));
        if (e == ECANCELED) break;
        if (n > 0) e = connect_result(fd);
        else if (n < 0 && errno != EINTR) e = errno;
        else if (n == 0 && Clock::now() >= deadline) e = ETIMEDOUT;
      }
      if (e == 0 && self_connected(fd)) e = ECONNREFUSED;  // nobody listens there
      if (e == 0) return fd;
      *last_err = e;
      close_fd(fd);
    }
    // Busy, or not listening: back off and retry until the deadline.
    if (*last_err == ECANCELED || common::setup_cancelled()) {
      *last_err = ECANCELED;
      return -1;
    }
    only_refused = only_refused && *last_err == ECONNREFUSED;
    if (only_refused && Clock::now() - start >= refused_for) return -1;
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return -1;
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, left));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

int poll_ms(Clock::time_point deadline, int cap_ms) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  // Round up so a poll never wakes just before the deadline and spins.
  return left > cap_ms ? cap_ms : static_cast<int>(left) + 1;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void quick_ack(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

void set_buffers(int fd, int bytes) {
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

int set_congestion(int fd, const std::string &name) {
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(), static_cast<socklen_t>(name.size())) == 0)
    return 0;
  return errno;
}

namespace {

// A sysctl's words, for messages ("unknown" when it cannot be read).
std::string sysctl_words(const char *path) {
  const std::string words = common::first_line(path);
  return words.empty() ? "unknown" : words;
}

}  // namespace

bool congestion_usable(const std::string &name, std::string *why) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) {
    *why = "no socket to try it on: " + errno_text(errno);
    return false;
  }
  const int e = set_congestion(fd, name);
  ::close(fd);
  if (e == 0) return true;
  if (e == ENOENT)
    *why = "this kernel has no such TCP congestion control (it has: " +
           sysctl_words("/proc/sys/net/ipv4/tcp_available_congestion_control") + ")";
  else if (e == EPERM)
    *why = "only privileged processes may use it here (others may use: " +
           sysctl_words("/proc/sys/net/ipv4/tcp_allowed_congestion_control") + ")";
  else
    *why = "the kernel refused it: " + errno_text(e);
  return false;
}

void set_outage_limits(int fd, int exec_timeout_s) {
  static std::atomic<bool> rto_logged{false}, user_logged{false};
  int rto_max = kRtoMaxMs;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_RTO_MAX_MS, &rto_max, sizeof(rto_max)) != 0)
    refused_once(&rto_logged, "TCP_RTO_MAX_MS",
                 "TCP's backoff stays the kernel's (up to 120 s), so a link outage longer than "
                 "about half of HCCL_EXEC_TIMEOUT may fail the job (Linux >= 6.15 caps it; "
                 "docs/TRANSPORT.md, \"Outages\")");
  const int64_t ms = (static_cast<int64_t>(exec_timeout_s) + kOutageGraceS) * 1000;
  int user = ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
  if (::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user, sizeof(user)) != 0)
    refused_once(&user_logged, "TCP_USER_TIMEOUT",
                 "the kernel may drop a connection during an outage before HCCL_EXEC_TIMEOUT");
}

void close_fd(int fd) {
  if (fd >= 0) ::close(fd);
}

std::string errno_text(int err) {
  char buf[128];
  const char *s = strerror_r(err, buf, sizeof(buf));
  return s ? s : "unknown error";
}

}  // namespace net
}  // namespace hccl
