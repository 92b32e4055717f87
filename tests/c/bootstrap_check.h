// What the files of bootstrap_check share (bootstrap_check.cc: main, the rank
// runners and the allgather rounds; bootstrap_secret.cc and bootstrap_faults.cc:
// the other checks): the includes, EXPECT (unit_check.h), the helpers, and the
// checks main runs.
#pragma once

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


// Every failed check also shows the runtime's last error.
#define EXPECT_CONTEXT() hostrt::last_error()
#include "unit_check.h"

using hccl::Bootstrap;
using hccl::RootInfoView;
using Clock = std::chrono::steady_clock;

inline double secs_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

inline bool contains(const char *s, const char *part) { return std::strstr(s, part) != nullptr; }

using RankFn = std::function<bool(uint32_t rank)>;

// bootstrap_check.cc
RootInfoView make_root();
// Runs fn(rank) for every rank on its own thread.
void run_threads(uint32_t n, const RankFn &fn);
// Runs fn(rank) in a fork()ed child per rank; the child's exit status is its
// verdict. A child still running after `limit_s` is killed and counted failed.
void run_forked(uint32_t n, const RankFn &fn, double limit_s = 60);
// Connects, runs allgather rounds of several sizes and checks every byte.
bool rank_rounds(const RootInfoView &root, uint32_t n, uint32_t rank);

// bootstrap_secret.cc
void test_wrong_secret();
void test_replayed_hello();
void test_impostor_root();

// bootstrap_faults.cc
void test_missing_rank(bool forked);
void test_rank_leaves(bool forked);
void test_bad_joins();
void test_arguments();
