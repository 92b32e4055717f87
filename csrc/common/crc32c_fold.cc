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

#include <cstring>

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

constexpr Fold k16 = fold_by(16), k32 = fold_by(32), k48 = fold_by(48), k64 = fold_by(64), k96 = fold_by(96),
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

// One 16-byte block as a CRC register: the crc32 instruction over it from zero.
PCLMUL_TARGET inline uint32_t reduce(__m128i x) {
  const uint64_t reg = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(x)));
  return static_cast<uint32_t>(_mm_crc32_u64(reg, static_cast<uint64_t>(_mm_extract_epi64(x, 1))));
}

// Folds the 16-byte blocks left in p[0, n) into `x`, reduces it and runs the
// last n % 16 bytes.
PCLMUL_TARGET inline uint32_t finish(__m128i x, const unsigned char *p, size_t n) {
  const __m128i k = constants(k16);
  for (; n >= 16; p += 16, n -= 16) x = fold(x, k, load(p));
  return sse42(reduce(x), p, n);
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

// What the wider paths leave below their rounds: the 128-bit lanes from
// kPclmulMin, the crc32 instruction below that.
PCLMUL_TARGET inline uint32_t rest128(uint32_t reg, const unsigned char *p, size_t n) {
  return n < kPclmulMin ? sse42(reg, p, n) : fold4x128(reg, p, n);
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
  return rest128(reg, p, n);
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
  if (n < kVpclmulMin) return rest128(reg, p, n);
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

// The mixed path, for cores with 256-bit VPCLMULQDQ but no AVX-512 (AMD's
// Zen 3). Such a core runs the crc32 instruction (integer side) and the
// carry-less multiplications (vector side) on different units. So each round
// folds its first part with 256-bit registers and runs three crc32 streams on
// the rest, both in one loop, and joins the parts by linearity: a register
// run from zero over a part and then advanced over the bytes after it (a
// multiplication by x^(8d) mod P, as in folding) adds up to the CRC of the
// whole. Each pass of the loop folds 96 bytes while each stream takes 24: 39
// GB/s at 64 KiB where either alone runs 23-25 (with streams taking 32 bytes a
// pass, 28; 16, 34). Rounds of about 4 KiB keep pieces of a few KiB on it.
namespace {

#define MIXED_TARGET __attribute__((target("avx2,vpclmulqdq,pclmul,sse4.2")))

constexpr size_t kStreamStep = 24;                     // bytes per stream per pass
constexpr size_t kPasses = 24;                         // passes per round
constexpr size_t kFolded = 96 * kPasses;               // the round's folded part, first
constexpr size_t kStream = kStreamStep * kPasses;      // then three streams of this
constexpr size_t kMixedRound = kFolded + 3 * kStream;  // 4032 bytes
constexpr size_t kFold4x256Min = 256;                  // below, the 128-bit lanes

// A 32-bit register advanced over d bytes, as a 64-bit value whose crc32 from
// zero is the result: its product with x^(8d-33) mod P (like a fold's H).
constexpr uint64_t advance_by(size_t d) { return xpow(static_cast<unsigned>(8 * d - 33)); }
constexpr uint64_t kAdv1 = advance_by(kStream), kAdv2 = advance_by(2 * kStream),
                   kAdv3 = advance_by(3 * kStream), kAdvRound = advance_by(kMixedRound);

MIXED_TARGET inline __m128i advance(uint64_t reg, uint64_t k) {
  return _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(reg)),
                              _mm_cvtsi64_si128(static_cast<long long>(k)), 0x00);
}

MIXED_TARGET inline __m256i fold256(__m256i x, __m256i k, __m256i next) {
  return _mm256_xor_si256(
      _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00), _mm256_clmulepi64_epi128(x, k, 0x11)), next);
}

MIXED_TARGET inline __m256i constants256(Fold k) { return _mm256_broadcastsi128_si256(constants(k)); }

MIXED_TARGET inline __m256i load256(const unsigned char *p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
}

// A register's two 16-byte blocks as one block (the first folded onto the second).
MIXED_TARGET inline __m128i halves(__m256i y) {
  return fold(_mm256_castsi256_si128(y), constants(k16), _mm256_extracti128_si256(y, 1));
}

// Four 256-bit lanes, 128 bytes a round; n >= 128.
MIXED_TARGET inline uint32_t fold4x256(uint32_t reg, const unsigned char *p, size_t n) {
  __m256i y0 = _mm256_xor_si256(load256(p), _mm256_set_epi64x(0, 0, 0, static_cast<long long>(reg)));
  __m256i y1 = load256(p + 32), y2 = load256(p + 64), y3 = load256(p + 96);
  p += 128;
  n -= 128;
  const __m256i k = constants256(k128);
  for (; n >= 128; p += 128, n -= 128) {
    y0 = fold256(y0, k, load256(p));
    y1 = fold256(y1, k, load256(p + 32));
    y2 = fold256(y2, k, load256(p + 64));
    y3 = fold256(y3, k, load256(p + 96));
  }
  __m256i y = fold256(y0, constants256(k96), y3);
  y = fold256(y1, constants256(k64), y);
  y = fold256(y2, constants256(k32), y);
  return finish(halves(y), p, n);
}

MIXED_TARGET inline void crc32_step(uint64_t &c, const unsigned char *p) {
  for (size_t i = 0; i < kStreamStep; i += 8) {
    uint64_t q;
    std::memcpy(&q, p + i, 8);
    c = _mm_crc32_u64(c, q);
  }
}

// One round from a zero register, advanced over the bytes after it and added
// to `reg` advanced over the round.
MIXED_TARGET inline uint32_t mixed_round(uint32_t reg, const unsigned char *p) {
  const unsigned char *s = p + kFolded;  // the streams' parts
  __m256i y0 = load256(p), y1 = load256(p + 32), y2 = load256(p + 64);
  uint64_t c0 = 0, c1 = 0, c2 = 0;
  const __m256i k = constants256(k96);
  size_t i = 0;
  for (const unsigned char *v = p + 96; i + kStreamStep < kStream; i += kStreamStep, v += 96) {
    y0 = fold256(y0, k, load256(v));
    y1 = fold256(y1, k, load256(v + 32));
    y2 = fold256(y2, k, load256(v + 64));
    crc32_step(c0, s + i);
    crc32_step(c1, s + kStream + i);
    crc32_step(c2, s + 2 * kStream + i);
  }
  crc32_step(c0, s + i);
  crc32_step(c1, s + kStream + i);
  crc32_step(c2, s + 2 * kStream + i);
  __m256i y = fold256(y0, constants256(k64), y2);
  y = fold256(y1, constants256(k32), y);
  const __m128i sum = _mm_xor_si128(_mm_xor_si128(advance(reg, kAdvRound), advance(reduce(halves(y)), kAdv3)),
                                    _mm_xor_si128(advance(c0, kAdv2), advance(c1, kAdv1)));
  return static_cast<uint32_t>(_mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(sum))) ^ c2);
}

}  // namespace

MIXED_TARGET uint32_t mixed(uint32_t reg, const unsigned char *p, size_t n) {
  for (; n >= kMixedRound; p += kMixedRound, n -= kMixedRound) reg = mixed_round(reg, p);
  return n >= kFold4x256Min ? fold4x256(reg, p, n) : rest128(reg, p, n);
}

#undef MIXED_TARGET
#undef PCLMUL_TARGET
#undef VPCLMUL_TARGET

}  // namespace common::crc32c_detail
#endif
