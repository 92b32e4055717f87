// Argument checks, one per kind of argument, that the operations' checks
// (api/check_ops.h) and the other entry points are built from. Each returns
// HCCL_SUCCESS, or an error code after setting a message that names the call
// and the argument (hostrt::set_error; aclGetRecentErrMsg returns it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "hccl/comm/comm.h"
#include "hccl/hccl_types.h"

#define HCCL_TRY(expr)                          \
  do {                                          \
    HcclResult hccl_try_r_ = (expr);            \
    if (hccl_try_r_ != HCCL_SUCCESS) return hccl_try_r_; \
  } while (0)

namespace hccl {

// Pins on mapped device memory (hostrt::pin_memory): a checked op keeps them
// until it has run.
using Pins = std::vector<std::shared_ptr<const void>>;

// A live communicator of this process: E_PTR when NULL, E_PARA when stale.
HcclResult check_comm(HcclComm comm, const char *api, std::shared_ptr<Comm> *out);
// An output or input pointer that must not be NULL (E_PTR).
HcclResult check_ptr(const void *p, const char *api, const char *arg);
// A dtype collectives move: every HcclDataType the headers define (0..12,
// 14..17); E_PARA for any other value.
HcclResult check_dtype(HcclDataType dt, const char *api, const char *arg = "dataType");
// The same for a raw integer read from memory (not yet known to be a valid enum).
HcclResult check_dtype_raw(int32_t v, const char *api, const char *arg);
// A dtype/op pair the reduction kernels handle.
HcclResult check_reduction(HcclDataType dt, HcclReduceOp op, const char *api);
// A buffer of count * parts elements of dt: NULL only when it is empty;
// *bytes = its size (E_PARA on overflow, or when it starts in device memory
// and runs past the allocation). dt must have been checked. A mapped range
// is pinned into *pins, which the caller drops if the call is refused.
HcclResult check_buffer(const void *p, uint64_t count, uint64_t parts, HcclDataType dt,
                        const char *api, const char *arg, size_t *bytes, Pins *pins);
// A rank argument (root, destRank, ...) below nranks.
HcclResult check_rank(uint32_t rank, uint32_t nranks, const char *api, const char *arg);
// Two buffers may overlap only when they are exactly in place (`in_place`,
// as the call defines it, spelled out in `rule`).
HcclResult check_overlap(const char *api, const char *a_name, const void *a, size_t a_bytes,
                         const char *b_name, const void *b, size_t b_bytes, bool in_place,
                         const char *rule);
// An array of nranks uint64_t counts or displacements (copied into *out).
HcclResult read_counts(const void *arr, uint32_t nranks, const char *api, const char *arg,
                       std::vector<uint64_t> *out);
// Bytes spanned by blocks (counts[i] elements at displs[i]) of dt; pinned
// into *pins as by check_buffer.
HcclResult check_extent(const void *buf, const std::vector<uint64_t> &counts,
                        const std::vector<uint64_t> &displs, HcclDataType dt, const char *api,
                        const char *arg, size_t *bytes, Pins *pins);

}  // namespace hccl
