// HCCL functions the host runtime does not implement: they exist (so that
// loaders and programs link) and return HCCL_E_NOT_SUPPORT with a message.
#include "hccl/hccl.h"
#include "runtime/hostrt.h"

#define HCCL_UNSUPPORTED(name)                                                     \
  hostrt::set_error("%s: not supported by the pyhccl host runtime", #name);       \
  return HCCL_E_NOT_SUPPORT

extern "C" {

HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm) {
  HCCL_UNSUPPORTED(HcclCommInitClusterInfo);
}

HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                         HcclCommConfig *config, HcclComm *comm) {
  HCCL_UNSUPPORTED(HcclCommInitClusterInfoConfig);
}

HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                   uint64_t subCommId, uint32_t subCommRankId,
                                   HcclCommConfig *config, HcclComm *subComm) {
  HCCL_UNSUPPORTED(HcclCreateSubCommConfig);
}

HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms) {
  HCCL_UNSUPPORTED(HcclCommInitAll);
}

HcclResult HcclCommSuspend(HcclComm comm) { HCCL_UNSUPPORTED(HcclCommSuspend); }

HcclResult HcclCommResume(HcclComm comm) { HCCL_UNSUPPORTED(HcclCommResume); }

HcclResult HcclCommRegCommStateCallback(const char *regName, HcclCommStateCallback cb, void *args) {
  HCCL_UNSUPPORTED(HcclCommRegCommStateCallback);
}

}  // extern "C"
