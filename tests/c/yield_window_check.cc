// Unit test of csrc/common/yield_window.h (how long a wait yields before it
// sleeps). Prints "yield_window ok".
#include "common/yield_window.h"

#include <cstdio>

namespace {

int failures = 0;

void expect(bool ok, const char *what, long long got) {
  if (!ok) {
    std::printf("FAIL %s (got %lld)\n", what, got);
    ++failures;
  }
}

}  // namespace

int main() {
  using common::YieldWindow;
  YieldWindow w;
  w.configure(50000);
  expect(w.ns() == 50000, "starts at the configured time", w.ns());
  for (int i = 0; i < 64; ++i) w.learn(300000);  // steps of 300 us (ranks sharing cores)
  expect(w.ns() > 550000 && w.ns() <= 600000, "stretches to twice short waits", w.ns());
  for (int i = 0; i < 64; ++i) w.learn(10000);  // fast again
  expect(w.ns() == 50000, "never below the configured time", w.ns());
  for (int i = 0; i < 64; ++i) w.learn(1500000);
  expect(w.ns() == YieldWindow::kMax, "at most kMax", w.ns());
  for (int i = 0; i < 64; ++i) w.learn(50000000);  // a peer late by 50 ms each time
  expect(w.ns() == 50000, "a late peer's waits: the configured time", w.ns());
  w.configure(0);
  for (int i = 0; i < 64; ++i) w.learn(300000);
  expect(w.ns() == 0 && w.max_ns() == 0, "PYHCCL_YIELD_US=0 never yields", w.ns());
  w.configure(5000000);
  for (int i = 0; i < 64; ++i) w.learn(100);
  expect(w.ns() == 5000000 && w.max_ns() == 5000000, "a configured time above kMax stays", w.ns());
  w.configure(50000, 200000);  // crowded cores, peers on other hosts (transport/waiter.cc)
  for (int i = 0; i < 64; ++i) w.learn(80000);
  expect(w.ns() > 150000 && w.ns() <= 160000, "stretches below a lower maximum", w.ns());
  for (int i = 0; i < 64; ++i) w.learn(150000);
  expect(w.ns() == 200000 && w.max_ns() == 200000, "at most the configured maximum", w.ns());
  for (int i = 0; i < 64; ++i) w.learn(1000000);  // a non-leader waits out its leader's steps
  expect(w.ns() == 50000, "waits longer than the maximum: the configured time", w.ns());
  if (failures == 0) std::printf("yield_window ok\n");
  return failures != 0;
}
