// fp16 and bf16 fast paths. fp16: VCVTPH2PS / VCVTPS2PH convert 8 halves per
// instruction, where the portable bit-twiddling path needs ~20 operations;
// both round to nearest even and quiet NaNs the same way. bf16: the portable
// path's integer rounding, 8 lanes at a time. The results are bit-identical
// to the portable path (the tail of each block uses its conversions).
#include "hccl/reduce/reduce_f16c.h"

#include <cstdint>

#include "hccl/reduce/reduce_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define HCCL_F16C_TARGET __attribute__((target("avx2,f16c")))

namespace hccl {
namespace kern {
namespace {

// Vector forms of kern::Sum/Prod/Max/Min with the same NaN and tie rules.
struct VSum {
  using Scalar = Sum;
  static HCCL_F16C_TARGET inline __m256 apply(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
};
struct VProd {
  using Scalar = Prod;
  static HCCL_F16C_TARGET inline __m256 apply(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
};
struct VMax {
  using Scalar = Max;
  static HCCL_F16C_TARGET inline __m256 apply(__m256 a, __m256 b) {
    const __m256 take_a = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    return _mm256_blendv_ps(b, a, take_a);
  }
};
struct VMin {
  using Scalar = Min;
  static HCCL_F16C_TARGET inline __m256 apply(__m256 a, __m256 b) {
    const __m256 take_a = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    return _mm256_blendv_ps(b, a, take_a);
  }
};

// 16 elements of a 16-bit float type to two vectors of fp32 lanes and back,
// and one element. The lanes may hold the elements in any order that store16
// undoes (bf16: the order unpacking within 128-bit lanes gives).
struct VFp16 {
  static HCCL_F16C_TARGET inline void load16(const uint16_t *p, __m256 *lo, __m256 *hi) {
    *lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    *hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 8)));
  }
  static HCCL_F16C_TARGET inline void store16(uint16_t *p, __m256 lo, __m256 hi) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p + 8), _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT));
  }
  static float load(uint16_t h) { return fp16_to_float(h); }
  static uint16_t store(float f) { return float_to_fp16(f); }
};

struct VBf16 {
  // bf16 is the top half of an fp32: interleaving with zeros converts exactly.
  static HCCL_F16C_TARGET inline void load16(const uint16_t *p, __m256 *lo, __m256 *hi) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
    const __m256i z = _mm256_setzero_si256();
    *lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, v));
    *hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, v));
  }
  // float_to_bf16 (half.h) per lane: round to nearest even, NaN -> quiet NaN.
  static HCCL_F16C_TARGET inline __m256i round(__m256 v) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), odd), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x0040));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(rounded, nan, is_nan);
  }
  // Lanes hold values below 2^16; packing within 128-bit lanes undoes load16's order.
  static HCCL_F16C_TARGET inline void store16(uint16_t *p, __m256 lo, __m256 hi) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), _mm256_packus_epi32(round(lo), round(hi)));
  }
  static float load(uint16_t h) { return bf16_to_float(h); }
  static uint16_t store(float f) { return float_to_bf16(f); }
};

template <class T, class V>
HCCL_F16C_TARGET void fold(uint16_t *dst, const uint16_t *const *srcs, int nsrcs, size_t count) {
  using S = typename V::Scalar;
  __m256 a0, a1, b0, b1;
  if (nsrcs == 2) {  // element by element: dst may be either source
    const uint16_t *a = srcs[0], *b = srcs[1];
    const size_t nv = count & ~size_t{15};
    for (size_t i = 0; i < nv; i += 16) {
      T::load16(a + i, &a0, &a1);
      T::load16(b + i, &b0, &b1);
      T::store16(dst + i, V::apply(a0, b0), V::apply(a1, b1));
    }
    for (size_t i = nv; i < count; ++i) dst[i] = T::store(S::apply(T::load(a[i]), T::load(b[i])));
    return;
  }
  alignas(32) float acc[kBlock];
  for (size_t off = 0; off < count; off += kBlock) {
    const size_t n = count - off < kBlock ? count - off : kBlock;
    const size_t nv = n & ~size_t{15};
    // Every source block is read into acc before dst's block is written, so
    // dst may equal any source.
    const uint16_t *a = srcs[0] + off;
    const uint16_t *b = srcs[1] + off;
    for (size_t i = 0; i < nv; i += 16) {
      T::load16(a + i, &a0, &a1);
      T::load16(b + i, &b0, &b1);
      _mm256_store_ps(acc + i, V::apply(a0, b0));
      _mm256_store_ps(acc + i + 8, V::apply(a1, b1));
    }
    for (size_t i = nv; i < n; ++i) acc[i] = S::apply(T::load(a[i]), T::load(b[i]));
    for (int k = 2; k < nsrcs; ++k) {
      const uint16_t *c = srcs[k] + off;
      for (size_t i = 0; i < nv; i += 16) {
        T::load16(c + i, &b0, &b1);
        _mm256_store_ps(acc + i, V::apply(_mm256_load_ps(acc + i), b0));
        _mm256_store_ps(acc + i + 8, V::apply(_mm256_load_ps(acc + i + 8), b1));
      }
      for (size_t i = nv; i < n; ++i) acc[i] = S::apply(acc[i], T::load(c[i]));
    }
    uint16_t *d = dst + off;
    for (size_t i = 0; i < nv; i += 16) T::store16(d + i, _mm256_load_ps(acc + i), _mm256_load_ps(acc + i + 8));
    for (size_t i = nv; i < n; ++i) d[i] = T::store(acc[i]);
  }
}

}  // namespace

bool have_f16c() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return ok;
}

template <class T>
void fold_half(HcclReduceOp op, void *dst, const void *const *srcs, int nsrcs, size_t count) {
  uint16_t *d = static_cast<uint16_t *>(dst);
  const uint16_t *const *s = reinterpret_cast<const uint16_t *const *>(srcs);
  switch (op) {
    case HCCL_REDUCE_SUM: fold<T, VSum>(d, s, nsrcs, count); break;
    case HCCL_REDUCE_PROD: fold<T, VProd>(d, s, nsrcs, count); break;
    case HCCL_REDUCE_MAX: fold<T, VMax>(d, s, nsrcs, count); break;
    case HCCL_REDUCE_MIN: fold<T, VMin>(d, s, nsrcs, count); break;
    default: break;
  }
}

void fold_half_avx2(HcclDataType dt, HcclReduceOp op, void *dst, const void *const *srcs, int nsrcs,
                    size_t count) {
  if (dt == HCCL_DATA_TYPE_FP16)
    fold_half<VFp16>(op, dst, srcs, nsrcs, count);
  else
    fold_half<VBf16>(op, dst, srcs, nsrcs, count);
}

}  // namespace kern
}  // namespace hccl

#else  // not x86-64 GCC: the portable path only

namespace hccl {
namespace kern {
bool have_f16c() { return false; }
void fold_half_avx2(HcclDataType, HcclReduceOp, void *, const void *const *, int, size_t) {}
}  // namespace kern
}  // namespace hccl

#endif
