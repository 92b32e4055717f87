#include "hccl/algo/selector.h"

#include "hccl/algo/ctx.h"

namespace hccl {

Path select_path(const Ctx &x, const char *coll, size_t bytes, bool latency_ok) {
  bool forced_any = false;
  if (latency_ok && x.forced(coll, "latency", &forced_any)) return Path::kLatency;
  if (x.forced(coll, "chunked") || x.forced(coll, "staged")) return Path::kStaged;
  if (x.forced(coll, "single")) return x.comm.single_copy_ok ? Path::kSingle : Path::kStaged;
  if (forced_any) return Path::kStaged;  // an unknown path name: the safe default
  if (latency_ok && bytes <= x.comm.tuning.latency_bytes && bytes <= x.slot_bytes)
    return Path::kLatency;
  if (x.comm.single_copy_ok && bytes >= x.comm.tuning.single_copy_min) return Path::kSingle;
  return Path::kStaged;
}

}  // namespace hccl
