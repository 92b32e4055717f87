// Callbacks registered with HcclCommRegCommStateCallback (comm_ext_api.cc).
#pragma once

#include "hccl/hccl_types.h"

namespace hccl {

// Calls every registered callback with (comm, phase), in name order. A
// callback's error is reported on stderr and does not stop the caller.
void run_state_callbacks(HcclComm comm, HcclCommStatePhase phase);

}  // namespace hccl
