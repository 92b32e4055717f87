// The acltdt communicator API (include/acl/acl_tdt.h, a pyhccl extension):
// an acltdtComm is one HcclComm plus its group rendezvous; every call is the
// HCCL call of the same name on it. Internal to csrc/hccl/tdt.
#pragma once

#include <cstdint>
#include <string>

#include "acl/acl_tdt.h"
#include "hccl/hccl.h"
#include "hccl/hccl_host.h"

struct acltdtCommImpl {
  HcclComm hccl = nullptr;
  PyhcclRendezvous rendezvous = nullptr;
  aclrtStream stream = nullptr;  // used when a call passes NULL
  int32_t rank = 0;
  int32_t size = 0;
  std::string group;
};

namespace hccl {
namespace tdt {

// Re-prefixes this thread's error message with `api`, so that what went
// wrong in HCCL reads as the acltdt call the program made.
aclError fail(const char *api, HcclResult r);
// The live communicator `comm` (ACL_ERROR_INVALID_PARAM with a message when
// NULL or destroyed). The pointer stays valid until acltdtDestroyComm.
aclError check_comm(acltdtComm comm, const char *api);
// The HCCL type of an acl type and, in *elem, its size; ACL_ERROR_INVALID_PARAM
// when HCCL does not move that type, or when bytes is not a multiple of it.
aclError to_hccl(aclDataType dt, size_t bytes, const char *api, const char *bytes_arg, HcclDataType *out,
                 uint64_t *count);

}  // namespace tdt
}  // namespace hccl
