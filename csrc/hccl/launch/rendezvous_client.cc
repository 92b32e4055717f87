// A rank's side of the group rendezvous: dial rank 0 (retrying while nobody
// listens yet, since ranks start in any order), send one request, read one
// reply. Every wait ends by HCCL_CONNECT_TIMEOUT and sleeps between tries.
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/cancel.h"
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
using bsnet::Io;

// Connects within `deadline`; -1 with *err (ECONNREFUSED: nobody listens).
int dial_once(const RendezvousAddr &addr, Clock::time_point deadline, int *err) {
  int fd = ::socket(addr.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  int e = ::connect(fd, reinterpret_cast<const sockaddr *>(&addr.ss), addr.len) == 0 ? 0 : errno;
  // EAGAIN: a unix listener's backlog is full; try again later like a refusal.
  while (e == EINPROGRESS || e == EINTR) {
    pollfd p = {fd, POLLOUT, 0};
    int n = ::poll(&p, 1, net::poll_ms(deadline, 100));
    if (n > 0) {
      socklen_t len = sizeof(e);
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
    } else if (n < 0 && errno != EINTR) {
      e = errno;
    } else if (Clock::now() >= deadline || common::setup_cancelled()) {
      e = ETIMEDOUT;
    }
  }
  // Rank 0 may not listen yet on a port of the ephemeral range: a dial can meet itself there.
  if (e == 0 && addr.tcp && net::self_connected(fd)) e = ECONNREFUSED;
  if (e == 0) return fd;
  net::close_fd(fd);
  *err = e;
  return -1;
}

// One request and its reply. kOk: *code and *msg set (and root_info filled
// when the code is success); otherwise the exchange broke off.
Io exchange(int fd, const std::string &group, uint32_t nranks, uint32_t rank, Clock::time_point deadline,
            HcclResult *code, void *root_info, std::string *msg) {
  char host[kMaxHostBytes + 1] = {};
  gethostname(host, kMaxHostBytes);
  std::string h = host;
  RequestHead req;
  std::memcpy(req.magic, kWireMagic, sizeof(req.magic));
  req.nranks = htonl(nranks);
  req.rank = htonl(rank);
  req.pid = htonl(static_cast<uint32_t>(getpid()));
  req.group_len = htons(static_cast<uint16_t>(group.size()));
  req.host_len = htons(static_cast<uint16_t>(h.size()));
  std::vector<uint8_t> out(sizeof(req) + group.size() + h.size());
  std::memcpy(out.data(), &req, sizeof(req));
  std::memcpy(out.data() + sizeof(req), group.data(), group.size());
  std::memcpy(out.data() + sizeof(req) + group.size(), h.data(), h.size());
  int err = 0;
  Io io = bsnet::send_all(fd, out.data(), out.size(), deadline, &err);
  if (io != Io::kOk) return io;
  ReplyHead rep;
  io = bsnet::recv_all(fd, &rep, sizeof(rep), deadline, &err);
  if (io != Io::kOk) return io;
  if (std::memcmp(rep.magic, kWireMagic, sizeof(rep.magic)) != 0 || ntohs(rep.msg_len) > kMaxMessage)
    return Io::kError;
  std::vector<uint8_t> rest((ntohs(rep.has_root_info) ? HCCL_ROOT_INFO_BYTES : 0) + ntohs(rep.msg_len));
  if (!rest.empty()) io = bsnet::recv_all(fd, rest.data(), rest.size(), deadline, &err);
  if (io != Io::kOk) return io;
  *code = static_cast<HcclResult>(ntohl(rep.code));
  size_t off = ntohs(rep.has_root_info) ? HCCL_ROOT_INFO_BYTES : 0;
  msg->assign(reinterpret_cast<const char *>(rest.data()) + off, rest.size() - off);
  if (*code == HCCL_SUCCESS) {
    if (off == 0) return Io::kError;
    std::memcpy(root_info, rest.data(), HCCL_ROOT_INFO_BYTES);
  }
  return Io::kOk;
}

}  // namespace

HcclResult fetch_root_info(const char *api, const RendezvousAddr &addr, const std::string &group, uint32_t nranks,
                           uint32_t rank, bool once, void *root_info, std::string *note) {
  const int timeout = connect_timeout_s();
  const Clock::time_point deadline = Clock::now() + (once ? std::chrono::seconds(3) : std::chrono::seconds(timeout));
  const std::string who = "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " of group '" + group + "'";
  auto backoff = std::chrono::milliseconds(20);
  std::string last = "nobody listens there yet";
  for (;;) {
    if (common::setup_cancelled()) {
      return HCCL_FAIL(HCCL_E_UNAVAIL, "%s: %s: cancelled while waiting for rank 0", api, who.c_str());
    }
    int err = 0;
    int fd = dial_once(addr, std::min(deadline, Clock::now() + std::chrono::seconds(2)), &err);
    if (fd >= 0 && !addr.tcp) {
      // Another user could have bound this name first: do not trust it.
      ucred cred{};
      socklen_t len = sizeof(cred);
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
        net::close_fd(fd);
        return HCCL_FAIL(HCCL_E_UNAVAIL, "%s: %s: the group's socket on this host is held by another user's process "
                                         "(pid %d, uid %u): choose another group name", api, who.c_str(), cred.pid, cred.uid);
      }
    }
    if (fd >= 0) {
      HcclResult code = HCCL_SUCCESS;
      std::string msg;
      Io io = exchange(fd, group, nranks, rank, deadline, &code, root_info, &msg);
      net::close_fd(fd);
      if (io == Io::kOk && code == HCCL_SUCCESS) {
        *note = msg;
        return HCCL_SUCCESS;
      }
      if (io == Io::kOk) {
        return HCCL_FAIL(code, "%s: %s: %s", api, who.c_str(), msg.c_str());
      }
      if (io == Io::kError && !once) {
        return HCCL_FAIL(HCCL_E_TCP_TRANSFER, "%s: %s: %s answered, but not as a pyhccl group rendezvous (another program on "
                                              "that port?)", api, who.c_str(), addr.text.c_str());
      }
      last = io == Io::kTimeout ? "it did not answer" : "it closed the connection without answering";
    } else if (err != ECONNREFUSED && err != EAGAIN && err != ENOENT && err != ETIMEDOUT && err != EHOSTUNREACH &&
               err != ENETUNREACH && err != ECONNRESET) {
      return HCCL_FAIL(HCCL_E_TCP_CONNECT, "%s: %s: cannot reach rank 0 at %s: %s", api, who.c_str(), addr.text.c_str(),
                                           net::errno_text(err).c_str());
    } else if (err != ECONNREFUSED) {
      last = net::errno_text(err);
    }
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, left));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(250));
  }
  if (once) {
    return HCCL_FAIL(HCCL_E_UNAVAIL, "%s: %s: %s is in use, but what holds it did not answer as a pyhccl group (%s)", api,
                                     who.c_str(), addr.text.c_str(), last.c_str());
  }
  return HCCL_FAIL(HCCL_E_TIMEOUT, "%s: %s timed out after %d s (HCCL_CONNECT_TIMEOUT) waiting for rank 0 of the group at %s "
                                   "(%s): start rank 0 with the same group name%s", api, who.c_str(), timeout, addr.text.c_str(),
                                   last.c_str(), addr.tcp ? "" : ", as the same user, on this host (or set MASTER_ADDR and "
                                   "MASTER_PORT for ranks on several hosts)");
}

}  // namespace launch
}  // namespace hccl
