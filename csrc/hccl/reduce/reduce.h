// Reduction kernels: every HCCL dtype and op that HCCL reduces.
#pragma once

#include <cstddef>

#include "hccl/hccl_types.h"

namespace hccl {

// Bytes per element of dt, or 0 for an unknown dtype.
size_t dtype_size(HcclDataType dt);
// "float32", "bfloat16", ... ("unknown" for an unknown dtype).
const char *dtype_name(HcclDataType dt);
// "sum", "prod", "max", "min" ("unknown" otherwise).
const char *op_name(HcclReduceOp op);
// Whether reduce() handles this dtype/op pair.
bool reduce_supported(HcclDataType dt, HcclReduceOp op);

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[n-1][i] for i < count,
// folded strictly left to right so the result depends only on the inputs and
// their order (deterministic, bit-identical on every rank that calls it with
// the same inputs). fp16/bf16 accumulate in fp32 and round once. dst may alias
// any src exactly (same pointer); partial overlap is not allowed. nsrcs >= 1.
void reduce(HcclDataType dt, HcclReduceOp op, void *dst, const void *const *srcs, int nsrcs,
            size_t count);

}  // namespace hccl
