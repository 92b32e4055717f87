// fp16 fast path: VCVTPH2PS / VCVTPS2PH convert 8 halves per instruction,
// where the portable bit-twiddling path needs ~20 operations. Both round to
// nearest even and quiet NaNs the same way, so the results are bit-identical
// (the tail of each block uses the portable conversions).
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

HCCL_F16C_TARGET inline __m256 load8(const uint16_t *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

template <class V>
HCCL_F16C_TARGET void fold(uint16_t *dst, const uint16_t *const *srcs, int nsrcs, size_t count) {
  using S = typename V::Scalar;
  alignas(32) float acc[kBlock];
  for (size_t off = 0; off < count; off += kBlock) {
    const size_t n = count - off < kBlock ? count - off : kBlock;
    const size_t nv = n & ~size_t{7};
    // Every source block is read into acc before dst's block is written, so
    // dst may equal any source.
    const uint16_t *a = srcs[0] + off;
    const uint16_t *b = srcs[1] + off;
    for (size_t i = 0; i < nv; i += 8) _mm256_store_ps(acc + i, V::apply(load8(a + i), load8(b + i)));
    for (size_t i = nv; i < n; ++i) acc[i] = S::apply(fp16_to_float(a[i]), fp16_to_float(b[i]));
    for (int k = 2; k < nsrcs; ++k) {
      const uint16_t *c = srcs[k] + off;
      for (size_t i = 0; i < nv; i += 8) _mm256_store_ps(acc + i, V::apply(_mm256_load_ps(acc + i), load8(c + i)));
      for (size_t i = nv; i < n; ++i) acc[i] = S::apply(acc[i], fp16_to_float(c[i]));
    }
    uint16_t *d = dst + off;
    for (size_t i = 0; i < nv; i += 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i),
                       _mm256_cvtps_ph(_mm256_load_ps(acc + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (size_t i = nv; i < n; ++i) d[i] = float_to_fp16(acc[i]);
  }
}

}  // namespace

bool have_f16c() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return ok;
}

void fold_fp16_f16c(HcclReduceOp op, void *dst, const void *const *srcs, int nsrcs, size_t count) {
  uint16_t *d = static_cast<uint16_t *>(dst);
  const uint16_t *const *s = reinterpret_cast<const uint16_t *const *>(srcs);
  switch (op) {
    case HCCL_REDUCE_SUM: fold<VSum>(d, s, nsrcs, count); break;
    case HCCL_REDUCE_PROD: fold<VProd>(d, s, nsrcs, count); break;
    case HCCL_REDUCE_MAX: fold<VMax>(d, s, nsrcs, count); break;
    case HCCL_REDUCE_MIN: fold<VMin>(d, s, nsrcs, count); break;
    default: break;
  }
}

}  // namespace kern
}  // namespace hccl

#else  // not x86-64 GCC: the portable path only

namespace hccl {
namespace kern {
bool have_f16c() { return false; }
void fold_fp16_f16c(HcclReduceOp, void *, const void *const *, int, size_t) {}
}  // namespace kern
}  // namespace hccl

#endif
