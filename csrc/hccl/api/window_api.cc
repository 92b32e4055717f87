// Registered memory entry points (hccl/hccl_comm.h): symmetric windows
// (comm/window.h), memory ranges and activated memory (comm/memrange.h).
#include "hccl/api/checks.h"
#include "hccl/comm/memrange.h"
#include "hccl/comm/window.h"
#include "hccl/hccl.h"

using hccl::Comm;

extern "C" {

HcclResult HcclCommSymWinRegister(HcclComm comm, void *addr, uint64_t size,
                                  HcclCommSymWindow *winHandle, uint32_t flag) {
  const char *api = "HcclCommSymWinRegister";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  // Other bad arguments are found collectively: every rank fails with the message.
  return hccl::window_register(c, addr, size, flag, winHandle, api);
}

HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle) {
  return hccl::window_deregister(winHandle, "HcclCommSymWinDeregister");
}

HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size, size_t alignment,
                                  uint64_t flags) {
  const char *api = "HcclCommSetMemoryRange";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  return hccl::memrange_set(*c, baseVirPtr, size, alignment, flags, api);
}

HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr) {
  const char *api = "HcclCommUnsetMemoryRange";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  return hccl::memrange_unset(*c, baseVirPtr, api);
}

HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size, size_t offset,
                                      aclrtDrvMemHandle handle, uint64_t flags) {
  const char *api = "HcclCommActivateCommMemory";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  return hccl::memory_activate(*c, virPtr, size, offset, handle, flags, api);
}

HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr) {
  const char *api = "HcclCommDeactivateCommMemory";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  return hccl::memory_deactivate(*c, virPtr, api);
}

}  // extern "C"
