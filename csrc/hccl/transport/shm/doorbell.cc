// Hub's doorbell (hub.h): a futex word in each rank's segment that peers
// bump (and wake) after moving data toward it, and a datagram socket that
// wakes a rank sleeping in poll() over TCP sockets instead.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "hccl/transport/shm/hub.h"

namespace hccl {
namespace shm {
namespace {

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

}  // namespace

bool Hub::bind_wake(const std::string &name, std::string *why) {
  wake_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  socklen_t len;
  sockaddr_un a = wake_addr(name, &len);
  if (wake_fd_ >= 0 && bind(wake_fd_, reinterpret_cast<sockaddr *>(&a), len) == 0) return true;
  *why = "cannot bind the wake-up socket of " + name + ": " + std::strerror(errno);
  return false;
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

bool Hub::begin_poll_sleep(uint32_t bell) {
  ctl(rank_)->poll_sleeper.store(1, std::memory_order_seq_cst);
  if (doorbell()->value.load(std::memory_order_seq_cst) == bell) return true;
  ctl(rank_)->poll_sleeper.store(0, std::memory_order_relaxed);
  return false;
}

void Hub::end_poll_sleep() {
  ctl(rank_)->poll_sleeper.store(0, std::memory_order_relaxed);
  char buf[64];
  while (recv(wake_fd_, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
  }
}

}  // namespace shm
}  // namespace hccl
