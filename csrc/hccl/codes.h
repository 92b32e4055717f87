// HCCL <-> ACL error codes, in one place (the one mapper every layer uses).
//   hccl_code(aclError)            a runtime call failed inside an HCCL call
//   acl_code(HcclResult, kApi)     an acl* entry point of libhccl (acltdt) returns it
//   acl_code(HcclResult, kTask)    a failed collective task reports it on its stream
#pragma once

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace hccl {

enum class AclUse { kApi, kTask };

inline HcclResult hccl_code(aclError e) {
  switch (e) {
    case ACL_SUCCESS: return HCCL_SUCCESS;
    case ACL_ERROR_INVALID_PARAM:
    case ACL_ERROR_RT_PARAM_INVALID:
    case ACL_ERROR_RT_INVALID_HANDLE:
    case ACL_ERROR_RT_CONTEXT_NULL: return HCCL_E_PARA;
    default: return HCCL_E_RUNTIME;
  }
}

inline aclError acl_code(HcclResult r, AclUse use) {
  if (r == HCCL_SUCCESS) return ACL_SUCCESS;
  if (use == AclUse::kTask) {  // the runtime's codes for a task that failed
    switch (r) {
      case HCCL_E_TIMEOUT: return ACL_ERROR_RT_WAIT_TIMEOUT;
      case HCCL_E_PARA: return ACL_ERROR_RT_PARAM_INVALID;
      default: return ACL_ERROR_RT_INTERNAL_ERROR;
    }
  }
  switch (r) {  // the API's codes
    case HCCL_E_PARA:
    case HCCL_E_PTR: return ACL_ERROR_INVALID_PARAM;
    case HCCL_E_NOT_SUPPORT: return ACL_ERROR_API_NOT_SUPPORT;
    case HCCL_E_MEMORY:
    case HCCL_E_OOM: return ACL_ERROR_BAD_ALLOC;
    default: return ACL_ERROR_FAILURE;
  }
}

}  // namespace hccl
