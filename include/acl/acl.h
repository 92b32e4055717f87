/*
 * Entry header of the ACL API: initialisation and version. Includes the
 * runtime (acl_rt.h). ABI-compatible with CANN's acl/acl.h (ACL 1.17).
 * Compiles as C99 and C++11.
 */
#ifndef PYHCCL_ACL_ACL_H_
#define PYHCCL_ACL_ACL_H_

#include "acl/acl_rt.h"

/* ACL API version implemented by these headers. */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 17
#define ACL_PATCH_VERSION 0

#ifdef __cplusplus
extern "C" {
#endif

/* Initialises ACL for the process; configPath may be NULL. A repeat returns
 * ACL_ERROR_REPEAT_INITIALIZE and changes nothing. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);

/* Releases everything aclInit set up; a second call returns
 * ACL_ERROR_REPEAT_FINALIZE. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

/* Drops one aclInit reference; *refCount (if not NULL) receives the count left. */
ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount);

/* Version of the ACL runtime (deprecated in ACL 1.17, still provided). */
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion);

#ifdef __cplusplus
}
#endif

#endif /* PYHCCL_ACL_ACL_H_ */
