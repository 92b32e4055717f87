/*
 * hccl_check's typed values (part of hccl_check, see hccl_check.c): element sizes,
 * the inputs each rank makes and the results a collective must give, the
 * buffers (host or device memory) and the comparison of a result.
 */
#define RANK_CHECK_PART /* rank_check.h's counters live in hccl_check.c */
#include "hccl_check.h"

size_t esize(HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    default: return 8;
  }
}

static int is_unsigned(HcclDataType t) {
  return t == HCCL_DATA_TYPE_UINT8 || t == HCCL_DATA_TYPE_UINT16 || t == HCCL_DATA_TYPE_UINT32 ||
         t == HCCL_DATA_TYPE_UINT64;
}

/* Small integers only, so every sum/product below is exact in every type. */
static uint16_t f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (f == 0) return (uint16_t)sign;
  return (uint16_t)(sign | ((uint32_t)exp << 10) | (mant >> 13));
}
static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
  if (exp == 0 && mant == 0) x = sign;
  else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

void store(HcclDataType t, void *p, size_t i, double v) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case HCCL_DATA_TYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case HCCL_DATA_TYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case HCCL_DATA_TYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case HCCL_DATA_TYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case HCCL_DATA_TYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case HCCL_DATA_TYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case HCCL_DATA_TYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case HCCL_DATA_TYPE_FP16: ((uint16_t *)p)[i] = f2h((float)v); break;
    case HCCL_DATA_TYPE_FP32: ((float *)p)[i] = (float)v; break;
    case HCCL_DATA_TYPE_FP64: ((double *)p)[i] = v; break;
    case HCCL_DATA_TYPE_BFP16: {
      float f = (float)v;
      uint32_t x;
      memcpy(&x, &f, 4);
      ((uint16_t *)p)[i] = (uint16_t)(x >> 16);
      break;
    }
    default: break;
  }
}

static double load(HcclDataType t, const void *p, size_t i) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: return ((const int8_t *)p)[i];
    case HCCL_DATA_TYPE_INT16: return ((const int16_t *)p)[i];
    case HCCL_DATA_TYPE_INT32: return ((const int32_t *)p)[i];
    case HCCL_DATA_TYPE_INT64: return (double)((const int64_t *)p)[i];
    case HCCL_DATA_TYPE_UINT8: return ((const uint8_t *)p)[i];
    case HCCL_DATA_TYPE_UINT16: return ((const uint16_t *)p)[i];
    case HCCL_DATA_TYPE_UINT32: return ((const uint32_t *)p)[i];
    case HCCL_DATA_TYPE_UINT64: return (double)((const uint64_t *)p)[i];
    case HCCL_DATA_TYPE_FP16: return h2f(((const uint16_t *)p)[i]);
    case HCCL_DATA_TYPE_FP32: return ((const float *)p)[i];
    case HCCL_DATA_TYPE_FP64: return ((const double *)p)[i];
    case HCCL_DATA_TYPE_BFP16: {
      uint32_t x = (uint32_t)((const uint16_t *)p)[i] << 16;
      float f;
      memcpy(&f, &x, 4);
      return f;
    }
    default: return NAN;
  }
}

/* Input of `rank` at element i for reductions with op (or plain data: op -1). */
double gen(int op, HcclDataType t, int rank, size_t i) {
  if (op == HCCL_REDUCE_PROD) return (double)(1 + (i + rank) % 2);
  long v = (long)((i * 7 + (size_t)rank * 13 + 3) % 11);
  return is_unsigned(t) ? (double)v : (double)(v - 5);
}

double fold(int op, double a, double b) {
  switch (op) {
    case HCCL_REDUCE_SUM: return a + b;
    case HCCL_REDUCE_PROD: return a * b;
    case HCCL_REDUCE_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}

static double expect_reduced(int op, HcclDataType t, size_t i) {
  double acc = gen(op, t, 0, i);
  for (int r = 1; r < g_n; ++r) acc = fold(op, acc, gen(op, t, r, i));
  return acc;
}

/* The reduction kernels (reduce.h) handle every op for types 0..11. */
int reducible(HcclDataType t, int op) {
  (void)t;
  (void)op;
  return 1;
}

void *alloc(size_t bytes) {
  void *p = NULL;
  if (bytes == 0) bytes = 64;
  if (g_device_mem) ACL_OK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  else p = malloc(bytes);
  if (!p) exit(3);
  memset(p, 0xee, bytes);
  return p;
}
void release(void *p) {
  if (g_device_mem) aclrtFree(p);
  else free(p);
}

int compare(const char *what, HcclDataType t, const void *buf, size_t i0, size_t count,
                   double (*want)(size_t, void *), void *ctx) {
  size_t bad = 0, first = (size_t)-1;
  for (size_t i = 0; i < count; ++i) {
    double got = load(t, buf, i0 + i), exp = want(i, ctx);
    if (!(got == exp)) {
      if (bad++ == 0) first = i;
    }
  }
  CHECK(bad == 0, "%s: %zu of %zu wrong, first at %zu: got %g want %g", what, bad, count, first,
        bad ? load(t, buf, i0 + first) : 0.0, bad ? want(first, ctx) : 0.0);
  return bad == 0;
}

double want_reduced(size_t i, void *c) {
  struct Want *w = c;
  return expect_reduced(w->op, w->t, w->base + i);
}
double want_plain(size_t i, void *c) {
  struct Want *w = c;
  return gen(-1, w->t, w->rank, w->base + i);
}
