// Reduction kernels (see reduce.h). The per-dtype/op kernels are the blocked
// fold of reduce_kernels.h, instantiated once per pair; on x86-64 each is
// cloned for AVX2 and picked at load time (the integer/fp32 bit-exact code
// gives identical results in every clone).
//
// No trapping math in this file: the fp16/bf16 conversions compute both arms
// of a select (one with a float op) and g++ only if-converts, and so
// vectorises, such loops when FP operations may not trap. Results are the
// same; only FP exception flags, which nothing reads, may differ.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "hccl/reduce/reduce.h"

#include <cstdint>
#include <cstdlib>

#include "hccl/reduce/reduce_f16c.h"
#include "hccl/reduce/reduce_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(HCCL_NO_CLONES)
#define HCCL_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define HCCL_KERNEL_CLONES
#endif

namespace hccl {
namespace {

using KernelFn = void (*)(void *, const void *const *, int, size_t);

#define HCCL_DEFINE_KERNELS(tag, codec)                                          \
  HCCL_KERNEL_CLONES void sum_##tag(void *d, const void *const *s, int n, size_t c) { \
    kern::fold<codec, kern::Sum>(d, s, n, c);                                      \
  }                                                                                \
  HCCL_KERNEL_CLONES void prod_##tag(void *d, const void *const *s, int n, size_t c) { \
    kern::fold<codec, kern::Prod>(d, s, n, c);                                     \
  }                                                                                \
  HCCL_KERNEL_CLONES void max_##tag(void *d, const void *const *s, int n, size_t c) { \
    kern::fold<codec, kern::Max>(d, s, n, c);                                      \
  }                                                                                \
  HCCL_KERNEL_CLONES void min_##tag(void *d, const void *const *s, int n, size_t c) { \
    kern::fold<codec, kern::Min>(d, s, n, c);                                      \
  }

HCCL_DEFINE_KERNELS(i8, kern::Native<int8_t>)
HCCL_DEFINE_KERNELS(i16, kern::Native<int16_t>)
HCCL_DEFINE_KERNELS(i32, kern::Native<int32_t>)
HCCL_DEFINE_KERNELS(i64, kern::Native<int64_t>)
HCCL_DEFINE_KERNELS(u8, kern::Native<uint8_t>)
HCCL_DEFINE_KERNELS(u16, kern::Native<uint16_t>)
HCCL_DEFINE_KERNELS(u32, kern::Native<uint32_t>)
HCCL_DEFINE_KERNELS(u64, kern::Native<uint64_t>)
HCCL_DEFINE_KERNELS(f16, kern::Fp16)
HCCL_DEFINE_KERNELS(bf16, kern::Bf16)
HCCL_DEFINE_KERNELS(f32, kern::Native<float>)
HCCL_DEFINE_KERNELS(f64, kern::Native<double>)

#undef HCCL_DEFINE_KERNELS

// Kernels for one dtype, indexed by HcclReduceOp (SUM, PROD, MAX, MIN).
struct KernelRow {
  KernelFn op[4];
};

#define HCCL_ROW(tag) \
  KernelRow { { sum_##tag, prod_##tag, max_##tag, min_##tag } }

// nullptr: dtype without reduction support.
const KernelRow *kernels_for(HcclDataType dt) {
  static const KernelRow i8 = HCCL_ROW(i8), i16 = HCCL_ROW(i16), i32 = HCCL_ROW(i32),
                         i64 = HCCL_ROW(i64), u8 = HCCL_ROW(u8), u16 = HCCL_ROW(u16),
                         u32 = HCCL_ROW(u32), u64 = HCCL_ROW(u64), f16 = HCCL_ROW(f16),
                         bf16 = HCCL_ROW(bf16), f32 = HCCL_ROW(f32), f64 = HCCL_ROW(f64);
  switch (dt) {
    case HCCL_DATA_TYPE_INT8: return &i8;
    case HCCL_DATA_TYPE_INT16: return &i16;
    case HCCL_DATA_TYPE_INT32: return &i32;
    case HCCL_DATA_TYPE_INT64: return &i64;
    case HCCL_DATA_TYPE_UINT8: return &u8;
    case HCCL_DATA_TYPE_UINT16: return &u16;
    case HCCL_DATA_TYPE_UINT32: return &u32;
    case HCCL_DATA_TYPE_UINT64: return &u64;
    case HCCL_DATA_TYPE_FP16: return &f16;
    case HCCL_DATA_TYPE_BFP16: return &bf16;
    case HCCL_DATA_TYPE_FP32: return &f32;
    case HCCL_DATA_TYPE_FP64: return &f64;
    default: return nullptr;
  }
}

#undef HCCL_ROW

bool op_index(HcclReduceOp op, int *index) {
  switch (op) {
    case HCCL_REDUCE_SUM: *index = 0; return true;
    case HCCL_REDUCE_PROD: *index = 1; return true;
    case HCCL_REDUCE_MAX: *index = 2; return true;
    case HCCL_REDUCE_MIN: *index = 3; return true;
    default: return false;
  }
}

// PYHCCL_REDUCE_PORTABLE=1 disables the AVX2 fp16/bf16 path (lets tests compare both).
bool portable_only() {
  static const bool v = [] {
    const char *e = std::getenv("PYHCCL_REDUCE_PORTABLE");
    return e != nullptr && e[0] == '1';
  }();
  return v;
}

}  // namespace

size_t dtype_size(HcclDataType dt) {
  switch (dt) {
    case HCCL_DATA_TYPE_INT8:
    case HCCL_DATA_TYPE_UINT8:
    case HCCL_DATA_TYPE_HIF8:
    case HCCL_DATA_TYPE_FP8E4M3:
    case HCCL_DATA_TYPE_FP8E5M2:
    case HCCL_DATA_TYPE_FP8E8M0: return 1;
    case HCCL_DATA_TYPE_INT16:
    case HCCL_DATA_TYPE_UINT16:
    case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32:
    case HCCL_DATA_TYPE_UINT32:
    case HCCL_DATA_TYPE_FP32: return 4;
    case HCCL_DATA_TYPE_INT64:
    case HCCL_DATA_TYPE_UINT64:
    case HCCL_DATA_TYPE_FP64: return 8;
    case HCCL_DATA_TYPE_INT128: return 16;
    default: return 0;
  }
}

const char *dtype_name(HcclDataType dt) {
  switch (dt) {
    case HCCL_DATA_TYPE_INT8: return "int8";
    case HCCL_DATA_TYPE_INT16: return "int16";
    case HCCL_DATA_TYPE_INT32: return "int32";
    case HCCL_DATA_TYPE_FP16: return "float16";
    case HCCL_DATA_TYPE_FP32: return "float32";
    case HCCL_DATA_TYPE_INT64: return "int64";
    case HCCL_DATA_TYPE_UINT64: return "uint64";
    case HCCL_DATA_TYPE_UINT8: return "uint8";
    case HCCL_DATA_TYPE_UINT16: return "uint16";
    case HCCL_DATA_TYPE_UINT32: return "uint32";
    case HCCL_DATA_TYPE_FP64: return "float64";
    case HCCL_DATA_TYPE_BFP16: return "bfloat16";
    case HCCL_DATA_TYPE_INT128: return "int128";
    case HCCL_DATA_TYPE_HIF8: return "hifloat8";
    case HCCL_DATA_TYPE_FP8E4M3: return "float8_e4m3";
    case HCCL_DATA_TYPE_FP8E5M2: return "float8_e5m2";
    case HCCL_DATA_TYPE_FP8E8M0: return "float8_e8m0";
    default: return "unknown";
  }
}

const char *op_name(HcclReduceOp op) {
  switch (op) {
    case HCCL_REDUCE_SUM: return "sum";
    case HCCL_REDUCE_PROD: return "prod";
    case HCCL_REDUCE_MAX: return "max";
    case HCCL_REDUCE_MIN: return "min";
    default: return "unknown";
  }
}

bool reduce_supported(HcclDataType dt, HcclReduceOp op) {
  int index;
  return kernels_for(dt) != nullptr && op_index(op, &index);
}

// Unsupported pairs, nsrcs < 1 and count 0 leave dst untouched (callers check
// reduce_supported first).
void reduce(HcclDataType dt, HcclReduceOp op, void *dst, const void *const *srcs, int nsrcs,
            size_t count) {
  const KernelRow *row = kernels_for(dt);
  int index;
  if (row == nullptr || !op_index(op, &index) || nsrcs < 1 || count == 0) return;
  if ((dt == HCCL_DATA_TYPE_FP16 || dt == HCCL_DATA_TYPE_BFP16) && nsrcs >= 2 && kern::have_f16c() &&
      !portable_only()) {
    kern::fold_half_avx2(dt, op, dst, srcs, nsrcs, count);
    return;
  }
  row->op[index](dst, srcs, nsrcs, count);
}

}  // namespace hccl
