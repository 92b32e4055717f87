// bootstrap_check's checks of the job secret (part of bootstrap_check, see
// bootstrap_check.cc): a wrong secret, a replayed hello, an impostor root, and
// that no byte on the wire holds the secret.
#include "bootstrap_check.h"
#include "relay.h"

void test_wrong_secret() {
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
void test_replayed_hello() {
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
void test_impostor_root() {
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
