// Building blocks of reduce(): element codecs (storage type <-> compute
// type), operators and the blocked left-to-right fold. Internal to reduce/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hccl/reduce/half.h"

#define HCCL_ALWAYS_INLINE inline __attribute__((always_inline))

namespace hccl {
namespace kern {

// ---- codecs: how an element is stored (S) and computed (A) ---------------

template <class T>
struct Native {
  using S = T;
  using A = T;
  static HCCL_ALWAYS_INLINE A load(S s) { return s; }
  static HCCL_ALWAYS_INLINE S store(A a) { return a; }
};

struct Fp16 {
  using S = uint16_t;
  using A = float;
  static HCCL_ALWAYS_INLINE A load(S s) { return fp16_to_float(s); }
  static HCCL_ALWAYS_INLINE S store(A a) { return float_to_fp16(a); }
};

struct Bf16 {
  using S = uint16_t;
  using A = float;
  static HCCL_ALWAYS_INLINE A load(S s) { return bf16_to_float(s); }
  static HCCL_ALWAYS_INLINE S store(A a) { return float_to_bf16(a); }
};

// ---- operators ------------------------------------------------------------

// Integers wrap around: the arithmetic is done in an unsigned type at least as
// wide as int, so there is neither signed overflow nor promotion to int.
template <class T, bool = std::is_integral<T>::value>
struct WideOf {
  using type = T;  // floating point: computed as is
};
template <class T>
struct WideOf<T, true> {
  using type = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
};
template <class T>
using Wide = typename WideOf<T>::type;

struct Sum {
  template <class T>
  static HCCL_ALWAYS_INLINE T apply(T a, T b) {
    return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
  }
};

struct Prod {
  template <class T>
  static HCCL_ALWAYS_INLINE T apply(T a, T b) {
    return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
  }
};

// Floats: NaN wins (a NaN a, else a NaN b); on a tie (+0 vs -0 too) the
// right operand is returned. `a != a` is the NaN test.
struct Max {
  template <class T>
  static HCCL_ALWAYS_INLINE T apply(T a, T b) {
    return (a > b || a != a) ? a : b;
  }
};

struct Min {
  template <class T>
  static HCCL_ALWAYS_INLINE T apply(T a, T b) {
    return (a < b || a != a) ? a : b;
  }
};

// ---- fold -----------------------------------------------------------------

// Elements per block: the fp32/fp64 accumulator (4-8 KiB) stays in L1.
constexpr size_t kBlock = 1024;

// Loops over __restrict pointers so g++ vectorises them. Each takes the
// pointers it writes and reads; callers never pass the same array twice
// unless the parameter is the in-place one.
template <class C, class Op>
HCCL_ALWAYS_INLINE void pair(typename C::S *__restrict out, const typename C::S *__restrict a,
                             const typename C::S *__restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = C::store(Op::apply(C::load(a[i]), C::load(b[i])));
}

// io = io op b
template <class C, class Op>
HCCL_ALWAYS_INLINE void pair_left(typename C::S *__restrict io, const typename C::S *__restrict b,
                                  size_t n) {
  for (size_t i = 0; i < n; ++i) io[i] = C::store(Op::apply(C::load(io[i]), C::load(b[i])));
}

// io = a op io
template <class C, class Op>
HCCL_ALWAYS_INLINE void pair_right(typename C::S *__restrict io, const typename C::S *__restrict a,
                                   size_t n) {
  for (size_t i = 0; i < n; ++i) io[i] = C::store(Op::apply(C::load(a[i]), C::load(io[i])));
}

template <class C, class Op>
HCCL_ALWAYS_INLINE void first(typename C::A *__restrict acc, const typename C::S *__restrict a,
                              const typename C::S *__restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] = Op::apply(C::load(a[i]), C::load(b[i]));
}

template <class C, class Op>
HCCL_ALWAYS_INLINE void middle(typename C::A *__restrict acc, const typename C::S *__restrict b,
                               size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] = Op::apply(acc[i], C::load(b[i]));
}

template <class C, class Op>
HCCL_ALWAYS_INLINE void last(typename C::S *__restrict out, const typename C::A *__restrict acc,
                             const typename C::S *__restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = C::store(Op::apply(acc[i], C::load(b[i])));
}

template <class C>
HCCL_ALWAYS_INLINE void store_block(typename C::S *__restrict out,
                                    const typename C::A *__restrict acc, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = C::store(acc[i]);
}

// dst = srcs[0] op srcs[1] op ... op srcs[n-1], strictly left to right, with
// one rounding per element (codec store) at the end. dst may equal any src:
// with three or more sources each block of every source is read into the
// accumulator before the block of dst is written.
template <class C, class Op>
HCCL_ALWAYS_INLINE void fold(void *dst_v, const void *const *srcs_v, int nsrcs, size_t count) {
  using S = typename C::S;
  using A = typename C::A;
  S *dst = static_cast<S *>(dst_v);
  const S *const *srcs = reinterpret_cast<const S *const *>(srcs_v);
  if (nsrcs == 1) {
    if (dst != srcs[0]) std::memmove(dst, srcs[0], count * sizeof(S));
    return;
  }
  if (nsrcs == 2) {
    const S *a = srcs[0];
    const S *b = srcs[1];
    if (dst != a && dst != b) {
      pair<C, Op>(dst, a, b, count);
      return;
    }
    if (dst == a && dst != b) {
      pair_left<C, Op>(dst, b, count);
      return;
    }
    if (dst == b && dst != a) {
      pair_right<C, Op>(dst, a, count);
      return;
    }
    // dst == a == b: fall through to the blocked path.
  }
  alignas(64) A acc[kBlock];
  const S *lastsrc = srcs[nsrcs - 1];
  for (size_t off = 0; off < count; off += kBlock) {
    const size_t n = count - off < kBlock ? count - off : kBlock;
    first<C, Op>(acc, srcs[0] + off, srcs[1] + off, n);
    if (nsrcs == 2) {
      store_block<C>(dst + off, acc, n);
      continue;
    }
    for (int k = 2; k < nsrcs - 1; ++k) middle<C, Op>(acc, srcs[k] + off, n);
    if (dst != lastsrc) {
      last<C, Op>(dst + off, acc, lastsrc + off, n);
    } else {
      middle<C, Op>(acc, lastsrc + off, n);
      store_block<C>(dst + off, acc, n);
    }
  }
}

}  // namespace kern
}  // namespace hccl
