// Barrier: one round in which every rank posts and waits for all.
#include "hccl/algo/ctx.h"

namespace hccl {

HcclResult run_barrier(Ctx &x) {
  if (x.n == 1) return HCCL_SUCCESS;
  uint64_t j = x.next_round();
  x.post(j);
  return x.wait_all(j);
}

}  // namespace hccl
