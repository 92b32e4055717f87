// Standalone check of the bootstrap (csrc/hccl/bootstrap): threads and fork()ed
// processes act as ranks. Built by tests/c/test_c_bootstrap.py:
//   g++ -std=c++17 -O1 -pthread -I include -I csrc tests/c/bootstrap_check.cc
//       csrc/hccl/bootstrap/*.cc -o bootstrap_check
// Prints one line per failed check and exits non-zero if any failed.
#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hccl/bootstrap/bootstrap.h"
#include "hccl/bootstrap/wire.h"
#include "runtime/hostrt.h"

#include "hostrt_stub.h"
#include "relay.h"

// Every failed check also shows the runtime's last error.
#define EXPECT_CONTEXT() hostrt::last_error()
#include "unit_check.h"

using hccl::Bootstrap;
using hccl::RootInfoView;
using Clock = std::chrono::steady_clock;

static double secs_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

static bool contains(const char *s, const char *part) { return std::strstr(s, part) != nullptr; }

static RootInfoView make_root() {
  char blob[HCCL_ROOT_INFO_BYTES];
  std::memset(blob, 0x5a, sizeof(blob));
  HcclResult r = hccl::root_info_create(blob, sizeof(blob));
  EXPECT(r == HCCL_SUCCESS, "root_info_create returned %d", r);
  bool tail_zero = true;
  for (size_t i = sizeof(RootInfoView); i < sizeof(blob); ++i) tail_zero &= blob[i] == 0;
  EXPECT(tail_zero, "root info blob tail is not zeroed");
  RootInfoView v{};
  r = hccl::root_info_parse(blob, &v);
  EXPECT(r == HCCL_SUCCESS, "root_info_parse returned %d", r);
  return v;
}

using RankFn = std::function<bool(uint32_t rank)>;

// Runs fn(rank) for every rank on its own thread.
static void run_threads(uint32_t n, const RankFn &fn) {
  std::vector<std::thread> ts;
  for (uint32_t r = 0; r < n; ++r) ts.emplace_back([&fn, r] { fn(r); });
  for (auto &t : ts) t.join();
}

// Runs fn(rank) in a fork()ed child per rank; the child's exit status is its
// verdict. A child still running after `limit_s` is killed and counted failed.
static void run_forked(uint32_t n, const RankFn &fn, double limit_s = 60) {
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (uint32_t r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      int before = g_fail.load();
      bool ok = fn(r);
      std::fflush(nullptr);
      _exit(ok && g_fail.load() == before ? 0 : 1);
    }
    EXPECT(pid > 0, "fork failed");
    pids.push_back(pid);
  }
  auto start = Clock::now();
  size_t left = pids.size();
  while (left > 0) {
    for (pid_t &pid : pids) {
      if (pid <= 0) continue;
      int status = 0;
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == 0) continue;
      EXPECT(w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed (status 0x%x)", pid, status);
      pid = -1;
      --left;
    }
    if (left > 0 && secs_since(start) > limit_s) {
      for (pid_t &pid : pids)
        if (pid > 0) {
          kill(pid, SIGKILL);
          waitpid(pid, nullptr, 0);
          EXPECT(false, "child %d hung; killed", pid);
          pid = -1;
        }
      left = 0;
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

static uint8_t pattern(size_t round, uint32_t rank, size_t i) {
  return static_cast<uint8_t>(round * 131 + rank * 31 + i * 7 + (i >> 8));
}

// Connects, runs allgather rounds of several sizes and checks every byte.
static bool rank_rounds(const RootInfoView &root, uint32_t n, uint32_t rank) {
  Bootstrap *bs = nullptr;
  HcclResult r = hccl::bootstrap_connect(root, n, rank, &bs);
  EXPECT(r == HCCL_SUCCESS && bs != nullptr, "rank %u/%u connect returned %d", rank, n, r);
  if (r != HCCL_SUCCESS) return false;
  const size_t sizes[] = {0, 1, 1000, 100000, 3, 0, 4096};
  bool ok = true;
  for (size_t round = 0; round < sizeof(sizes) / sizeof(sizes[0]); ++round) {
    size_t bytes = sizes[round];
    std::vector<uint8_t> mine(bytes), all(bytes * n + 1, 0xee);
    for (size_t i = 0; i < bytes; ++i) mine[i] = pattern(round, rank, i);
    r = hccl::bootstrap_allgather(bs, mine.data(), bytes, all.data());
    EXPECT(r == HCCL_SUCCESS, "rank %u/%u allgather of %zu bytes returned %d", rank, n, bytes, r);
    if (r != HCCL_SUCCESS) {
      ok = false;
      break;
    }
    bool same = all[bytes * n] == 0xee;  // nothing written past the end
    for (uint32_t q = 0; q < n && same; ++q)
      for (size_t i = 0; i < bytes && same; ++i) same = all[q * bytes + i] == pattern(round, q, i);
    EXPECT(same, "rank %u/%u allgather of %zu bytes: wrong data", rank, n, bytes);
    ok &= same;
  }
  hccl::bootstrap_close(bs);
  return ok;
}

// True once nothing listens on the root's port any more.
static bool port_closed_within(const RootInfoView &root, double limit_s) {
  auto start = Clock::now();
  while (secs_since(start) < limit_s) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(root.port);
    inet_pton(AF_INET, root.host, &sa.sin_addr);
    int rc = connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
    close(fd);
    if (rc != 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

static void test_rounds(uint32_t n, bool forked) {
  RootInfoView root = make_root();
  auto start = Clock::now();
  RankFn fn = [&](uint32_t rank) { return rank_rounds(root, n, rank); };
  forked ? run_forked(n, fn) : run_threads(n, fn);
  EXPECT(secs_since(start) < bound(20), "%u ranks (%s) took %.1f s", n, forked ? "fork" : "threads", secs_since(start));
  EXPECT(port_closed_within(root, 5), "root %s:%u still listening after every rank closed", root.host, root.port);
}

static void test_concurrent_jobs() {
  constexpr int kJobs = 3;
  constexpr uint32_t kRanks = 4;
  RootInfoView roots[kJobs];
  for (auto &r : roots) r = make_root();
  EXPECT(roots[0].port != roots[1].port && std::memcmp(roots[0].secret, roots[1].secret, 32) != 0,
        "two root infos share a port or secret");
  run_threads(kJobs * kRanks, [&](uint32_t t) { return rank_rounds(roots[t / kRanks], kRanks, t % kRanks); });
}

static void test_wrong_secret() {
  RootInfoView root = make_root();
  RootInfoView bad = root;
  bad.secret[7] ^= 0x40;
  // A stranger speaking another protocol gets the challenge, then is dropped
  // without an answer.
  std::thread garbage([&] {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(root.port);
    inet_pton(AF_INET, root.host, &sa.sin_addr);
    bool connected = connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0;
    EXPECT(connected, "garbage peer could not connect");
    const char req[] = "GET / HTTP/1.0\r\nHost: x\r\n\r\n";
    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL);
    timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[64];
    size_t total = 0;
    ssize_t got;
    while ((got = recv(fd, buf, sizeof(buf), 0)) > 0) total += static_cast<size_t>(got);
    EXPECT((got == 0 || errno == ECONNRESET) && total <= hccl::bsnet::kHeaderBytes + sizeof(hccl::bsnet::ChallengePayload),
          "garbage peer was not dropped (recv %zd after %zu bytes)", got, total);
    close(fd);
  });
  std::thread intruder([&] {
    auto start = Clock::now();
    Bootstrap *bs = nullptr;
    HcclResult r = hccl::bootstrap_connect(bad, 2, 0, &bs);
    EXPECT(r == HCCL_E_TCP_CONNECT && bs == nullptr, "wrong secret: connect returned %d", r);
    EXPECT(contains(hostrt::last_error(), "wrong job secret"), "wrong secret: message does not say so");
    EXPECT(secs_since(start) < bound(5), "wrong secret refused only after %.1f s", secs_since(start));
  });
  garbage.join();
  intruder.join();
  run_threads(2, [&](uint32_t rank) { return rank_rounds(root, 2, rank); });
}

// A loopback socket: listening on an ephemeral port (*port set), or dialled to host:port.
static int tcp_listen(uint16_t *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  bool ok = bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0 && listen(fd, 8) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) == 0;
  EXPECT(ok, "test listener: %s", std::strerror(errno));
  *port = ntohs(sa.sin_port);
  return fd;
}

static int tcp_dial(const char *host, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  inet_pton(AF_INET, host, &sa.sin_addr);
  EXPECT(connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0, "dial %s:%u: %s", host, port,
        std::strerror(errno));
  timeval tv = {5, 0};  // a test's reads never hang
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// Reads one bootstrap frame (blocking, 5 s); false on EOF or a bad header.
static bool read_frame(int fd, uint32_t *type, std::string *payload) {
  uint8_t hdr[hccl::bsnet::kHeaderBytes];
  if (recv(fd, hdr, sizeof(hdr), MSG_WAITALL) != static_cast<ssize_t>(sizeof(hdr))) return false;
  uint64_t len = 0;
  if (!hccl::bsnet::decode_header(hdr, type, &len) || len > 4096) return false;
  payload->assign(len, '\0');
  return len == 0 || recv(fd, &(*payload)[0], len, MSG_WAITALL) == static_cast<ssize_t>(len);
}

static bool holds(const std::string &bytes, const uint8_t secret[32]) {
  return bytes.find(std::string(reinterpret_cast<const char *>(secret), 32)) != std::string::npos;
}

// Rank 0 joins through a recording relay; its captured hello, replayed to
// the root on a new connection while rank 1 has not joined yet, is refused as
// a wrong secret (its challenge was another), and the job still sets up. No
// byte either way holds the secret.
static void test_replayed_hello() {
  RootInfoView root = make_root();
  uint16_t relay_port = 0;
  int lfd = tcp_listen(&relay_port);
  std::mutex mu;
  std::string up, down;  // rank 0 -> root, root -> rank 0
  std::thread relay([&] {
    int a = accept(lfd, nullptr, nullptr), b = tcp_dial(root.host, root.port);
    pump(a, b, &mu, &up, &down);
  });
  RootInfoView via = root;
  std::snprintf(via.host, sizeof(via.host), "127.0.0.1");
  via.port = relay_port;
  std::thread rank0([&] { rank_rounds(via, 2, 0); });
  const size_t hello_bytes = hccl::bsnet::kHeaderBytes + sizeof(hccl::bsnet::HelloPayload);
  std::string hello;
  for (auto start = Clock::now(); hello.size() < hello_bytes && secs_since(start) < 10;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::lock_guard<std::mutex> lk(mu);
    hello = up.substr(0, hello_bytes);
  }
  EXPECT(hello.size() == hello_bytes, "relay captured no hello (%zu bytes)", hello.size());
  for (bool wait_for_challenge : {true, false}) {
    int fd = tcp_dial(root.host, root.port);
    uint32_t type = 0;
    std::string payload;
    if (wait_for_challenge)
      EXPECT(read_frame(fd, &type, &payload) && type == hccl::bsnet::kChallenge, "replay: no challenge first");
    send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    if (!wait_for_challenge) read_frame(fd, &type, &payload);
    bool got = read_frame(fd, &type, &payload);
    EXPECT(got && type == hccl::bsnet::kError && payload.find("wrong job secret") != std::string::npos,
          "replayed hello not refused as a wrong secret (frame %u: %s)", got ? type : 0,
          payload.size() > 4 ? payload.c_str() + 4 : "");
    close(fd);
  }
  EXPECT(rank_rounds(root, 2, 1), "rank 1 could not join after the replays");
  rank0.join();
  relay.join();
  close(lfd);
  EXPECT(!holds(up, root.secret) && !holds(down, root.secret), "the job secret crossed the network");
}

// A listener at the root's address that cannot prove it holds the secret
// (a wrong proof, or none before its "ready") is not taken for the root.
static void test_impostor_root() {
  for (bool send_proof : {true, false}) {
    uint16_t port = 0;
    int lfd = tcp_listen(&port);
    std::thread impostor([&] {
      int fd = accept(lfd, nullptr, nullptr);
      hccl::bsnet::ChallengePayload ch{};
      std::memcpy(ch.magic, hccl::bsnet::kHelloMagic, sizeof(ch.magic));
      uint8_t frame[hccl::bsnet::kHeaderBytes + 32];
      hccl::bsnet::encode_header(frame, hccl::bsnet::kChallenge, sizeof(ch));
      std::memcpy(frame + hccl::bsnet::kHeaderBytes, &ch, sizeof(ch));
      send(fd, frame, hccl::bsnet::kHeaderBytes + sizeof(ch), MSG_NOSIGNAL);
      uint32_t type = 0;
      std::string hello;
      EXPECT(read_frame(fd, &type, &hello) && type == hccl::bsnet::kHello, "impostor: no hello");
      std::memset(frame, 0, sizeof(frame));
      hccl::bsnet::encode_header(frame, hccl::bsnet::kProof, 32);
      if (send_proof) send(fd, frame, sizeof(frame), MSG_NOSIGNAL);
      uint32_t one = htonl(1);
      hccl::bsnet::encode_header(frame, hccl::bsnet::kReady, 4);
      std::memcpy(frame + hccl::bsnet::kHeaderBytes, &one, 4);
      send(fd, frame, hccl::bsnet::kHeaderBytes + 4, MSG_NOSIGNAL);
      char c;
      recv(fd, &c, 1, 0);  // until the rank hangs up
      close(fd);
    });
    RootInfoView fake = make_root();
    std::snprintf(fake.host, sizeof(fake.host), "127.0.0.1");
    fake.port = port;
    Bootstrap *bs = nullptr;
    HcclResult r = hccl::bootstrap_connect(fake, 1, 0, &bs);
    EXPECT(r != HCCL_SUCCESS && bs == nullptr, "impostor root (proof %d) accepted", send_proof);
    EXPECT(contains(hostrt::last_error(), send_proof ? "could not prove it holds the job secret" : "unexpected answer"),
          "impostor root (proof %d): message", send_proof);
    impostor.join();
    close(lfd);
  }
}

static void test_missing_rank(bool forked) {
  setenv("HCCL_CONNECT_TIMEOUT", "2", 1);
  RootInfoView root = make_root();
  RankFn fn = [&](uint32_t rank) {
    auto start = Clock::now();
    Bootstrap *bs = nullptr;
    HcclResult r = hccl::bootstrap_connect(root, 4, rank, &bs);
    double t = secs_since(start);
    EXPECT(r == HCCL_E_TIMEOUT && bs == nullptr, "missing rank: rank %u connect returned %d", rank, r);
    EXPECT(contains(hostrt::last_error(), "timed out"), "missing rank: message does not say timed out");
    EXPECT(t > 1.5 && t < bound(8.0), "missing rank: rank %u gave up after %.2f s (timeout 2 s)", rank, t);
    return r == HCCL_E_TIMEOUT;
  };
  // Ranks 0, 1, 3 come; rank 2 never does.
  RankFn present = [&](uint32_t i) { return fn(i < 2 ? i : 3); };
  forked ? run_forked(3, present) : run_threads(3, present);
  if (!forked) {
    std::string msg;
    Bootstrap *bs = nullptr;
    RootInfoView root2 = make_root();
    hccl::bootstrap_connect(root2, 4, 1, &bs);
    msg = hostrt::last_error();
    EXPECT(contains(msg.c_str(), "HcclCommInitRootInfo: timed out after 2 s waiting for 3 of 4 ranks to join"),
          "timeout message: %s", msg.c_str());
  }
  unsetenv("HCCL_CONNECT_TIMEOUT");
}

// A rank that joins and then vanishes makes the others fail fast, not hang.
static void test_rank_leaves(bool forked) {
  setenv("HCCL_CONNECT_TIMEOUT", "30", 1);
  RootInfoView root = make_root();
  const uint32_t n = 4, leaver = 2;
  RankFn fn = [&](uint32_t rank) {
    Bootstrap *bs = nullptr;
    HcclResult r = hccl::bootstrap_connect(root, n, rank, &bs);
    EXPECT(r == HCCL_SUCCESS, "leaver test: rank %u connect returned %d", rank, r);
    if (r != HCCL_SUCCESS) return false;
    uint32_t mine = rank, all[n];
    r = hccl::bootstrap_allgather(bs, &mine, sizeof(mine), all);
    EXPECT(r == HCCL_SUCCESS, "leaver test: first round on rank %u returned %d", rank, r);
    if (rank == leaver) {
      if (forked) _exit(0);  // dies without closing
      hccl::bootstrap_abort(bs);
      return true;
    }
    auto start = Clock::now();
    r = hccl::bootstrap_allgather(bs, &mine, sizeof(mine), all);
    double t = secs_since(start);
    EXPECT(r == HCCL_E_REMOTE || r == HCCL_E_TCP_TRANSFER, "leaver test: rank %u got %d", rank, r);
    EXPECT(contains(hostrt::last_error(), "rank 2"), "leaver test: message does not name rank 2");
    EXPECT(t < bound(5), "leaver test: rank %u failed only after %.1f s", rank, t);
    // The failure is sticky.
    HcclResult again = hccl::bootstrap_allgather(bs, &mine, sizeof(mine), all);
    EXPECT(again == r, "leaver test: second call returned %d, first %d", again, r);
    hccl::bootstrap_close(bs);
    return true;
  };
  forked ? run_forked(n, fn) : run_threads(n, fn);
  unsetenv("HCCL_CONNECT_TIMEOUT");
}

static void test_bad_joins() {
  setenv("HCCL_CONNECT_TIMEOUT", "30", 1);
  // nRanks mismatch: everyone fails at once with E_PARA.
  {
    RootInfoView root = make_root();
    run_threads(2, [&](uint32_t rank) {
      auto start = Clock::now();
      Bootstrap *bs = nullptr;
      if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      HcclResult r = hccl::bootstrap_connect(root, rank == 0 ? 2 : 4, rank, &bs);
      EXPECT(r == HCCL_E_PARA, "nranks mismatch: rank %u got %d", rank, r);
      EXPECT(contains(hostrt::last_error(), "nRanks mismatch: rank 1 says 4, rank 0 says 2"), "mismatch message");
      EXPECT(secs_since(start) < bound(5), "nranks mismatch detected only after %.1f s", secs_since(start));
      return true;
    });
  }
  // Duplicate rank while joining.
  {
    RootInfoView root = make_root();
    run_threads(3, [&](uint32_t i) {
      Bootstrap *bs = nullptr;
      if (i == 2) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      HcclResult r = hccl::bootstrap_connect(root, 3, i == 2 ? 1 : i, &bs);
      EXPECT(r == HCCL_E_PARA, "duplicate rank: thread %u got %d", i, r);
      EXPECT(contains(hostrt::last_error(), "rank 1 joined twice"), "duplicate message");
      return true;
    });
  }
  // A latecomer after the job is complete is told so; the job is unaffected.
  {
    RootInfoView root = make_root();
    Bootstrap *bs[2] = {nullptr, nullptr};
    run_threads(2, [&](uint32_t r) { return hccl::bootstrap_connect(root, 2, r, &bs[r]) == HCCL_SUCCESS; });
    Bootstrap *late = nullptr;
    HcclResult r = hccl::bootstrap_connect(root, 2, 1, &late);
    EXPECT(r == HCCL_E_PARA && late == nullptr, "latecomer got %d", r);
    EXPECT(contains(hostrt::last_error(), "joined twice"), "latecomer message");
    run_threads(2, [&](uint32_t q) {
      uint8_t mine = static_cast<uint8_t>(q + 10), all[2] = {0, 0};
      HcclResult rr = hccl::bootstrap_allgather(bs[q], &mine, 1, all);
      EXPECT(rr == HCCL_SUCCESS && all[0] == 10 && all[1] == 11, "job after latecomer: %d", rr);
      hccl::bootstrap_close(bs[q]);
      return true;
    });
  }
  // Ranks that disagree on an allgather's size both fail with E_PARA.
  {
    RootInfoView root = make_root();
    run_threads(2, [&](uint32_t rank) {
      Bootstrap *bs = nullptr;
      if (hccl::bootstrap_connect(root, 2, rank, &bs) != HCCL_SUCCESS) return false;
      uint8_t mine[16] = {}, all[32];
      HcclResult r = hccl::bootstrap_allgather(bs, mine, rank == 0 ? 8 : 16, all);
      EXPECT(r == HCCL_E_PARA, "size mismatch: rank %u got %d", rank, r);
      EXPECT(contains(hostrt::last_error(), "size mismatch"), "size mismatch message");
      hccl::bootstrap_close(bs);
      return true;
    });
  }
  // Closing while another rank waits in an allgather fails that rank fast.
  {
    RootInfoView root = make_root();
    run_threads(2, [&](uint32_t rank) {
      Bootstrap *bs = nullptr;
      if (hccl::bootstrap_connect(root, 2, rank, &bs) != HCCL_SUCCESS) return false;
      if (rank == 1) {
        hccl::bootstrap_close(bs);
        return true;
      }
      auto start = Clock::now();
      HcclResult r = hccl::bootstrap_allgather(bs, nullptr, 0, nullptr);
      EXPECT(r == HCCL_E_REMOTE, "allgather after peer closed: got %d", r);
      EXPECT(secs_since(start) < bound(5), "allgather after peer closed failed only after %.1f s", secs_since(start));
      hccl::bootstrap_close(bs);
      return true;
    });
  }
  unsetenv("HCCL_CONNECT_TIMEOUT");
}

static void test_arguments() {
  char blob[HCCL_ROOT_INFO_BYTES] = {};
  RootInfoView v{};
  EXPECT(hccl::root_info_parse(blob, &v) == HCCL_E_PARA, "zero blob accepted");
  EXPECT(hccl::root_info_parse(nullptr, &v) == HCCL_E_PTR, "null blob accepted");
  EXPECT(contains(hostrt::last_error(), "HcclCommInitRootInfo: "), "default api prefix missing");
  EXPECT(hccl::root_info_parse(blob, &v, "HcclCommInitRootInfoConfig") == HCCL_E_PARA,
        "zero blob accepted (api overload)");
  EXPECT(contains(hostrt::last_error(), "HcclCommInitRootInfoConfig: "), "api prefix missing");
  EXPECT(hccl::root_info_create(nullptr, sizeof(blob)) == HCCL_E_PTR, "null out blob accepted");
  EXPECT(hccl::root_info_create(blob, 16) == HCCL_E_PARA, "short out blob accepted");
  RootInfoView root = make_root();
  Bootstrap *bs = nullptr;
  EXPECT(hccl::bootstrap_connect(root, 4, 4, &bs) == HCCL_E_PARA, "rank == nranks accepted");
  EXPECT(hccl::bootstrap_connect(root, 0, 0, &bs) == HCCL_E_PARA, "nranks 0 accepted");
  EXPECT(hccl::job_id_hex(root).size() == 32, "job id hex length");
  hccl::bootstrap_close(nullptr);
  hccl::bootstrap_abort(nullptr);

  // Nothing listens: E_TCP_CONNECT after HCCL_CONNECT_TIMEOUT of retries.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
  getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
  close(fd);
  RootInfoView dead = root;
  std::snprintf(dead.host, sizeof(dead.host), "127.0.0.1");
  dead.port = ntohs(sa.sin_port);
  setenv("HCCL_CONNECT_TIMEOUT", "1", 1);
  auto start = Clock::now();
  HcclResult r = hccl::bootstrap_connect(dead, 2, 0, &bs, "HcclCommInitRootInfoConfig");
  EXPECT(r == HCCL_E_TCP_CONNECT, "dead root: got %d", r);
  EXPECT(contains(hostrt::last_error(), "HcclCommInitRootInfoConfig: "), "api prefix missing");
  EXPECT(secs_since(start) > 0.8 && secs_since(start) < bound(6), "dead root: gave up after %.1f s", secs_since(start));

  setenv("HCCL_CONNECT_TIMEOUT", "abc", 1);
  EXPECT(hccl::connect_timeout_s() == 120, "invalid HCCL_CONNECT_TIMEOUT not defaulted");
  setenv("HCCL_CONNECT_TIMEOUT", "7", 1);
  EXPECT(hccl::connect_timeout_s() == 7, "HCCL_CONNECT_TIMEOUT=7 not read");
  unsetenv("HCCL_CONNECT_TIMEOUT");
  EXPECT(hccl::connect_timeout_s() == 120 && hccl::exec_timeout_s() == 1836, "timeout defaults");

  // HCCL_IF_IP and HCCL_IF_BASE_PORT choose where the root listens.
  setenv("HCCL_IF_IP", "127.0.0.1", 1);
  RootInfoView lo = make_root();
  EXPECT(std::strcmp(lo.host, "127.0.0.1") == 0, "HCCL_IF_IP ignored: %s", lo.host);
  int base = ntohs(sa.sin_port);
  std::string base_s = std::to_string(base);
  setenv("HCCL_IF_BASE_PORT", base_s.c_str(), 1);
  RootInfoView p1 = make_root(), p2 = make_root();
  EXPECT(p1.port >= base && p2.port >= base && p1.port != p2.port && p2.port < base + 64,
        "base port %d gave %u and %u", base, p1.port, p2.port);
  run_threads(2, [&](uint32_t q) { return rank_rounds(p2, 2, q); });
  setenv("HCCL_IF_IP", "not-an-ip", 1);
  EXPECT(hccl::root_info_create(blob, sizeof(blob)) == HCCL_E_PARA, "bad HCCL_IF_IP accepted");
  unsetenv("HCCL_IF_IP");
  unsetenv("HCCL_IF_BASE_PORT");
}

int main() {
  alarm(240);  // last resort: a hang kills the test instead of the CI job
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  struct Step {
    const char *name;
    std::function<void()> fn;
  };
  std::vector<Step> steps = {
      {"arguments", test_arguments},
      {"threads 1/2/4/7", [] { for (uint32_t n : {1u, 2u, 4u, 7u}) test_rounds(n, false); }},
      {"fork 1/2/4/7", [] { for (uint32_t n : {1u, 2u, 4u, 7u}) test_rounds(n, true); }},
      {"concurrent jobs", test_concurrent_jobs},
      {"wrong secret", test_wrong_secret},
      {"replayed hello", test_replayed_hello},
      {"impostor root", test_impostor_root},
      {"bad joins", test_bad_joins},
      {"missing rank (threads)", [] { test_missing_rank(false); }},
      {"missing rank (fork)", [] { test_missing_rank(true); }},
      {"rank leaves (threads)", [] { test_rank_leaves(false); }},
      {"rank leaves (fork)", [] { test_rank_leaves(true); }},
  };
  for (auto &s : steps) {
    int before = g_fail.load();
    auto start = Clock::now();
    s.fn();
    std::printf("%-24s %s (%.2f s)\n", s.name, g_fail.load() == before ? "ok" : "FAILED", secs_since(start));
  }
  std::printf("bootstrap_check: %d checks, %d failed\n", g_checks.load(), g_fail.load());
  return g_fail.load() == 0 ? 0 : 1;
}
