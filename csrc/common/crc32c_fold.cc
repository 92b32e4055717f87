// CRC32C by folding with carry-less multiplication (PCLMULQDQ, VPCLMULQDQ).
//
// A CRC is the remainder of the message polynomial M(x)·x^32 modulo P, so
// any block of M may be replaced by one congruent to it mod P. A block of 16
// bytes loaded little-endian holds L·x^64 + H for its two qwords (L the
// earlier bytes; both bit-reflected, like the CRC register). Moving it d bytes
// later multiplies it by x^(8d), and
//   L·x^(8d+64) + H·x^(8d) ≡ L·(x^(8d+31) mod P)·x^33 + H·(x^(8d-33) mod P)·x^33;
// the carry-less product of a reflected qword and a reflected 32-bit constant
// read as a reflected 128-bit block carries exactly that factor x^33. So
// folding is two multiplications and an XOR into the block d bytes on, which
// independent lanes do in parallel. What is left, one 16-byte block, is
// reduced by running the crc32 instruction over it from a zero register.
#include "common/crc32c.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace common::crc32c_detail {
namespace {

// x^e mod P, reflected (bit 31 is x^0): e steps of the CRC register over a
// zero bit, starting from x^0.
constexpr uint64_t xpow(unsigned e) {
  uint32_t r = 0x80000000u;
  for (; e > 0; --e) r = r & 1 ? (r >> 1) ^ kPoly : r >> 1;
  return r;
}

// The two constants that fold a block d bytes on: low qword for L, high for H.
struct Fold {
  uint64_t lo, hi;
};
constexpr Fold fold_by(unsigned d) { return {xpow(8 * d + 31), xpow(8 * d - 33)}; }

constexpr Fold k16 = fold_by(16), k32 = fold_by(32), k48 = fold_by(48), k64 = fold_by(64),
               k128 = fold_by(128), k192 = fold_by(192), k256 = fold_by(256);
static_assert(k16.lo == 0xf20c0dfe && k16.hi == 0x493c7d27, "fold constants");

#define PCLMUL_TARGET __attribute__((target("pclmul,sse4.2")))
#define VPCLMUL_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))

PCLMUL_TARGET inline __m128i constants(Fold k) {
  return _mm_set_epi64x(static_cast<long long>(k.hi), static_cast<long long>(k.lo));
}

// `x` moved onto `next` (the block `k` bytes on).
PCLMUL_TARGET inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)),
                       next);
}

PCLMUL_TARGET inline __m128i load(const unsigned char *p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
}

// Folds the 16-byte blocks left in p[0, n) into `x`, reduces it and runs the
// last n % 16 bytes.
PCLMUL_TARGET inline uint32_t finish(__m128i x, const unsigned char *p, size_t n) {
  const __m128i k = constants(k16);
  for (; n >= 16; p += 16, n -= 16) x = fold(x, k, load(p));
  uint64_t reg = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(x)));
  reg = _mm_crc32_u64(reg, static_cast<uint64_t>(_mm_extract_epi64(x, 1)));
  return sse42(static_cast<uint32_t>(reg), p, n);
}

// Below these the crc32 instruction alone is as fast (measured on AMD EPYC):
// two rounds of the 128-bit lanes, one of the 512-bit ones.
constexpr size_t kPclmulMin = 128;
constexpr size_t kVpclmulMin = 256;

// Four 128-bit lanes, 64 bytes a round; n >= 64.
PCLMUL_TARGET inline uint32_t fold4x128(uint32_t reg, const unsigned char *p, size_t n) {
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(reg)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  n -= 64;
  const __m128i k = constants(k64);
  for (; n >= 64; p += 64, n -= 64) {
    x0 = fold(x0, k, load(p));
    x1 = fold(x1, k, load(p + 16));
    x2 = fold(x2, k, load(p + 32));
    x3 = fold(x3, k, load(p + 48));
  }
  __m128i x = fold(x0, constants(k48), x3);
  x = fold(x1, constants(k32), x);
  x = fold(x2, constants(k16), x);
  return finish(x, p, n);
}

}  // namespace

// 128-bit folding is slower than the crc32 instruction's three streams where
// PCLMULQDQ issues every other cycle (AMD's cores): those take the whole
// 12 KiB rounds, folding the rest, which one stream of crc32 would do at a
// third of the rate.
PCLMUL_TARGET uint32_t pclmul(uint32_t reg, const unsigned char *p, size_t n) {
  if (n >= kSse42Round) {
    const size_t done = sse42_rounds(reg, p, n);
    p += done;
    n -= done;
  }
  return n < kPclmulMin ? sse42(reg, p, n) : fold4x128(reg, p, n);
}

namespace {

VPCLMUL_TARGET inline __m512i fold512(__m512i x, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11),
                                   next, 0x96);  // a ^ b ^ c
}

// The maskz_ forms here and below: GCC 12's plain ones start from an
// "undefined" register that -Wmaybe-uninitialized reports.
VPCLMUL_TARGET inline __m512i constants512(Fold k) {
  return _mm512_maskz_broadcast_i32x4(0xffff, constants(k));
}

template <int I>
VPCLMUL_TARGET inline __m128i lane(__m512i z) {
  return _mm512_maskz_extracti32x4_epi32(0xf, z, I);
}

VPCLMUL_TARGET inline __m512i load512(const unsigned char *p) { return _mm512_loadu_si512(p); }

}  // namespace

VPCLMUL_TARGET uint32_t vpclmul(uint32_t reg, const unsigned char *p, size_t n) {
  if (n < kVpclmulMin) return n < kPclmulMin ? sse42(reg, p, n) : fold4x128(reg, p, n);
  __m512i z0 = _mm512_xor_si512(load512(p), _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(reg))));
  __m512i z1 = load512(p + 64), z2 = load512(p + 128), z3 = load512(p + 192);
  p += 256;
  n -= 256;
  const __m512i k = constants512(k256);
  for (; n >= 256; p += 256, n -= 256) {
    z0 = fold512(z0, k, load512(p));
    z1 = fold512(z1, k, load512(p + 64));
    z2 = fold512(z2, k, load512(p + 128));
    z3 = fold512(z3, k, load512(p + 192));
  }
  __m512i z = fold512(z0, constants512(k192), z3);
  z = fold512(z1, constants512(k128), z);
  z = fold512(z2, constants512(k64), z);
  const __m512i k1 = constants512(k64);
  for (; n >= 64; p += 64, n -= 64) z = fold512(z, k1, load512(p));
  // Its four blocks onto the last: 48, 32 and 16 bytes on (the last one's
  // constants are zero, and it is added back unmultiplied).
  const __m512i lanes = _mm512_set_epi64(0, 0, static_cast<long long>(k16.hi), static_cast<long long>(k16.lo),
                                         static_cast<long long>(k32.hi), static_cast<long long>(k32.lo),
                                         static_cast<long long>(k48.hi), static_cast<long long>(k48.lo));
  const __m512i m = fold512(z, lanes, _mm512_setzero_si512());
  const __m128i x = _mm_xor_si128(_mm_xor_si128(lane<0>(m), lane<1>(m)), _mm_xor_si128(lane<2>(m), lane<3>(z)));
  return finish(x, p, n);
}

#undef PCLMUL_TARGET
#undef VPCLMUL_TARGET

}  // namespace common::crc32c_detail
#endif
