// HCCL functions the host runtime does not implement: they exist (so that
// loaders and programs link) and return HCCL_E_NOT_SUPPORT with a message
// that says why.
#include "hccl/hccl.h"
#include "runtime/hostrt.h"

extern "C" {

// CANN reserves these for recovery from device memory faults, after
// aclrtDeviceTaskAbort stopped the device's tasks; the host runtime has
// neither. A failed communicator here cannot be repaired in place (its peers'
// transport state is gone with the failure): destroy it and create another.
#define HCCL_NO_SUSPEND(name)                                                            \
  hostrt::set_error("%s: not supported by the pyhccl host runtime: CANN reserves it for "  \
                    "recovery from device memory faults (with aclrtDeviceTaskAbort), which " \
                    "the host runtime does not have; destroy the communicator and create "   \
                    "a new one", #name);                                                   \
  return HCCL_E_NOT_SUPPORT

HcclResult HcclCommSuspend(HcclComm comm) { HCCL_NO_SUSPEND(HcclCommSuspend); }

HcclResult HcclCommResume(HcclComm comm) { HCCL_NO_SUSPEND(HcclCommResume); }

}  // extern "C"
