// fp16 and bf16 fast paths of reduce() for x86-64 CPUs with AVX2 and F16C.
// Internal to reduce/.
#pragma once

#include <cstddef>

#include "hccl/hccl_types.h"

namespace hccl {
namespace kern {

// Whether this CPU can run fold_half_avx2 (checked once).
bool have_f16c();

// reduce() for HCCL_DATA_TYPE_FP16 or BFP16 with op SUM/PROD/MAX/MIN and
// nsrcs >= 2, bit-identical to the portable path. Call only when have_f16c().
void fold_half_avx2(HcclDataType dt, HcclReduceOp op, void *dst, const void *const *srcs, int nsrcs,
                    size_t count);

}  // namespace kern
}  // namespace hccl
