// The one funnel every operation goes through once its arguments are checked:
// resolve the stream, check it belongs to the communicator's device, fail fast
// on a failed communicator, then submit (or hold the op until HcclGroupEnd).
// The group state lives here, below api/, so that comm/host_call.cc can ask
// for it without reaching up.
#pragma once

#include <memory>

#include "hccl/op/op.h"
#include "hccl/comm/comm.h"

namespace hccl {

// Enqueues a checked op (its pins already taken) on the user's stream handle.
HcclResult comm_enqueue(const std::shared_ptr<Comm> &comm, aclrtStream stream, OpDesc op);

// HcclGroupStart / HcclGroupEnd / HcclGroupStatusGet (per calling thread).
HcclResult group_start();
HcclResult group_end();
bool group_active();

}  // namespace hccl
