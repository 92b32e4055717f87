// aclrt* virtual memory entry points (see vmm.h for how they map onto mmap).
#include "runtime/internal.h"
#include "runtime/vmm.h"

using namespace hostrt;

namespace hostrt {
aclError check_physical_prop(const aclrtPhysicalMemProp *prop, const char *api);
}  // namespace hostrt

extern "C" {

// The same 2 MiB for every property and option (CANN documents 2 MiB).
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                                              aclrtMemGranularityOptions option,
                                                              size_t *granularity) {
  const char *api = "aclrtMemGetAllocationGranularity";
  aclError rc = check_physical_prop(prop, api);
  if (rc != ACL_SUCCESS) return rc;
  if (granularity == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: granularity is NULL", api);
  if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
      option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: option (%d) is not an aclrtMemGranularityOptions",
                api, static_cast<int>(option));
  }
  *granularity = Vmm::kGranularity;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                                    void *expectPtr, uint64_t flags) {
  return Vmm::get().reserve(virPtr, size, alignment, expectPtr, flags, "aclrtReserveMemAddress");
}

ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr) {
  return Vmm::get().release(virPtr, "aclrtReleaseMemAddress");
}

ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                                                 const aclrtPhysicalMemProp *prop, uint64_t flags) {
  return Vmm::get().alloc_physical(handle, size, prop, flags, "aclrtMallocPhysical");
}

ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  return Vmm::get().free_physical(handle, "aclrtFreePhysical");
}

ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
                                         aclrtDrvMemHandle handle, uint64_t flags) {
  return Vmm::get().map(virPtr, size, offset, handle, flags, "aclrtMapMem");
}

ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr) {
  return Vmm::get().unmap(virPtr, "aclrtUnmapMem");
}

}  // extern "C"
