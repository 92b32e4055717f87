// Unit test of csrc/hccl/reduce: every dtype/op against a straightforward
// reference, all aliasing patterns, fp16/bf16 conversions against independent
// reference roundings. Prints "reduce ok". With --bench, also prints the
// throughput of fp32/fp16/bf16 sum at 1 MiB of output.
// Build: g++ -std=c++17 -O2 -I include -I csrc tests/c/reduce_check.cc csrc/hccl/reduce/*.cc
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "hccl/reduce/half.h"
#include "hccl/reduce/reduce.h"

namespace {

int g_failures = 0;

#define EXPECT(cond, ...)                       \
  do {                                          \
    if (!(cond)) {                              \
      if (++g_failures <= 30) {                 \
        std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
        std::printf(__VA_ARGS__);               \
        std::printf("\n");                      \
      }                                         \
    }                                           \
  } while (0)

// ---- reference conversions (independent of half.h) ------------------------

double fp16_value(uint16_t h) {  // finite or inf; NaN -> NAN
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? NAN : s * INFINITY;
  if (e == 0) return s * std::ldexp(m, -24);
  return s * std::ldexp(1024 + m, e - 25);
}

double bf16_value(uint16_t b) {
  const int e = (b >> 7) & 0xff;
  const int m = b & 0x7f;
  const double s = (b & 0x8000) ? -1.0 : 1.0;
  if (e == 255) return m ? NAN : s * INFINITY;
  if (e == 0) return s * std::ldexp(m, -133);
  return s * std::ldexp(128 + m, e - 134);
}

// Nearest of the non-negative encodings [0, max_finite]; max_finite + 1
// (Inf) counts as the next step up (inf_as); ties to the even encoding. NaN:
// quiet NaN (qnan) with the top payload bits (mant_mask after shift) kept.
template <class ValueFn>
uint16_t round_ref(float f, uint32_t max_finite, double inf_as, ValueFn value, uint32_t qnan,
                   int shift, uint32_t mant_mask) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  if (std::isnan(f)) return static_cast<uint16_t>(sign | qnan | ((x >> shift) & mant_mask));
  const double a = std::fabs(static_cast<double>(f));
  if (a >= inf_as) return static_cast<uint16_t>(sign | (max_finite + 1u));
  auto val = [&](uint32_t e) { return e == max_finite + 1u ? inf_as : value(static_cast<uint16_t>(e)); };
  // Binary search: val(lo) <= a < val(hi).
  uint32_t lo = 0, hi = max_finite + 1u;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (val(mid) <= a) lo = mid; else hi = mid;
  }
  const double dl = a - val(lo), dh = val(hi) - a;
  const uint32_t r = dl < dh ? lo : dh < dl ? hi : ((lo & 1) ? hi : lo);
  return static_cast<uint16_t>(sign | r);
}

uint16_t fp16_ref(float f) { return round_ref(f, 0x7bff, 65536.0, fp16_value, 0x7e00, 13, 0x3ff); }
uint16_t bf16_ref(float f) { return round_ref(f, 0x7f7f, std::ldexp(1.0, 128), bf16_value, 0x7fc0, 16, 0x7f); }

uint32_t fbits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float bitsf(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

void check_conversions() {
  // fp16/bf16 -> fp32: every encoding.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = hccl::fp16_to_float(static_cast<uint16_t>(h));
    const double r = fp16_value(static_cast<uint16_t>(h));
    if (std::isnan(r)) {
      EXPECT(std::isnan(f) && (fbits(f) >> 13 & 0x3ff) == (h & 0x3ff) && (fbits(f) >> 31) == (h >> 15),
             "fp16 NaN %04x -> %08x", h, fbits(f));
    } else {
      EXPECT(static_cast<double>(f) == r && std::signbit(f) == ((h & 0x8000) != 0),
             "fp16 %04x -> %a, want %a", h, f, r);
      EXPECT(hccl::float_to_fp16(f) == h, "fp16 round trip %04x", h);
    }
    const float b = hccl::bf16_to_float(static_cast<uint16_t>(h));
    const double rb = bf16_value(static_cast<uint16_t>(h));
    if (!std::isnan(rb)) {
      EXPECT(static_cast<double>(b) == rb, "bf16 %04x -> %a, want %a", h, b, rb);
      EXPECT(hccl::float_to_bf16(b) == h, "bf16 round trip %04x", h);
    }
  }
  // fp32 -> fp16/bf16: midpoints (ties) and their neighbours, specials, random.
  std::vector<float> probe = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 65504.0f, 65519.99f,
                              65520.0f, 65536.0f, 1e-8f, 2.9802322e-8f, 5.9604645e-8f, 6.1035156e-5f,
                              6.1e-5f, 1e-45f, 3.4e38f, bitsf(0x7f7fffff), bitsf(0x7f800001),
                              bitsf(0xffc12345), bitsf(0x00000001), bitsf(0x80400000)};
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double mid16 = (fp16_value(static_cast<uint16_t>(h)) + (h == 0x7bff ? 65536.0 : fp16_value(static_cast<uint16_t>(h + 1)))) / 2;
    const float m = static_cast<float>(mid16);
    probe.push_back(m);
    probe.push_back(-m);
    probe.push_back(std::nextafter(m, 0.0f));
    probe.push_back(std::nextafter(m, INFINITY));
  }
  for (uint32_t b = 0; b < 0x7f80; b += 7) {
    const uint32_t x = (b << 16) | 0x8000;  // bf16 tie
    probe.push_back(bitsf(x));
    probe.push_back(bitsf(x - 1));
    probe.push_back(bitsf(x + 1));
    probe.push_back(bitsf(x | 0x80000000u));
  }
  std::mt19937 rng(1234);
  for (int i = 0; i < 300000; ++i) probe.push_back(bitsf(rng()));
  for (float f : probe) {
    const uint16_t got = hccl::float_to_fp16(f), want = fp16_ref(f);
    EXPECT(got == want,
           "float_to_fp16(%a = %08x) = %04x, want %04x", f, fbits(f), got, want);
    const uint16_t gb = hccl::float_to_bf16(f), wb = bf16_ref(f);
    EXPECT(gb == wb, "float_to_bf16(%a = %08x) = %04x, want %04x", f, fbits(f), gb, wb);
  }
}

// ---- reference reduction ----------------------------------------------------

template <class T>
T ref_op(HcclReduceOp op, T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    switch (op) {
      case HCCL_REDUCE_SUM: return a + b;
      case HCCL_REDUCE_PROD: return a * b;
      case HCCL_REDUCE_MAX: return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b);
      default: return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b);
    }
  } else {
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (op) {
      case HCCL_REDUCE_SUM: return static_cast<T>(ua + ub);
      case HCCL_REDUCE_PROD: return static_cast<T>(ua * ub);
      case HCCL_REDUCE_MAX: return a > b ? a : b;
      default: return a < b ? a : b;
    }
  }
}

enum Kind { kNative, kHalf, kBfloat };

template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(a) && std::isnan(b)) return true;
  }
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T, Kind K>
void run_case(HcclDataType dt, HcclReduceOp op, int nsrcs, size_t count, int alias, std::mt19937 &rng) {
  std::vector<std::vector<T>> bufs(nsrcs, std::vector<T>(count + 1));
  for (auto &b : bufs) {
    for (auto &x : b) {
      uint64_t r = (static_cast<uint64_t>(rng()) << 32) | rng();
      if constexpr (std::is_floating_point<T>::value) {
        // Mostly moderate values, some random bit patterns (Inf/NaN/denormal).
        if (rng() % 8 == 0) std::memcpy(&x, &r, sizeof(T));
        else x = static_cast<T>(static_cast<int>(rng() % 2001) - 1000) / static_cast<T>(64);
      } else if (K == kHalf) {
        x = static_cast<T>(rng() % 8 == 0 ? r : hccl::float_to_fp16((static_cast<int>(rng() % 4001) - 2000) / 128.0f));
      } else if (K == kBfloat) {
        x = static_cast<T>(rng() % 8 == 0 ? r : hccl::float_to_bf16((static_cast<int>(rng() % 4001) - 2000) / 128.0f));
      } else {
        std::memcpy(&x, &r, sizeof(T));
      }
    }
  }
  // Reference.
  std::vector<T> want(count);
  for (size_t i = 0; i < count; ++i) {
    if constexpr (K == kNative) {
      T acc = bufs[0][i];
      for (int k = 1; k < nsrcs; ++k) acc = ref_op<T>(op, acc, bufs[k][i]);
      want[i] = acc;
    } else {
      auto load = [](T v) { return K == kHalf ? static_cast<float>(fp16_value(v)) : static_cast<float>(bf16_value(v)); };
      float acc = load(bufs[0][i]);
      if (std::isnan(acc)) acc = K == kHalf ? hccl::fp16_to_float(bufs[0][i]) : hccl::bf16_to_float(bufs[0][i]);
      for (int k = 1; k < nsrcs; ++k) {
        float v = load(bufs[k][i]);
        if (std::isnan(v)) v = K == kHalf ? hccl::fp16_to_float(bufs[k][i]) : hccl::bf16_to_float(bufs[k][i]);
        acc = ref_op<float>(op, acc, v);
      }
      want[i] = nsrcs == 1 ? bufs[0][i] : (K == kHalf ? fp16_ref(acc) : bf16_ref(acc));
    }
  }
  // alias: 0 dst separate, 1 dst = srcs[0], 2 dst = srcs[n-1], 3 dst = srcs[1],
  // 4 every src and dst the same buffer.
  std::vector<T> out(count + 1, T(0x5a));
  std::vector<const void *> srcs(nsrcs);
  for (int k = 0; k < nsrcs; ++k) srcs[k] = bufs[k].data();
  void *dst = out.data();
  if (alias == 1) dst = bufs[0].data();
  if (alias == 2) dst = bufs[nsrcs - 1].data();
  if (alias == 3 && nsrcs > 1) dst = bufs[1].data();
  if (alias == 4) {
    for (int k = 0; k < nsrcs; ++k) srcs[k] = bufs[0].data();
    dst = bufs[0].data();
    for (size_t i = 0; i < count; ++i) {  // recompute the reference for x op x op ...
      if constexpr (K == kNative) {
        T acc = bufs[0][i];
        for (int k = 1; k < nsrcs; ++k) acc = ref_op<T>(op, acc, bufs[0][i]);
        want[i] = acc;
      } else {
        const float v = K == kHalf ? hccl::fp16_to_float(bufs[0][i]) : hccl::bf16_to_float(bufs[0][i]);
        float acc = v;
        for (int k = 1; k < nsrcs; ++k) acc = ref_op<float>(op, acc, v);
        want[i] = nsrcs == 1 ? bufs[0][i] : (K == kHalf ? fp16_ref(acc) : bf16_ref(acc));
      }
    }
  }
  const T guard = static_cast<T *>(dst)[count];
  hccl::reduce(dt, op, dst, srcs.data(), nsrcs, count);
  const T *got = static_cast<const T *>(dst);
  int bad = 0;
  for (size_t i = 0; i < count && bad < 3; ++i) {
    bool ok;
    if constexpr (K == kNative) {
      ok = same_bits(got[i], want[i]);
    } else {
      const bool gn = (got[i] & 0x7fff) > (K == kHalf ? 0x7c00 : 0x7f80);
      const bool wn = (want[i] & 0x7fff) > (K == kHalf ? 0x7c00 : 0x7f80);
      ok = got[i] == want[i] || (gn && wn);
    }
    if (!ok) {
      ++bad;
      EXPECT(false, "%s %s n=%d count=%zu alias=%d i=%zu", hccl::dtype_name(dt), hccl::op_name(op), nsrcs,
             count, alias, i);
    }
  }
  EXPECT(same_bits(static_cast<T *>(dst)[count], guard), "%s wrote past count", hccl::dtype_name(dt));
}

template <class T, Kind K>
void check_dtype(HcclDataType dt, size_t size) {
  EXPECT(hccl::dtype_size(dt) == size, "dtype_size(%s)", hccl::dtype_name(dt));
  std::mt19937 rng(static_cast<unsigned>(dt) * 7919u + 1);
  const HcclReduceOp ops[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN};
  const size_t counts[] = {0, 1, 7, 33, 1023, 1024, 1025, 3001};
  for (HcclReduceOp op : ops) {
    EXPECT(hccl::reduce_supported(dt, op), "reduce_supported(%s, %s)", hccl::dtype_name(dt), hccl::op_name(op));
    for (int n = 1; n <= 5; ++n)
      for (size_t c : counts)
        for (int alias = 0; alias <= 4; ++alias) run_case<T, K>(dt, op, n, c, alias, rng);
  }
}

void check_names_and_support() {
  struct { HcclDataType dt; size_t size; const char *name; } unsupported[] = {
      {HCCL_DATA_TYPE_INT128, 16, "int128"}, {HCCL_DATA_TYPE_HIF8, 1, "hifloat8"},
      {HCCL_DATA_TYPE_FP8E4M3, 1, "float8_e4m3"}, {HCCL_DATA_TYPE_FP8E5M2, 1, "float8_e5m2"},
      {HCCL_DATA_TYPE_FP8E8M0, 1, "float8_e8m0"}, {HCCL_DATA_TYPE_RESERVED, 0, "unknown"},
      {static_cast<HcclDataType>(13), 0, "unknown"}, {static_cast<HcclDataType>(-1), 0, "unknown"}};
  for (auto &u : unsupported) {
    EXPECT(hccl::dtype_size(u.dt) == u.size, "dtype_size(%d)", static_cast<int>(u.dt));
    EXPECT(std::strcmp(hccl::dtype_name(u.dt), u.name) == 0, "dtype_name(%d)", static_cast<int>(u.dt));
    EXPECT(!hccl::reduce_supported(u.dt, HCCL_REDUCE_SUM), "supported %d", static_cast<int>(u.dt));
  }
  EXPECT(!hccl::reduce_supported(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_RESERVED), "op reserved");
  EXPECT(!hccl::reduce_supported(HCCL_DATA_TYPE_FP32, static_cast<HcclReduceOp>(4)), "op 4");
  EXPECT(std::strcmp(hccl::op_name(HCCL_REDUCE_PROD), "prod") == 0, "op_name");
  EXPECT(std::strcmp(hccl::op_name(static_cast<HcclReduceOp>(9)), "unknown") == 0, "op_name unknown");
  EXPECT(std::strcmp(hccl::dtype_name(HCCL_DATA_TYPE_BFP16), "bfloat16") == 0, "bfloat16");
  EXPECT(std::strcmp(hccl::dtype_name(HCCL_DATA_TYPE_FP32), "float32") == 0, "float32");
  // An unsupported pair leaves dst untouched.
  float d = 1.0f, s = 2.0f;
  const void *srcs[] = {&s, &s};
  hccl::reduce(HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM, &d, srcs, 2, 1);
  EXPECT(d == 1.0f, "unsupported reduce wrote");
}

// Reduces srcs (one value per source, repeated over 19 elements so both the
// vector body and the scalar tail run) and returns the result elements.
template <class T>
std::vector<T> reduce_repeated(HcclDataType dt, HcclReduceOp op, std::vector<T> values) {
  const size_t count = 19;
  std::vector<std::vector<T>> bufs;
  for (T v : values) bufs.emplace_back(count, v);
  std::vector<const void *> srcs;
  for (auto &b : bufs) srcs.push_back(b.data());
  std::vector<T> out(count);
  hccl::reduce(dt, op, out.data(), srcs.data(), static_cast<int>(srcs.size()), count);
  return out;
}

template <class T>
bool all_bits(const std::vector<T> &v, T want) {
  for (T x : v)
    if (std::memcmp(&x, &want, sizeof(T)) != 0) return false;
  return true;
}

bool all_nan_fp16(const std::vector<uint16_t> &v) {
  for (uint16_t x : v)
    if ((x & 0x7fff) <= 0x7c00) return false;
  return true;
}

// Specific rounding, NaN and tie semantics on top of the random cases.
void check_semantics() {
  const HcclDataType f16 = HCCL_DATA_TYPE_FP16, b16 = HCCL_DATA_TYPE_BFP16, f32 = HCCL_DATA_TYPE_FP32;
  const uint16_t h2048 = hccl::float_to_fp16(2048.0f), h1 = hccl::float_to_fp16(1.0f);
  // fp16: 2048 + 1 is a tie (ulp 2 there): rounds to even 2048. One rounding
  // of the fp32 sum, not one per step: 2048 + 1 + 1 = 2050.
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_SUM, {h2048, h1}), h2048), "fp16 2048+1");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_SUM, {h2048, h1, h1}), hccl::float_to_fp16(2050.0f)),
         "fp16 2048+1+1");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_SUM, {0x7bff, 0x7bff}), uint16_t{0x7c00}),
         "fp16 max+max -> inf");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_SUM, {0x0001, 0x0001, 0x0001}), uint16_t{0x0003}),
         "fp16 subnormal sum");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_PROD, {0x0200, 0x3800}), uint16_t{0x0100}),
         "fp16 subnormal * 0.5");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_PROD, {0x0001, 0x3800}), uint16_t{0x0000}),
         "fp16 tiny * 0.5 ties to even 0");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_PROD, {0x0003, 0x3800}), uint16_t{0x0002}),
         "fp16 3 tiny * 0.5 ties to even 2");
  // NaN anywhere wins max/min; inf - inf is NaN.
  const uint16_t hn = 0x7e01;
  for (HcclReduceOp op : {HCCL_REDUCE_MAX, HCCL_REDUCE_MIN, HCCL_REDUCE_SUM}) {
    EXPECT(all_nan_fp16(reduce_repeated<uint16_t>(f16, op, {h1, hn, h2048})), "fp16 %s NaN mid", hccl::op_name(op));
    EXPECT(all_nan_fp16(reduce_repeated<uint16_t>(f16, op, {hn, h1})), "fp16 %s NaN first", hccl::op_name(op));
    EXPECT(all_nan_fp16(reduce_repeated<uint16_t>(f16, op, {h1, 0x7d00})), "fp16 %s sNaN last", hccl::op_name(op));
  }
  EXPECT(all_nan_fp16(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_SUM, {0x7c00, 0xfc00})), "fp16 inf-inf");
  for (HcclReduceOp op : {HCCL_REDUCE_MAX, HCCL_REDUCE_MIN}) {
    for (auto r : reduce_repeated<float>(f32, op, {1.0f, NAN, 2.0f})) EXPECT(std::isnan(r), "fp32 %s NaN", hccl::op_name(op));
    for (auto r : reduce_repeated<uint16_t>(b16, op, {hccl::float_to_bf16(1.0f), 0x7fc1}))
      EXPECT((r & 0x7fff) > 0x7f80, "bf16 %s NaN", hccl::op_name(op));
  }
  // Ties (+0 vs -0): the right operand wins.
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_MIN, {0x0000, 0x8000}), uint16_t{0x8000}), "fp16 min(+0,-0)");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_MIN, {0x8000, 0x0000}), uint16_t{0x0000}), "fp16 min(-0,+0)");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_MAX, {0x0000, 0x8000}), uint16_t{0x8000}), "fp16 max(+0,-0)");
  EXPECT(all_bits(reduce_repeated<uint16_t>(f16, HCCL_REDUCE_MAX, {0x8000, 0x0000}), uint16_t{0x0000}), "fp16 max(-0,+0)");
  EXPECT(all_bits(reduce_repeated<float>(f32, HCCL_REDUCE_MIN, {0.0f, -0.0f}), -0.0f), "fp32 min(+0,-0)");
  EXPECT(all_bits(reduce_repeated<float>(f32, HCCL_REDUCE_MAX, {-0.0f, 0.0f}), 0.0f), "fp32 max(-0,+0)");
  // bf16: 256 + 1 is a tie -> 256; 256 + 1 + 1 -> 258 (one rounding).
  const uint16_t b256 = hccl::float_to_bf16(256.0f), b1 = hccl::float_to_bf16(1.0f);
  EXPECT(all_bits(reduce_repeated<uint16_t>(b16, HCCL_REDUCE_SUM, {b256, b1}), b256), "bf16 256+1");
  EXPECT(all_bits(reduce_repeated<uint16_t>(b16, HCCL_REDUCE_SUM, {b256, b1, b1}), hccl::float_to_bf16(258.0f)),
         "bf16 256+1+1");
  EXPECT(all_bits(reduce_repeated<uint16_t>(b16, HCCL_REDUCE_SUM, {0x7f7f, 0x7f7f}), uint16_t{0x7f80}),
         "bf16 max+max -> inf");
  // Integer wrap-around, no UB.
  EXPECT(all_bits(reduce_repeated<int8_t>(HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, {100, 100}), int8_t{-56}), "int8 wrap");
  EXPECT(all_bits(reduce_repeated<uint16_t>(HCCL_DATA_TYPE_UINT16, HCCL_REDUCE_PROD, {65535, 65535}), uint16_t{1}),
         "uint16 65535^2");
  EXPECT(all_bits(reduce_repeated<int64_t>(HCCL_DATA_TYPE_INT64, HCCL_REDUCE_PROD, {INT64_MIN, -1}), INT64_MIN),
         "int64 min * -1");
  EXPECT(all_bits(reduce_repeated<int32_t>(HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, {INT32_MAX, 1}), INT32_MIN),
         "int32 max + 1");
  EXPECT(all_bits(reduce_repeated<int16_t>(HCCL_DATA_TYPE_INT16, HCCL_REDUCE_MIN, {-5, 3, -7}), int16_t{-7}), "int16 min");
  EXPECT(all_bits(reduce_repeated<uint32_t>(HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_MAX, {5, 0xffffffffu}), 0xffffffffu),
         "uint32 max");
}

void bench() {
  const size_t bytes = 1 << 20;
  struct { HcclDataType dt; size_t size; } cases[] = {
      {HCCL_DATA_TYPE_FP32, 4}, {HCCL_DATA_TYPE_FP16, 2}, {HCCL_DATA_TYPE_BFP16, 2}};
  for (auto &c : cases) {
    const size_t count = bytes / c.size;
    std::vector<std::vector<char>> bufs(5, std::vector<char>(bytes, 0));
    for (auto &b : bufs)
      for (size_t i = 0; i < bytes; i += 2) b[i + 1] = 0x3c;  // 1.0-ish, no NaN
    for (int n : {2, 4}) {
      const void *srcs[4];
      for (int k = 0; k < n; ++k) srcs[k] = bufs[k].data();
      for (int inplace = 0; inplace <= 1; ++inplace) {
        void *dst = inplace ? bufs[0].data() : bufs[4].data();
        int iters = 0;
        const auto t0 = std::chrono::steady_clock::now();
        double secs = 0;
        do {
          for (int j = 0; j < 50; ++j) hccl::reduce(c.dt, HCCL_REDUCE_SUM, dst, srcs, n, count);
          iters += 50;
          secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        } while (secs < 0.3);
        std::printf("bench %-8s sum nsrcs=%d %s 1 MiB: %.1f GB/s of output\n", hccl::dtype_name(c.dt), n,
                    inplace ? "in-place" : "separate", bytes * static_cast<double>(iters) / secs / 1e9);
      }
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  check_conversions();
  check_names_and_support();
  check_semantics();
  check_dtype<int8_t, kNative>(HCCL_DATA_TYPE_INT8, 1);
  check_dtype<int16_t, kNative>(HCCL_DATA_TYPE_INT16, 2);
  check_dtype<int32_t, kNative>(HCCL_DATA_TYPE_INT32, 4);
  check_dtype<int64_t, kNative>(HCCL_DATA_TYPE_INT64, 8);
  check_dtype<uint8_t, kNative>(HCCL_DATA_TYPE_UINT8, 1);
  check_dtype<uint16_t, kNative>(HCCL_DATA_TYPE_UINT16, 2);
  check_dtype<uint32_t, kNative>(HCCL_DATA_TYPE_UINT32, 4);
  check_dtype<uint64_t, kNative>(HCCL_DATA_TYPE_UINT64, 8);
  check_dtype<float, kNative>(HCCL_DATA_TYPE_FP32, 4);
  check_dtype<double, kNative>(HCCL_DATA_TYPE_FP64, 8);
  check_dtype<uint16_t, kHalf>(HCCL_DATA_TYPE_FP16, 2);
  check_dtype<uint16_t, kBfloat>(HCCL_DATA_TYPE_BFP16, 2);
  if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) bench();
  if (g_failures != 0) {
    std::printf("reduce FAILED (%d checks)\n", g_failures);
    return 1;
  }
  std::printf("reduce ok\n");
  return 0;
}
