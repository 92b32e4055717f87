// Entry points the host runtime declares but cannot provide: profiling
// (aclprof*, in libmsprofiler.so on CANN) and virtual memory management. Each
// returns ACL_ERROR_API_NOT_SUPPORT with a message, except
// aclrtMemGetAllocationGranularity, which reports the 2 MiB the arena uses.
#include "acl/acl_prof.h"
#include "runtime/internal.h"

using namespace hostrt;

namespace {
aclError unsupported(const char *api, const char *why) {
  return fail(ACL_ERROR_API_NOT_SUPPORT, "%s: not supported by the pyhccl host runtime (%s)", api,
              why);
}
constexpr const char *kProf = "no device profiler on the CPU";
constexpr const char *kVmm = "no virtual memory management; use aclrtMalloc";
}  // namespace

extern "C" {

// ---- profiling: ACL_ERROR_API_NOT_SUPPORT ----------------------------------

ACL_FUNC_VISIBILITY aclError aclprofInit(const char *profilerResultPath, size_t length) {
  return unsupported("aclprofInit", kProf);
}

ACL_FUNC_VISIBILITY aclError aclprofFinalize(void) { return unsupported("aclprofFinalize", kProf); }

// Returns NULL (CANN's failure value) with the message set.
ACL_FUNC_VISIBILITY aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                       aclprofAicoreMetrics aicoreMetrics,
                                                       const aclprofAicoreEvents *aicoreEvents,
                                                       uint64_t dataTypeConfig) {
  unsupported("aclprofCreateConfig", kProf);
  return nullptr;
}

ACL_FUNC_VISIBILITY aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig) {
  return unsupported("aclprofDestroyConfig", kProf);
}

ACL_FUNC_VISIBILITY aclError aclprofStart(const aclprofConfig *profilerConfig) {
  return unsupported("aclprofStart", kProf);
}

ACL_FUNC_VISIBILITY aclError aclprofStop(const aclprofConfig *profilerConfig) {
  return unsupported("aclprofStop", kProf);
}

// ---- virtual memory ---------------------------------------------------------

// Works: 2 MiB for both options.
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                                              aclrtMemGranularityOptions option,
                                                              size_t *granularity) {
  const char *api = "aclrtMemGetAllocationGranularity";
  if (prop == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "%s: prop is NULL", api);
  if (granularity == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "%s: granularity is NULL", api);
  if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
      option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
    return fail(ACL_ERROR_INVALID_PARAM, "%s: option (%d) is not an aclrtMemGranularityOptions",
                api, static_cast<int>(option));
  }
  *granularity = 2u << 20;
  return ACL_SUCCESS;
}

// The rest: ACL_ERROR_API_NOT_SUPPORT.
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                                    void *expectPtr, uint64_t flags) {
  return unsupported("aclrtReserveMemAddress", kVmm);
}

ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr) {
  return unsupported("aclrtReleaseMemAddress", kVmm);
}

ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                                                 const aclrtPhysicalMemProp *prop, uint64_t flags) {
  return unsupported("aclrtMallocPhysical", kVmm);
}

ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  return unsupported("aclrtFreePhysical", kVmm);
}

ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
                                         aclrtDrvMemHandle handle, uint64_t flags) {
  return unsupported("aclrtMapMem", kVmm);
}

ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr) {
  return unsupported("aclrtUnmapMem", kVmm);
}

}  // extern "C"
