// Unit test of csrc/common/crc32c: the published check value, then every path
// (vpclmul, mixed, pclmul, sse4.2, table; those this CPU lacks are reported skipped)
// against a bit-by-bit reference: every length to 600, lengths around the
// paths' rounds and blocks, large ones, starts 1..63 bytes past a 64-byte
// boundary, and CRCs continued across splits (within a path and from one path
// to another). Prints "crc32c ok"; with --bench, each path's rate.
// Build: g++ -std=c++17 -O2 -I csrc tests/c/crc32c_check.cc csrc/common/crc32c.cc csrc/common/crc32c_fold.cc
#include "common/crc32c.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

using common::Crc32cPath;

// The bit-by-bit register (not inverted) after p[0, n), from `reg`.
uint32_t reference(uint32_t reg, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    reg ^= p[i];
    for (int k = 0; k < 8; ++k) reg = reg & 1 ? (reg >> 1) ^ 0x82f63b78 : reg >> 1;
  }
  return reg;
}

std::vector<Crc32cPath> supported_paths() {
  std::vector<Crc32cPath> paths;
  for (int i = 0; i < common::kCrc32cPaths; ++i) {
    const auto path = static_cast<Crc32cPath>(i);
    if (common::crc32c_path_supported(path))
      paths.push_back(path);
    else
      std::printf("crc32c: %s skipped (not on this CPU or build)\n", common::crc32c_path_name(path));
  }
  return paths;
}

struct Checker {
  std::vector<Crc32cPath> paths;
  int failures = 0;

  void expect(const char *what, Crc32cPath path, size_t offset, size_t n, uint32_t got, uint32_t want) {
    if (got == want) return;
    if (++failures <= 20)
      std::printf("FAIL %s %s offset=%zu n=%zu: want %08x got %08x\n", what, common::crc32c_path_name(path),
                  offset, n, want, got);
  }

  // Every path over p[0, n) for each n in `lengths`, with the reference from
  // one pass over p (prefix[n]: the CRC of the first n bytes).
  void lengths(const unsigned char *p, size_t offset, const std::vector<size_t> &lengths) {
    const size_t max = *std::max_element(lengths.begin(), lengths.end());
    std::vector<uint32_t> prefix(max + 1);
    uint32_t reg = ~0u;
    prefix[0] = 0;
    for (size_t i = 0; i < max; ++i) prefix[i + 1] = ~(reg = reference(reg, p + i, 1));
    for (size_t n : lengths)
      for (Crc32cPath path : paths) expect("length", path, offset, n, common::crc32c_path(path, 0, p, n), prefix[n]);
  }

  // p[0, n) in two parts at each cut, the second on each path in turn.
  void splits(const unsigned char *p, size_t n, const std::vector<size_t> &cuts) {
    const uint32_t want = ~reference(~0u, p, n);
    for (size_t cut : cuts)
      for (Crc32cPath first : paths)
        for (Crc32cPath second : paths) {
          const uint32_t head = common::crc32c_path(first, 0, p, cut);
          expect("split", second, cut, n, common::crc32c_path(second, head, p + cut, n - cut), want);
        }
  }
};

// Lengths around the paths' rounds (16, 64, 256 bytes) and the SSE4.2 path's
// blocks (4096 bytes, three of them a round).
std::vector<size_t> boundary_lengths() {
  std::vector<size_t> out;
  for (size_t b : {64ul, 128ul, 256ul, 512ul, 1024ul, 4032ul, 4096ul, 8064ul, 8192ul, 12288ul, 24576ul, 36864ul})
    for (size_t n = b - 17; n <= b + 17; ++n) out.push_back(n);
  return out;
}

double rate(Crc32cPath path, const unsigned char *p, size_t n) {
  double best = 0;
  uint32_t sink = 0;
  for (int trial = 0; trial < 3; ++trial) {
    size_t bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double s = 0;
    do {  // a MiB between clock reads, so small sizes time the CRC, not the clock
      for (size_t i = 0; i < std::max<size_t>(1, (1 << 20) / n); ++i, bytes += n)
        sink = common::crc32c_path(path, sink, p, n);
      s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (s < 0.03);
    best = std::max(best, bytes / s / 1e9);
  }
  if (sink == 0x12345678) std::printf(" ");  // keeps the loop
  return best;
}

void bench(const std::vector<Crc32cPath> &paths) {
  std::vector<unsigned char> big(64 << 20);
  std::mt19937 rng(1);
  for (auto &b : big) b = static_cast<unsigned char>(rng());
  std::printf("crc32c GB/s, one core   256 B    1 KiB    4 KiB   64 KiB    1 MiB   16 MiB   64 MiB\n");
  for (Crc32cPath path : paths) {
    std::printf("  %-22s", common::crc32c_path_name(path));
    for (size_t n : {256ul, 1ul << 10, 4ul << 10, 64ul << 10, 1ul << 20, 16ul << 20, 64ul << 20})
      std::printf(" %8.1f", rate(path, big.data(), n));
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char **argv) {
  Checker c;
  c.paths = supported_paths();
  const uint32_t check = common::crc32c(0, "123456789", 9);
  if (check != 0xe3069283u) {
    std::printf("FAIL check value %08x\n", check);
    ++c.failures;
  }
  std::mt19937 rng(7);
  std::vector<unsigned char> v((1 << 20) + 4096);
  for (auto &b : v) b = static_cast<unsigned char>(rng());
  unsigned char *base = v.data() + (64 - reinterpret_cast<uintptr_t>(v.data()) % 64);

  std::vector<size_t> all;
  for (size_t n = 0; n <= 600; ++n) all.push_back(n);
  const std::vector<size_t> near = boundary_lengths();
  all.insert(all.end(), near.begin(), near.end());
  all.push_back(5 * 12288 + 333);
  c.lengths(base, 0, all);
  for (size_t offset = 1; offset < 64; ++offset)
    c.lengths(base + offset, offset, {1, 15, 16, 17, 63, 64, 65, 127, 255, 256, 257, 300, 511, 512, 600, 4113,
                                      12293, 36881});
  for (size_t offset : {0ul, 1ul, 37ul}) c.lengths(base + offset, offset, {(1ul << 20) - 1});
  c.splits(base + 3, 40000, {0, 1, 7, 15, 16, 63, 64, 255, 256, 257, 4096, 12288, 13333, 39999, 40000});

  if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) bench(c.paths);
  for (Crc32cPath path : c.paths) std::printf("crc32c: %s checked\n", common::crc32c_path_name(path));
  if (c.failures == 0) std::printf("crc32c ok\n");
  return c.failures != 0;
}
