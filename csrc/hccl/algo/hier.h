// Hierarchical (and ring) AllReduce, ReduceScatter and AllGather; see hier.cc.
#pragma once

#include "hccl/algo/select.h"

namespace hccl {

HcclResult hier_all_reduce(Ctx &x, const Groups &g, const char *in, char *out, size_t count);
HcclResult hier_reduce_scatter(Ctx &x, const Groups &g, const char *in, char *out, size_t count);
HcclResult hier_all_gather(Ctx &x, const Groups &g, const char *in, char *out, size_t count);

}  // namespace hccl
