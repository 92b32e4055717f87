// The one dispatcher: runs an operation (on the stream's worker thread, ops
// in ticket order) by the first candidate that applies to it; see dispatch.cc.
#pragma once

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult dispatch(Ctx &x);

}  // namespace hccl
