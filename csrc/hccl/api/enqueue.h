// The one funnel every operation goes through: resolve the stream, check it
// belongs to the communicator's device, fail fast on a failed communicator,
// then enqueue (or hold the op until HcclGroupEnd).
#pragma once

#include <memory>

#include "hccl/op/op.h"
#include "hccl/comm/comm.h"

namespace hccl {

HcclResult enqueue_op(const std::shared_ptr<Comm> &comm, aclrtStream stream, OpDesc op);

// HcclGroupStart / HcclGroupEnd / HcclGroupStatusGet (per calling thread).
HcclResult group_start();
HcclResult group_end();
bool group_active();

}  // namespace hccl
