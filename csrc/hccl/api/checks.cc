#include "hccl/api/checks.h"

#include <cstring>

#include "hccl/reduce/reduce.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

bool known_dtype(int v) { return (v >= 0 && v <= 12) || (v >= 14 && v <= 17); }

// Byte size of `elems` elements of dt; false if it overflows or exceeds 2^62.
bool byte_size(uint64_t elems, HcclDataType dt, uint64_t *bytes) {
  return !__builtin_mul_overflow(elems, dtype_size(dt), bytes) && *bytes <= (1ull << 62);
}

// A range that starts in device memory must lie in one live allocation or
// mapping: the ACL memory calls' own check, with the same messages. The pin
// is taken by the same look-up, so the mapping cannot go in between.
HcclResult check_device_range(const void *p, size_t bytes, const char *api, const char *arg,
                              Pins *pins) {
  if (bytes == 0 || p == nullptr) return HCCL_SUCCESS;
  std::shared_ptr<const void> pin;
  if (hostrt::check_device_range(p, bytes, api, arg, &pin) != ACL_SUCCESS) return HCCL_E_PARA;
  if (pin) pins->push_back(std::move(pin));
  return HCCL_SUCCESS;
}

}  // namespace

HcclResult check_comm(HcclComm comm, const char *api, std::shared_ptr<Comm> *out) {
  if (comm == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: comm is NULL", api);
  }
  *out = comm_lookup(comm);
  if (!*out) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: comm %p is not a live communicator (destroyed, or never created)",
                                  api, comm);
  }
  return HCCL_SUCCESS;
}

HcclResult check_ptr(const void *p, const char *api, const char *arg) {
  if (p != nullptr) return HCCL_SUCCESS;
  return HCCL_FAIL(HCCL_E_PTR, "%s: %s is NULL", api, arg);
}

HcclResult check_dtype(HcclDataType dt, const char *api, const char *arg) {
  return check_dtype_raw(static_cast<int32_t>(dt), api, arg);
}

HcclResult check_dtype_raw(int32_t v, const char *api, const char *arg) {
  // Every type the headers define moves (collectives that only copy bytes);
  // which of them reduce is check_reduction's business.
  if (known_dtype(v)) return HCCL_SUCCESS;
  return HCCL_FAIL(HCCL_E_PARA, "%s: %s (%d) is not an HcclDataType", api, arg, v);
}

HcclResult check_reduction(HcclDataType dt, HcclReduceOp op, const char *api) {
  HCCL_TRY(check_dtype(dt, api));
  int v = static_cast<int>(op);
  if (v < 0 || v > 3) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: op (%d) is not an HcclReduceOp", api, v);
  }
  if (!reduce_supported(dt, op)) {
    // As on CANN: INT128, HIF8 and the FP8 types move (AllGather, Broadcast,
    // Send/Recv, ...) but do not reduce.
    return HCCL_FAIL(HCCL_E_NOT_SUPPORT, "%s: reduction op %s is not supported for dataType %s (%d): like CANN, "
                                         "pyhccl reduces no int128, hifloat8 or float8 type (they only move, in "
                                         "AllGather, Broadcast, AlltoAll, Scatter, Send/Recv and the like)",
                                         api, op_name(op), dtype_name(dt), static_cast<int>(dt));
  }
  return HCCL_SUCCESS;
}

HcclResult check_buffer(const void *p, uint64_t count, uint64_t parts, HcclDataType dt,
                        const char *api, const char *arg, size_t *bytes, Pins *pins) {
  uint64_t elems, b;
  if (__builtin_mul_overflow(count, parts, &elems) || !byte_size(elems, dt, &b)) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: count %llu of %s is too large", api,
                                  static_cast<unsigned long long>(count), dtype_name(dt));
  }
  *bytes = static_cast<size_t>(b);
  if (b > 0 && p == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: %s is NULL but count is %llu", api, arg,
                                 static_cast<unsigned long long>(count));
  }
  return check_device_range(p, *bytes, api, arg, pins);
}

HcclResult check_rank(uint32_t rank, uint32_t nranks, const char *api, const char *arg) {
  if (rank < nranks) return HCCL_SUCCESS;
  return HCCL_FAIL(HCCL_E_PARA, "%s: %s (%u) must be below the communicator's rank count (%u)", api, arg, rank,
                                nranks);
}

HcclResult check_overlap(const char *api, const char *a_name, const void *a, size_t a_bytes,
                         const char *b_name, const void *b, size_t b_bytes, bool in_place,
                         const char *rule) {
  if (a_bytes == 0 || b_bytes == 0 || in_place) return HCCL_SUCCESS;
  uintptr_t a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
  if (a0 + a_bytes <= b0 || b0 + b_bytes <= a0) return HCCL_SUCCESS;
  return HCCL_FAIL(HCCL_E_PARA, "%s: %s [%p, +%zu) and %s [%p, +%zu) overlap but are not in place (%s)", api,
                                a_name, a, a_bytes, b_name, b, b_bytes, rule);
}

HcclResult read_counts(const void *arr, uint32_t nranks, const char *api, const char *arg,
                       std::vector<uint64_t> *out) {
  HCCL_TRY(check_ptr(arr, api, arg));
  out->resize(nranks);
  std::memcpy(out->data(), arr, nranks * sizeof(uint64_t));
  return HCCL_SUCCESS;
}

HcclResult check_extent(const void *buf, const std::vector<uint64_t> &counts,
                        const std::vector<uint64_t> &displs, HcclDataType dt, const char *api,
                        const char *arg, size_t *bytes, Pins *pins) {
  uint64_t end = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    uint64_t e, b;
    if (__builtin_add_overflow(displs[i], counts[i], &e) || !byte_size(e, dt, &b)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: block %zu of %s (displacement %llu, count %llu) is too large", api, i,
                                    arg, static_cast<unsigned long long>(displs[i]),
                                    static_cast<unsigned long long>(counts[i]));
    }
    if (e > end) end = e;
  }
  *bytes = static_cast<size_t>(end * dtype_size(dt));
  if (*bytes > 0 && buf == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: %s is NULL but its counts are not all 0", api, arg);
  }
  return check_device_range(buf, *bytes, api, arg, pins);
}

}  // namespace hccl
