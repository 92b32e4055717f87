// Entry points the host runtime declares but cannot provide: profiling
// (aclprof*, in libmsprofiler.so on CANN). Each returns
// ACL_ERROR_API_NOT_SUPPORT with a message.
#include "acl/acl_prof.h"
#include "runtime/internal.h"

using namespace hostrt;

namespace {
aclError unsupported(const char *api, const char *why) {
  return fail(ACL_ERROR_API_NOT_SUPPORT, "%s: not supported by the pyhccl host runtime (%s)", api,
              why);
}
constexpr const char *kProf = "no device profiler on the CPU";
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

}  // extern "C"
