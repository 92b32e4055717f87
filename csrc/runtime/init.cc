// aclInit / aclFinalize, versions, SoC name, data types.
#include <cstdio>

#include "common/env.h"
#include "runtime/internal.h"
#include "runtime/trace.h"

namespace hostrt {
namespace {

struct InitState {
  std::mutex mu;
  uint64_t refs = 0;       // 1 while initialized (a repeated aclInit adds nothing)
  bool ever = false;       // aclInit ever succeeded
};
InitState &init_state() {
  static InitState *s = new InitState;
  return *s;
}

// Finalized and not initialized again: calls that create (devices, memory,
// streams, events) fail instead of building on a torn-down runtime.
std::atomic<bool> g_finalized{false};

// Finalize with the init lock held: drop everything the runtime owns, after
// which the open traces (PYHCCL_TRACE, aclprof) are written as they stand.
aclError teardown(const char *api) {
  aclError rc = destroy_all_devices(api);
  if (rc == ACL_SUCCESS) trace_flush();
  return rc;
}

aclError not_initialized(const char *api) {
  InitState &s = init_state();
  if (s.ever) return ACL_FAIL(ACL_ERROR_REPEAT_FINALIZE, "%s: ACL is already finalized", api);
  return ACL_FAIL(ACL_ERROR_UNINITIALIZE, "%s: aclInit was not called", api);
}

}  // namespace

aclError check_not_finalized(const char *api) {
  if (!g_finalized.load(std::memory_order_relaxed)) return ACL_SUCCESS;
  return ACL_FAIL(ACL_ERROR_UNINITIALIZE, "%s: ACL was finalized (aclFinalize); call aclInit first",
              api);
}

}  // namespace hostrt

using namespace hostrt;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath) {
  const char *api = "aclInit";
  InitState &s = init_state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.refs > 0) {
    // docs/ABI.md 5.4: a repeat changes nothing (callers treat 100002 as success;
    // one aclFinalize or aclFinalizeReference still finalizes).
    return ACL_FAIL(ACL_ERROR_REPEAT_INITIALIZE, "%s: ACL is already initialized", api);
  }
  // The config file (JSON dump/profiling options in CANN) is only checked for
  // readability: none of its options applies to the host runtime.
  if (configPath != nullptr && configPath[0] != '\0') {
    FILE *f = std::fopen(configPath, "r");
    if (f == nullptr) {
      return ACL_FAIL(ACL_ERROR_INVALID_FILE, "%s: configPath \"%s\" cannot be read", api, configPath);
    }
    std::fclose(f);
  }
  s.refs = 1;
  s.ever = true;
  g_finalized.store(false);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclFinalize(void) {
  InitState &s = init_state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.refs == 0) return not_initialized("aclFinalize");
  aclError rc = teardown("aclFinalize");
  if (rc == ACL_SUCCESS) {
    s.refs = 0;
    g_finalized.store(true);
  }
  return rc;
}

ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount) {
  InitState &s = init_state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.refs == 0) return not_initialized("aclFinalizeReference");
  if (s.refs == 1) {
    aclError rc = teardown("aclFinalizeReference");
    if (rc != ACL_SUCCESS) return rc;
    g_finalized.store(true);
  }
  --s.refs;
  if (refCount != nullptr) *refCount = s.refs;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion) {
  if (majorVersion == nullptr || minorVersion == nullptr || patchVersion == nullptr) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: %s is NULL",
                majorVersion == nullptr   ? "majorVersion"
                : minorVersion == nullptr ? "minorVersion"
                                          : "patchVersion");
  }
  *majorVersion = ACL_MAJOR_VERSION;
  *minorVersion = ACL_MINOR_VERSION;
  *patchVersion = ACL_PATCH_VERSION;
  return ACL_SUCCESS;
}

// "HostCPU" unless PYHCCL_SOC_NAME names something else (tests of tools that
// branch on the SoC prefix). Works before aclInit.
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void) {
  static const char *name = common::env_str("PYHCCL_SOC_NAME", "HostCPU");
  return name;
}

ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_BOOL: case ACL_INT8: case ACL_UINT8: case ACL_HIFLOAT8: case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN: case ACL_FLOAT8_E8M0:
      return 1;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16:
      return 2;
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: case ACL_COMPLEX32:
      return 4;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    default:  // undefined, string and sub-byte types (INT4, UINT1, FP6, FP4)
      return 0;
  }
}

}  // extern "C"
