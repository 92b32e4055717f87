// Unit test of csrc/common/crc32c: the published check value, a bit-by-bit
// reference at lengths around the SSE4.2 path's blocks, both paths, and a
// CRC continued across splits. Prints "crc32c ok"; with --bench, the rate.
// Build: g++ -std=c++17 -O2 -I csrc tests/c/crc32c_check.cc csrc/common/crc32c.cc
#include "common/crc32c.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

uint32_t reference(const unsigned char *p, size_t n) {
  uint32_t c = ~0u;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
  }
  return ~c;
}

}  // namespace

int main(int argc, char **argv) {
  int failures = 0;
  if (common::crc32c(0, "123456789", 9) != 0xe3069283u) {
    std::printf("FAIL check value %08x\n", common::crc32c(0, "123456789", 9));
    ++failures;
  }
  std::mt19937 rng(7);
  std::vector<unsigned char> v(5 * 12288 + 333);
  for (auto &b : v) b = static_cast<unsigned char>(rng());
  for (size_t n : {0ul, 1ul, 7ul, 8ul, 9ul, 4095ul, 12287ul, 12288ul, 12289ul, 24576ul + 5,
                   v.size()}) {
    const uint32_t want = reference(v.data(), n);
    const uint32_t fast = common::crc32c(0, v.data(), n);
    const uint32_t portable = common::crc32c_portable(0, v.data(), n);
    size_t cut = n / 3;
    const uint32_t split = common::crc32c(common::crc32c(0, v.data(), cut), v.data() + cut, n - cut);
    if (fast != want || portable != want || split != want) {
      std::printf("FAIL n=%zu: want %08x fast %08x portable %08x split %08x\n", n, want, fast,
                  portable, split);
      ++failures;
    }
  }
  if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) {
    std::vector<unsigned char> big(64 << 20, 1);
    auto t0 = std::chrono::steady_clock::now();
    uint32_t c = 0;
    for (int r = 0; r < 10; ++r) c ^= common::crc32c(0, big.data(), big.size());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("crc32c: %.1f GB/s (%08x)\n", 10.0 * big.size() / s / 1e9, c);
  }
  if (failures == 0) std::printf("crc32c ok\n");
  return failures != 0;
}
