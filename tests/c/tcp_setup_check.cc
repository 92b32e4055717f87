// The TCP transport's set-up handshake (csrc/hccl/transport/tcp/setup.cc) on
// its own: two ranks as threads, rank 0 reaching rank 1 through a recording
// relay. Checks that a Hello captured on the wire and replayed to rank 1's
// listener while set-up is still under way is refused as a wrong secret
// (that socket's challenge differs) and set-up still completes; that no byte
// either way holds the job secret; and that a listener which cannot prove
// the secret is not taken for the peer. Prints "tcp setup ok". Built by
// tests/c/test_c_tcp.py.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/random.h"
#include "hccl/reduce/reduce.h"
#include "hccl/transport/tcp/setup.h"
#include "hccl/transport/tcp/wire.h"
#include "runtime/hostrt.h"

#include "hostrt_stub.h"
#include "relay.h"
#include "unit_check.h"

// No data moves here: a stand-in for csrc/hccl/reduce (which would triple the
// compile time) that the connections never call.
void hccl::reduce(HcclDataType, HcclReduceOp, void *, const void *const *, int, size_t) { std::abort(); }

namespace {

using namespace hccl;
using Clock = std::chrono::steady_clock;

net::SockAddr loopback(uint16_t port) {
  net::SockAddr a;
  net::parse_addr("127.0.0.1", port, &a);
  return a;
}

int listener(net::SockAddr *bound) {
  HcclResult code;
  int fd = tcp::open_listener(loopback(0), "tcp_setup_check", bound, &code);
  EXPECT(fd >= 0, "open_listener: %s", hostrt::last_error());
  return fd;
}

int dial(const net::SockAddr &to) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT(connect(fd, to.sa(), to.len) == 0, "dial %s: %s", to.str().c_str(), std::strerror(errno));
  timeval tv = {5, 0};  // a test's reads never hang
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

bool recv_exact(int fd, void *buf, size_t n) { return recv(fd, buf, n, MSG_WAITALL) == static_cast<ssize_t>(n); }

tcp::Setup make_setup(int rank, const uint8_t secret[32], const uint8_t nonce[16]) {
  tcp::Setup s;
  s.rank = rank;
  s.nranks = 2;
  s.remote = {1, 1};
  s.addrs.resize(2);
  s.hosts = {"h0", "h1"};
  std::memcpy(s.secret, secret, 32);
  std::memcpy(s.nonce, nonce, 16);
  s.deadline = Clock::now() + std::chrono::seconds(20);
  return s;
}

// connect_all's error hook, keeping the message.
tcp::OnError keep_why(std::string *out) {
  return [out](HcclResult r, const std::string &why) {
    *out = why;
    return r;
  };
}

bool holds(const std::string &bytes, const uint8_t secret[32]) {
  return bytes.find(std::string(reinterpret_cast<const char *>(secret), 32)) != std::string::npos;
}

void check_replay() {
  uint8_t secret[32], nonce[16];
  fill_random(secret, sizeof(secret));
  fill_random(nonce, sizeof(nonce));
  tcp::Setup s0 = make_setup(0, secret, nonce), s1 = make_setup(1, secret, nonce);
  net::SockAddr l0, l1, relay_at;
  int fd0 = listener(&l0), fd1 = listener(&l1);
  int relay_fd = listener(&relay_at);
  s0.addrs = {l0, relay_at};  // rank 0 reaches rank 1 through the relay
  s1.addrs = {l0, l1};

  // The relay passes rank 0's first socket on at once and holds the others
  // in its backlog until the replays are done, so rank 1 is still setting up.
  std::mutex mu;
  std::string up, down;
  std::atomic<bool> replayed{false}, finished{false};
  std::vector<std::thread> pumps;
  std::thread relay([&] {
    while (!finished) {
      if (!pumps.empty() && !replayed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      pollfd p = {relay_fd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      int a = accept(relay_fd, nullptr, nullptr);
      if (a < 0) continue;
      int b = dial(l1);
      pumps.emplace_back(pump, a, b, &mu, &up, &down);
    }
  });
  HcclResult r0 = HCCL_E_INTERNAL, r1 = HCCL_E_INTERNAL;
  std::string why0, why1;
  std::vector<std::unique_ptr<Connection>> c0(2), c1(2);
  std::thread rank0([&] { r0 = tcp::connect_all(s0, fd0, &c0, keep_why(&why0)); });
  std::thread rank1([&] { r1 = tcp::connect_all(s1, fd1, &c1, keep_why(&why1)); });

  std::string hello;
  for (auto start = Clock::now(); hello.size() < sizeof(tcp::Hello) && Clock::now() - start < std::chrono::seconds(10);) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> lk(mu);
    hello = up.substr(0, sizeof(tcp::Hello));
  }
  EXPECT(hello.size() == sizeof(tcp::Hello), "no hello captured (%zu bytes)", hello.size());
  for (bool read_challenge : {true, false}) {
    int fd = dial(l1);
    tcp::Challenge ch;
    if (read_challenge) EXPECT(recv_exact(fd, &ch, sizeof(ch)), "replay: no challenge");
    send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    if (!read_challenge) recv_exact(fd, &ch, sizeof(ch));
    tcp::Ack ack{};
    bool got = recv_exact(fd, &ack, sizeof(ack));
    EXPECT(got && ack.status == tcp::kAckBadSecret, "replayed hello not refused as a wrong secret (got %d, status %u)",
           got, ack.status);
    close(fd);
  }
  replayed = true;
  rank0.join();
  rank1.join();
  EXPECT(r0 == HCCL_SUCCESS && r1 == HCCL_SUCCESS, "set-up after the replays: rank 0 %d (%s), rank 1 %d (%s)", r0,
         why0.c_str(), r1, why1.c_str());
  EXPECT(c0[1] != nullptr && c1[0] != nullptr, "no connections after set-up");
  c0.clear();
  c1.clear();
  finished = true;
  relay.join();
  for (std::thread &t : pumps) t.join();
  close(relay_fd);
  EXPECT(!holds(up, secret) && !holds(down, secret), "the job secret crossed the network");
}

// A listener at rank 1's address that answers "ok" without the secret.
void check_impostor() {
  uint8_t secret[32] = {1}, nonce[16] = {2};
  tcp::Setup s0 = make_setup(0, secret, nonce);
  s0.nsock = 1;
  s0.deadline = Clock::now() + std::chrono::seconds(10);
  net::SockAddr l0, fake;
  int fd0 = listener(&l0), fake_fd = listener(&fake);
  s0.addrs = {l0, fake};
  std::atomic<bool> stop{false};
  std::thread impostor([&] {
    while (!stop) {
      pollfd p = {fake_fd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      int fd = accept(fake_fd, nullptr, nullptr);
      tcp::Challenge ch{};
      std::memcpy(ch.magic, tcp::kHelloMagic, sizeof(ch.magic));
      send(fd, &ch, sizeof(ch), MSG_NOSIGNAL);
      tcp::Hello h;
      timeval tv = {5, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      if (recv_exact(fd, &h, sizeof(h))) {
        tcp::Ack a{};
        std::memcpy(a.magic, tcp::kHelloMagic, sizeof(a.magic));
        a.status = tcp::kAckOk;
        a.rank = 1;
        send(fd, &a, sizeof(a), MSG_NOSIGNAL);
      }
      char c;
      recv(fd, &c, 1, 0);
      close(fd);
    }
  });
  std::vector<std::unique_ptr<Connection>> c0(2);
  std::string why;
  HcclResult r = tcp::connect_all(s0, fd0, &c0, keep_why(&why));
  stop = true;
  impostor.join();
  close(fake_fd);
  EXPECT(r == HCCL_E_TCP_CONNECT && why.find("could not prove it holds the job secret") != std::string::npos,
         "impostor listener: %d (%s)", r, why.c_str());
}

}  // namespace

int main() {
  alarm(60);  // last resort: a hang kills the test
  check_replay();
  check_impostor();
  if (g_fail != 0) return 1;
  std::printf("tcp setup ok\n");
  return 0;
}
