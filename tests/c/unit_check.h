// For the C++ unit checks (tests/c/*_check.cc): EXPECT counts a failure in
// g_fail (safe from any thread) and prints where and why; main returns
// non-zero when g_fail is.
#pragma once

#include <atomic>
#include <cstdio>

static std::atomic<int> g_fail{0};

#define EXPECT(cond, ...)                                   \
  do {                                                      \
    if (!(cond)) {                                          \
      ++g_fail;                                             \
      std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);  \
      std::fprintf(stderr, __VA_ARGS__);                    \
      std::fprintf(stderr, "\n");                           \
    }                                                       \
  } while (0)
