// One leader per host (leader.cc): AllReduce across hosts for small and
// medium messages.
#pragma once

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult leader_all_reduce(Ctx &x, const char *in, char *out, size_t count);

}  // namespace hccl
