// Broadcast and Reduce along a tree: across hosts through one rank per host
// (the root on its own host, the lowest rank elsewhere), inside a host from
// that rank. Small messages go star-shaped (one step); large ones along a
// chain, each rank forwarding a piece as soon as it has it (pipelined).
#pragma once

#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult tree_reduce(Ctx &x, const char *in, char *out, size_t count, int root);

}  // namespace hccl
