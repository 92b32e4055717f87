// The reduction paths shared by AllReduce and Reduce (algo/all_reduce.cc).
#pragma once

#include "hccl/algo/ctx.h"

namespace hccl {

// Reduces `count` elements of every rank's send into recv on rank `root`, or
// on every rank when root < 0. Every element is folded in rank order 0..n-1,
// whatever the path, so results are bit-identical on all ranks and runs.
HcclResult reduce_common(Ctx &x, const char *coll, const void *send, void *recv, size_t count,
                         int root);

}  // namespace hccl
