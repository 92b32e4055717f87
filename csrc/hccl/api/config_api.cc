// Process-global settings, capabilities and error strings.
#include "hccl/api/checks.h"
#include "hccl/comm/config.h"
#include "hccl/hccl.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

extern "C" {

const char *HcclGetErrorString(HcclResult code) {
  switch (code) {
    case HCCL_SUCCESS: return "success";
    case HCCL_E_PARA: return "parameter error";
    case HCCL_E_PTR: return "empty pointer";
    case HCCL_E_MEMORY: return "memory error";
    case HCCL_E_INTERNAL: return "internal error";
    case HCCL_E_NOT_SUPPORT: return "not supported";
    case HCCL_E_NOT_FOUND: return "resource not found";
    case HCCL_E_UNAVAIL: return "resource unavailable";
    case HCCL_E_SYSCALL: return "system call error";
    case HCCL_E_TIMEOUT: return "timed out";
    case HCCL_E_OPEN_FILE_FAILURE: return "cannot open file";
    case HCCL_E_TCP_CONNECT: return "TCP connection failed";
    case HCCL_E_ROCE_CONNECT: return "RoCE connection failed";
    case HCCL_E_TCP_TRANSFER: return "TCP transfer failed";
    case HCCL_E_ROCE_TRANSFER: return "RoCE transfer failed";
    case HCCL_E_RUNTIME: return "runtime error";
    case HCCL_E_DRV: return "driver error";
    case HCCL_E_PROFILING: return "profiling error";
    case HCCL_E_CCE: return "CCE error";
    case HCCL_E_NETWORK: return "network error";
    case HCCL_E_AGAIN: return "try again";
    case HCCL_E_REMOTE: return "error on a remote rank";
    case HCCL_E_SUSPENDING: return "communicator is suspending";
    case HCCL_E_OPRETRY_FAIL: return "operation retry failed";
    case HCCL_E_OOM: return "out of memory";
    case HCCL_E_IN_STATUS: return "communicator in an invalid state";
    default: return "unknown HCCL error code";
  }
}

uint32_t HcclGetCommConfigCapability(void) { return HCCL_COMM_CONFIG_RESERVED; }

HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue) {
  if (config != HCCL_DETERMINISTIC) {
    return HCCL_FAIL(HCCL_E_PARA, "HcclSetConfig: config (%d) is not a known HcclConfig",
                                  static_cast<int>(config));
  }
  if (configValue.value < 0 || configValue.value > 2) {
    return HCCL_FAIL(HCCL_E_PARA, "HcclSetConfig: HCCL_DETERMINISTIC value (%d) must be 0, 1 or 2",
                                  configValue.value);
  }
  hccl::set_global_deterministic(configValue.value);
  return HCCL_SUCCESS;
}

HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue) {
  HCCL_TRY(hccl::check_ptr(configValue, "HcclGetConfig", "configValue"));
  if (config != HCCL_DETERMINISTIC) {
    return HCCL_FAIL(HCCL_E_PARA, "HcclGetConfig: config (%d) is not a known HcclConfig",
                                  static_cast<int>(config));
  }
  configValue->value = hccl::global_deterministic();
  return HCCL_SUCCESS;
}

}  // extern "C"
