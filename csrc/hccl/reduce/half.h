// fp16 / bf16 <-> fp32 conversions written with integer and plain fp32 ops
// only, so they need no F16C, vectorise under g++ -O3, give the same bits on
// every x86-64 (and any IEEE) CPU, and do not depend on FTZ/DAZ.
#pragma once

#include <cstdint>
#include <cstring>

namespace hccl {

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Exact. NaN payloads are kept (a signalling NaN stays signalling).
inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  // Normal: rebias the exponent from 15 to 127.
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  // Inf/NaN: all-ones exponent, mantissa moved up.
  const uint32_t special = (em << 13) | 0x7f800000u;
  // Zero/subnormal: mantissa * 2^-24, exact in fp32 and never denormal.
  const uint32_t sub = float_to_bits(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
  uint32_t r = em < 0x0400u ? sub : normal;
  r = em >= 0x7c00u ? special : r;
  return bits_to_float(r | sign);
}

// Round to nearest, ties to even; overflow -> Inf; NaN -> quiet NaN with the
// top payload bits kept.
inline uint16_t float_to_fp16(float f) {
  const uint32_t x = float_to_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  // |f| < 2^-14: adding 0.5 makes the FPU round to a multiple of 2^-24 (the
  // fp16 subnormal step); the low bits of the sum are the fp16 bits (this also
  // yields 0x0400 when the value rounds up to the smallest normal). An fp32
  // denormal read as zero under DAZ still gives the right answer, 0.
  const uint32_t sub = float_to_bits(bits_to_float(a) + 0.5f) - 0x3f000000u;
  // Normal: add the rounding bias below bit 13, then rebias the exponent; a
  // carry out of the mantissa correctly bumps the exponent.
  const uint32_t normal = (a + 0x0fffu + ((a >> 13) & 1u) - ((127u - 15u) << 23)) >> 13;
  uint32_t h = a < 0x38800000u ? sub : normal;
  h = a >= 0x477ff000u ? 0x7c00u : h;  // >= 65520 rounds to Inf
  h = a > 0x7f800000u ? (0x7e00u | ((a >> 13) & 0x03ffu)) : h;
  return static_cast<uint16_t>(h | sign);
}

// Exact.
inline float bf16_to_float(uint16_t b) { return bits_to_float(static_cast<uint32_t>(b) << 16); }

// Round to nearest, ties to even; NaN -> quiet NaN with the top payload bits.
inline uint16_t float_to_bf16(float f) {
  const uint32_t x = float_to_bits(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x0040u;
  return static_cast<uint16_t>(f != f ? nan : rounded);
}

}  // namespace hccl
