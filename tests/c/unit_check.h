// For the C++ unit checks (tests/c/*_check.cc): EXPECT counts a check in g_checks and a
// failure in g_fail, and prints where and why as one line (safe from any thread); main
// returns non-zero when g_fail is. A check may define EXPECT_CONTEXT() before including
// this, to add something to every failure's line (bootstrap_check.cc: the last error).
// Time bounds go through bound() (slowdown.h).
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "slowdown.h"

#ifndef EXPECT_CONTEXT
#define EXPECT_CONTEXT() ""
#endif

// inline: one pair per program, however many files it is built from.
inline std::atomic<int> g_fail{0};
inline std::atomic<int> g_checks{0};

__attribute__((format(printf, 4, 5))) static inline void expect_failed(const char *file, int line,
                                                                       const char *context,
                                                                       const char *fmt, ...) {
  char why[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "%s:%d: %s%s%s%s\n", file, line, why, *context ? " [" : "", context,
               *context ? "]" : "");
}

#define EXPECT(cond, ...)                                                \
  do {                                                                   \
    ++g_checks;                                                          \
    if (!(cond)) {                                                       \
      ++g_fail;                                                          \
      expect_failed(__FILE__, __LINE__, EXPECT_CONTEXT(), __VA_ARGS__);  \
    }                                                                    \
  } while (0)
