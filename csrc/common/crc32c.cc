#include "common/crc32c.h"

#include <cstring>

namespace common {
namespace {

constexpr uint32_t kPoly = 0x82f63b78;  // CRC32C, reflected

struct Tables {
  uint32_t byte[256];
  // shift[k][b]: the CRC state after the byte b is followed by kBlock zero
  // bytes; combines the three streams of the SSE4.2 path.
  uint32_t shift[4][256];
};

constexpr size_t kBlock = 4096;  // bytes per stream per round (SSE4.2 path)

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

uint32_t shift_block(const Tables &t, uint32_t crc) {
  return t.shift[0][crc & 0xff] ^ t.shift[1][(crc >> 8) & 0xff] ^ t.shift[2][(crc >> 16) & 0xff] ^
         t.shift[3][crc >> 24];
}

uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t n) {
  const uint32_t *byte = tables().byte;
  for (size_t i = 0; i < n; ++i) crc = byte[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc_sse42(uint32_t crc, const unsigned char *p, size_t n) {
  const Tables &t = tables();
  uint64_t c0 = crc;
  // Three streams of kBlock bytes each, then folded: c0 advanced over the
  // other two blocks, c1 over one.
  while (n >= 3 * kBlock) {
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
    p += 3 * kBlock;
    n -= 3 * kBlock;
  }
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t a;
    std::memcpy(&a, p, 8);
    c0 = __builtin_ia32_crc32di(c0, a);
  }
  uint32_t c = static_cast<uint32_t>(c0);
  for (; n > 0; ++p, --n) c = __builtin_ia32_crc32qi(c, *p);
  return c;
}

bool have_sse42() {
  static const bool yes = __builtin_cpu_supports("sse4.2");
  return yes;
}
#endif

}  // namespace

uint32_t crc32c(uint32_t crc, const void *data, size_t n) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  crc = ~crc;
#if defined(__x86_64__)
  if (have_sse42()) return ~crc_sse42(crc, p, n);
#endif
  return ~crc_table(crc, p, n);
}

uint32_t crc32c_portable(uint32_t crc, const void *data, size_t n) {
  return ~crc_table(~crc, static_cast<const unsigned char *>(data), n);
}

}  // namespace common
