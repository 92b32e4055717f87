// Standalone check of the bootstrap (csrc/hccl/bootstrap): threads and fork()ed
// processes act as ranks. This file holds main, the rank runners and the
// allgather rounds; the other checks are in bootstrap_secret.cc and
// bootstrap_faults.cc, sharing bootstrap_check.h. Built by tests/c/test_c_bootstrap.py:
//   g++ -std=c++17 -O1 -pthread -I include -I csrc tests/c/bootstrap_check.cc
//       tests/c/bootstrap_secret.cc tests/c/bootstrap_faults.cc csrc/hccl/bootstrap/*.cc
//       csrc/hccl/net/*.cc csrc/common/sha256.cc csrc/common/hmac.cc -o bootstrap_check
// Prints one line per failed check and exits non-zero if any failed.
#include "bootstrap_check.h"
#include "hostrt_stub.h"  // once per program: here

RootInfoView make_root() {
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

void run_threads(uint32_t n, const RankFn &fn) {
  std::vector<std::thread> ts;
  for (uint32_t r = 0; r < n; ++r) ts.emplace_back([&fn, r] { fn(r); });
  for (auto &t : ts) t.join();
}

void run_forked(uint32_t n, const RankFn &fn, double limit_s) {
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

bool rank_rounds(const RootInfoView &root, uint32_t n, uint32_t rank) {
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
