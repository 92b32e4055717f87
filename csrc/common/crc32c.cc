// The table and SSE4.2 paths of crc32c() and the run-time choice among all
// four (the folding ones are in crc32c_fold.cc).
#include "common/crc32c.h"

#include <cstring>

namespace common {
namespace {

using crc32c_detail::kPoly;

struct Tables {
  uint32_t byte[256];
  // shift[k][b]: the CRC state after the byte b is followed by kBlock zero
  // bytes; combines the three streams of the SSE4.2 path.
  uint32_t shift[4][256];
};

constexpr size_t kBlock = crc32c_detail::kSse42Round / 3;  // bytes per stream per round

uint32_t zeros(const uint32_t *byte, uint32_t crc, size_t n) {
  for (size_t i = 0; i < n; ++i) crc = byte[crc & 0xff] ^ (crc >> 8);
  return crc;
}

Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ kPoly : c >> 1;
    t.byte[i] = c;
  }
  // Advancing a state over kBlock zero bytes is linear in the state: one
  // table per state byte.
  for (int k = 0; k < 4; ++k)
    for (uint32_t b = 0; b < 256; ++b) t.shift[k][b] = zeros(t.byte, b << (8 * k), kBlock);
  return t;
}

const Tables &tables() {
  static const Tables t = make_tables();
  return t;
}

[[maybe_unused]] uint32_t shift_block(const Tables &t, uint32_t crc) {  // x86 only
  return t.shift[0][crc & 0xff] ^ t.shift[1][(crc >> 8) & 0xff] ^ t.shift[2][(crc >> 16) & 0xff] ^
         t.shift[3][crc >> 24];
}

uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t n) {
  const uint32_t *byte = tables().byte;
  for (size_t i = 0; i < n; ++i) crc = byte[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) size_t crc32c_detail::sse42_rounds(uint32_t &reg, const unsigned char *p,
                                                                    size_t n) {
  const size_t rounds = n / (3 * kBlock);
  if (rounds == 0) return 0;
  const Tables &t = tables();
  uint64_t c0 = reg;
  // Three streams of kBlock bytes each, then folded: c0 advanced over the
  // other two blocks, c1 over one.
  for (size_t r = 0; r < rounds; ++r, p += 3 * kBlock) {
    uint64_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < kBlock; i += 8) {
      uint64_t a, b, c;
      std::memcpy(&a, p + i, 8);
      std::memcpy(&b, p + kBlock + i, 8);
      std::memcpy(&c, p + 2 * kBlock + i, 8);
      c0 = __builtin_ia32_crc32di(c0, a);
      c1 = __builtin_ia32_crc32di(c1, b);
      c2 = __builtin_ia32_crc32di(c2, c);
    }
    uint32_t s = shift_block(t, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    c0 = shift_block(t, s) ^ static_cast<uint32_t>(c2);
  }
  reg = static_cast<uint32_t>(c0);
  return rounds * 3 * kBlock;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_detail::sse42(uint32_t reg, const unsigned char *p,
                                                               size_t n) {
  const size_t done = sse42_rounds(reg, p, n);
  p += done;
  n -= done;
  // The rest in one stream, where each crc32 waits for the one before.
  uint64_t c0 = reg;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t a;
    std::memcpy(&a, p, 8);
    c0 = __builtin_ia32_crc32di(c0, a);
  }
  uint32_t c = static_cast<uint32_t>(c0);
  for (; n > 0; ++p, --n) c = __builtin_ia32_crc32qi(c, *p);
  return c;
}
#endif

namespace {

using PathFn = uint32_t (*)(uint32_t, const unsigned char *, size_t);

// The path's function, or null where this CPU or build lacks it.
PathFn path_fn(Crc32cPath path) {
  switch (path) {
#if defined(__x86_64__)
    case Crc32cPath::kVpclmul:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
                     __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2")
                 ? crc32c_detail::vpclmul
                 : nullptr;
    case Crc32cPath::kMixed:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq") &&
                     __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2")
                 ? crc32c_detail::mixed
                 : nullptr;
    case Crc32cPath::kPclmul:
      return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2")
                 ? crc32c_detail::pclmul
                 : nullptr;
    case Crc32cPath::kSse42:
      return __builtin_cpu_supports("sse4.2") ? crc32c_detail::sse42 : nullptr;
#else
    case Crc32cPath::kVpclmul:
    case Crc32cPath::kMixed:
    case Crc32cPath::kPclmul:
    case Crc32cPath::kSse42:
      return nullptr;
#endif
    case Crc32cPath::kTable:
      break;
  }
  return crc_table;
}

PathFn fastest() {
  for (int i = 0; i < kCrc32cPaths; ++i)
    if (PathFn fn = path_fn(static_cast<Crc32cPath>(i))) return fn;
  return crc_table;
}

}  // namespace

uint32_t crc32c(uint32_t crc, const void *data, size_t n) {
  static const PathFn fn = fastest();
  return ~fn(~crc, static_cast<const unsigned char *>(data), n);
}

const char *crc32c_path_name(Crc32cPath path) {
  static const char *const names[kCrc32cPaths] = {"vpclmul", "mixed", "pclmul", "sse4.2", "table"};
  return names[static_cast<int>(path)];
}

bool crc32c_path_supported(Crc32cPath path) { return path_fn(path) != nullptr; }

uint32_t crc32c_path(Crc32cPath path, uint32_t crc, const void *data, size_t n) {
  return ~path_fn(path)(~crc, static_cast<const unsigned char *>(data), n);
}

}  // namespace common
