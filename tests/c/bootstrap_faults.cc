// bootstrap_check's failure checks (part of bootstrap_check, see bootstrap_check.cc):
// a rank that never joins or leaves, bad joins, and bad arguments.
#include "bootstrap_check.h"

void test_missing_rank(bool forked) {
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
void test_rank_leaves(bool forked) {
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

void test_bad_joins() {
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

void test_arguments() {
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
