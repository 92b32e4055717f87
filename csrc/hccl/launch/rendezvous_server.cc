// Rank 0's side of the group rendezvous: one thread per open group, one
// poll() loop over the listen socket, the connections of asking ranks and a
// stop descriptor. It hands the root info to every same-user rank that asks
// while the group is forming and keeps count of the ranks; once every rank
// has it, the group is in use and later askers get an error naming the job
// that has it (never the root info of someone else's job).
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <list>
#include <thread>
#include <vector>

#include "common/log.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/bootstrap/wire.h"
#include "hccl/launch/rendezvous.h"
#include "hccl/launch/rendezvous_wire.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace launch {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRequestDeadline = std::chrono::seconds(2);
constexpr size_t kMaxPending = 64;  // unanswered connections; the oldest goes first

struct Asker {
  int fd = -1;
  std::vector<uint8_t> in;
  Clock::time_point deadline;
  bool same_user = true;  // tcp: no credentials to check
  uint32_t pid = 0;       // unix: from the kernel; tcp: as sent
};

std::string quoted(const std::string &s) { return "'" + s + "'"; }

}  // namespace

class GroupServer {
 public:
  int listen_fd = -1;
  int stop_fd = -1;
  bool tcp = false;
  std::string group, where;
  uint32_t nranks = 0;
  uint8_t root_info[HCCL_ROOT_INFO_BYTES];
  std::thread thread;

  ~GroupServer() {
    for (Asker &a : askers_) net::close_fd(a.fd);
    net::close_fd(listen_fd);
    net::close_fd(stop_fd);
  }
  void init() {
    claims_.assign(nranks, std::string());
    claims_[0] = "pid " + std::to_string(getpid()) + host_suffix(local_host());
    complete_ = nranks == 1;
  }
  void run();

 private:
  static std::string local_host() {
    char h[kMaxHostBytes + 1] = {};
    gethostname(h, kMaxHostBytes);
    return h;
  }
  std::string host_suffix(const std::string &host) const { return tcp ? " on " + host : ""; }
  void accept_all();
  void on_readable(Asker &a);
  void answer(Asker &a, const RequestHead &h, const std::string &grp, const std::string &host);
  void reply(Asker &a, HcclResult code, bool with_root, const std::string &msg);

  std::list<Asker> askers_;
  std::vector<std::string> claims_;  // rank -> "pid N[ on host]", "" while unclaimed
  uint32_t handed_ = 0;              // ranks other than 0 that have the root info
  bool complete_ = false;
};

void GroupServer::run() {
  std::vector<pollfd> pfds;
  std::vector<Asker *> who;
  for (;;) {
    pfds.clear();
    who.clear();
    pfds.push_back({stop_fd, POLLIN, 0});
    pfds.push_back({listen_fd, POLLIN, 0});
    Clock::time_point wake = Clock::time_point::max();
    for (Asker &a : askers_) {
      pfds.push_back({a.fd, POLLIN, 0});
      who.push_back(&a);
      wake = std::min(wake, a.deadline);
    }
    int n = ::poll(pfds.data(), pfds.size(), wake == Clock::time_point::max() ? -1 : net::poll_ms(wake));
    if (n < 0 && errno != EINTR) {
      PYHCCL_LOG(common::kError, common::kBootstrap, "group %s: rendezvous poll() failed: %s", quoted(group).c_str(),
                 net::errno_text(errno).c_str());
      return;
    }
    if (pfds[0].revents) return;  // server_stop
    if (pfds[1].revents) accept_all();
    for (size_t i = 2; i < pfds.size(); ++i)
      if (pfds[i].revents && who[i - 2]->fd >= 0) on_readable(*who[i - 2]);
    Clock::time_point now = Clock::now();
    for (auto it = askers_.begin(); it != askers_.end();) {
      if (it->fd >= 0 && now >= it->deadline) net::close_fd(it->fd), it->fd = -1;
      it = it->fd < 0 ? askers_.erase(it) : std::next(it);
    }
  }
}

void GroupServer::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors: the listener stays readable, so pause instead of spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    // Full: the oldest goes (closed here, erased by run(), which may hold pointers to it).
    size_t live = 0;
    for (const Asker &a : askers_) live += a.fd >= 0;
    if (live >= kMaxPending) {
      for (Asker &a : askers_) {
        if (a.fd < 0) continue;
        net::close_fd(a.fd);
        a.fd = -1;
        break;
      }
    }
    Asker a;
    a.fd = fd;
    a.deadline = Clock::now() + kRequestDeadline;
    if (!tcp) {
      // Abstract sockets have no file permissions: the kernel's credentials
      // tell whether the asker runs as this user.
      ucred cred{};
      socklen_t len = sizeof(cred);
      a.same_user = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == getuid();
      a.pid = static_cast<uint32_t>(cred.pid);
    }
    askers_.push_back(std::move(a));
  }
}

void GroupServer::on_readable(Asker &a) {
  uint8_t buf[kMaxRequest];
  for (;;) {
    size_t need = sizeof(RequestHead);
    if (a.in.size() >= sizeof(RequestHead)) {
      RequestHead h;
      std::memcpy(&h, a.in.data(), sizeof(h));
      if (std::memcmp(h.magic, kWireMagic, sizeof(h.magic)) != 0 || ntohs(h.group_len) > kMaxGroupBytes ||
          ntohs(h.host_len) > kMaxHostBytes) {
        net::close_fd(a.fd);  // not one of ours
        a.fd = -1;
        return;
      }
      need += ntohs(h.group_len) + ntohs(h.host_len);
    }
    if (a.in.size() >= need) break;  // the whole request (need counts the lengths once the head is in)
    ssize_t n = ::recv(a.fd, buf, need - a.in.size(), MSG_DONTWAIT);
    if (n > 0) {
      a.in.insert(a.in.end(), buf, buf + n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // more to come
    net::close_fd(a.fd);  // closed (or failed) before asking
    a.fd = -1;
    return;
  }
  RequestHead h;
  std::memcpy(&h, a.in.data(), sizeof(h));
  std::string grp(reinterpret_cast<const char *>(a.in.data() + sizeof(h)), ntohs(h.group_len));
  std::string host(reinterpret_cast<const char *>(a.in.data() + sizeof(h) + grp.size()), ntohs(h.host_len));
  answer(a, h, grp, host);
}

void GroupServer::answer(Asker &a, const RequestHead &h, const std::string &grp, const std::string &host) {
  uint32_t n = ntohl(h.nranks), rank = ntohl(h.rank);
  if (tcp) a.pid = ntohl(h.pid);
  std::string asker = "pid " + std::to_string(a.pid) + host_suffix(host);
  if (!a.same_user) {
    PYHCCL_LOG(common::kWarning, common::kBootstrap, "group %s: refused %s, which runs as another user", quoted(group).c_str(),
               asker.c_str());
    reply(a, HCCL_E_UNAVAIL, false,
          "group " + quoted(grp) + " on this host belongs to another user's process (pid " +
              std::to_string(getpid()) + "); choose another group name");
    return;
  }
  if (grp != group) {
    reply(a, HCCL_E_PARA, false,
          "rank " + std::to_string(rank) + " asked for group " + quoted(grp) + ", but rank 0 at " + where +
              " serves group " + quoted(group) + " (pid " + std::to_string(getpid()) + ")");
    return;
  }
  const std::string head = "group " + quoted(group) + " (rank 0: " + claims_[0] + ")";
  bool fits = n == nranks && rank < nranks;
  if (complete_) {
    std::string msg = head + " is in use: all " + std::to_string(nranks) + " ranks of its job have joined";
    if (fits && rank != 0) msg += " (rank " + std::to_string(rank) + ": " + claims_[rank] + ")";
    msg += "; another job uses the same group name, or this rank was started twice: choose another group "
           "name, or start the job again once that one has ended";
    PYHCCL_LOG(common::kWarning, common::kBootstrap, "%s: refused rank %u of %u (%s): the group is complete",
               head.c_str(), rank, n, asker.c_str());
    reply(a, HCCL_E_UNAVAIL, false, msg);
    return;
  }
  // While the group forms, every asker gets the root info: the bootstrap then
  // fails the whole job, with its own message, if world sizes differ or two
  // processes claim one rank. The remark says which processes those are.
  std::string note;
  if (n != nranks) {
    note = head + " has worldSize " + std::to_string(nranks) + ", this rank says " + std::to_string(n);
  } else if (rank < nranks && !claims_[rank].empty()) {
    note = head + ": rank " + std::to_string(rank) + " is claimed by two processes (" + claims_[rank] + " and " +
           asker + "): a rank started twice, or two jobs with the same group name";
    PYHCCL_LOG(common::kError, common::kBootstrap, "%s", note.c_str());
  } else if (rank < nranks) {
    claims_[rank] = asker;
    if (++handed_ == nranks - 1) complete_ = true;
  }
  reply(a, HCCL_SUCCESS, true, note);
}

void GroupServer::reply(Asker &a, HcclResult code, bool with_root, const std::string &msg) {
  std::vector<uint8_t> out =
      encode_reply(code, nranks, static_cast<uint32_t>(getpid()), with_root ? root_info : nullptr, msg);
  int err = 0;
  // A few KiB: the socket buffer takes it at once; the bound only guards
  // against a peer that stopped reading.
  bsnet::send_all(a.fd, out.data(), out.size(), Clock::now() + std::chrono::seconds(1), &err);
  net::close_fd(a.fd);
  a.fd = -1;
}

HcclResult server_start(const char *api, const RendezvousAddr &addr, const std::string &group, uint32_t nranks,
                        void *root_info, GroupServer **out, bool *in_use) {
  *in_use = false;
  int fd = ::socket(addr.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return HCCL_FAIL(HCCL_E_SYSCALL, "%s: cannot create the group's socket: %s", api, net::errno_text(errno).c_str());
  }
  if (addr.tcp) {
    int one = 1;  // a run right after the last one may bind while its port is in TIME_WAIT
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  }
  if (::bind(fd, reinterpret_cast<const sockaddr *>(&addr.ss), addr.len) != 0 || ::listen(fd, 128) != 0) {
    int e = errno;
    net::close_fd(fd);
    if (e == EADDRINUSE) {
      *in_use = true;
      return HCCL_E_UNAVAIL;
    }
    return HCCL_FAIL(HCCL_E_TCP_CONNECT, "%s: cannot listen on %s for group '%s': %s", api, addr.text.c_str(), group.c_str(),
                                         net::errno_text(e).c_str());
  }
  // The root info (and its bootstrap server) only once the group is ours.
  HcclResult r = root_info_create(root_info, HCCL_ROOT_INFO_BYTES);
  if (r != HCCL_SUCCESS) {
    net::close_fd(fd);
    return r;
  }
  GroupServer *s = nullptr;
  try {
    s = new GroupServer;
    s->listen_fd = fd;
    s->tcp = addr.tcp;
    s->group = group;
    s->where = addr.text;
    s->nranks = nranks;
    std::memcpy(s->root_info, root_info, HCCL_ROOT_INFO_BYTES);
    s->init();
    s->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->stop_fd < 0) throw std::runtime_error("eventfd: " + net::errno_text(errno));
    s->thread = std::thread([s] { s->run(); });
  } catch (const std::exception &e) {
    if (s == nullptr) net::close_fd(fd);
    delete s;
    return HCCL_FAIL(HCCL_E_INTERNAL, "%s: cannot start the group's rendezvous thread: %s", api, e.what());
  }
  *out = s;
  return HCCL_SUCCESS;
}

void server_stop(GroupServer *s) {
  if (s == nullptr) return;
  uint64_t one = 1;
  if (::write(s->stop_fd, &one, sizeof(one)) < 0) { /* the thread also ends when the process does */ }
  if (s->thread.joinable()) s->thread.join();
  delete s;
}

}  // namespace launch
}  // namespace hccl
