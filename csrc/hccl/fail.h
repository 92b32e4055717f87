// libhccl's one error idiom. HCCL_FAIL records the message (returned by
// aclGetRecentErrMsg, and the text of Python's HcclError) and evaluates to
// the code, so a check is one line:
//   if (buf == nullptr) return HCCL_FAIL(HCCL_E_PTR, "%s: sendBuf is NULL", api);
// The runtime's twin is ACL_FAIL (runtime/internal.h).
#pragma once

#include "runtime/hostrt.h"

#define HCCL_FAIL(code, ...) (::hostrt::set_error(__VA_ARGS__), (code))
