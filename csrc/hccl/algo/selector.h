// Algorithm selection. The choice depends only on what is the same on every
// rank (op, size, rank count, tuning agreed at set-up), never on local state;
// PYHCCL_ALGO="coll:path[,coll:path]" forces one, e.g. "allreduce:chunked".
//   coll: allreduce reduce broadcast allgather reducescatter
//   path: latency (allreduce/reduce only) chunked|staged single
// Entries it cannot honour print one warning per process; a collective given
// an unknown path (or latency where it has none) uses the staged path.
#pragma once

#include <cstddef>

namespace hccl {

class Ctx;

enum class Path {
  kLatency,  // one round per slot-sized chunk, every rank reduces everything
  kStaged,   // through the slots, chunked and double-buffered
  kSingle,   // single copy if all ranks' buffers are aclrtMalloc memory, else kStaged
};

// `latency_ok`: the collective has a latency path (AllReduce, Reduce).
Path select_path(const Ctx &x, const char *coll, size_t bytes, bool latency_ok);

}  // namespace hccl
