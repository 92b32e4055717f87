/*
 * ACL profiling API. ABI-compatible with CANN's acl/acl_prof.h (CANN ships it
 * in libmsprofiler.so). Compiles as C99 and C++11.
 */
#ifndef PYHCCL_ACL_ACL_PROF_H_
#define PYHCCL_ACL_ACL_PROF_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

/* Data switches for aclprofCreateConfig's dataTypeConfig. */
#define ACL_PROF_ACL_API        0x0001ULL
#define ACL_PROF_TASK_TIME      0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU          0x0008ULL
#define ACL_PROF_HCCL_TRACE     0x0020ULL
#define ACL_PROF_MSPROFTX       0x0080ULL
#define ACL_PROF_RUNTIME_API    0x0100ULL

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque profiling objects (used by pointer only). */
typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;

typedef enum aclprofAicoreMetrics {
    ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
    ACL_AICORE_PIPE_UTILIZATION = 1
} aclprofAicoreMetrics;

/* Starts profiling, writing results under profilerResultPath (length bytes). */
ACL_FUNC_VISIBILITY aclError aclprofInit(const char *profilerResultPath, size_t length);
/* Ends profiling. */
ACL_FUNC_VISIBILITY aclError aclprofFinalize(void);
/* Creates a profiling config for the listed devices; NULL on failure. */
ACL_FUNC_VISIBILITY aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                       aclprofAicoreMetrics aicoreMetrics,
                                                       const aclprofAicoreEvents *aicoreEvents,
                                                       uint64_t dataTypeConfig);
/* Destroys a config from aclprofCreateConfig. */
ACL_FUNC_VISIBILITY aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);
/* Starts collecting what profilerConfig selects. */
ACL_FUNC_VISIBILITY aclError aclprofStart(const aclprofConfig *profilerConfig);
/* Stops collecting what profilerConfig selects. */
ACL_FUNC_VISIBILITY aclError aclprofStop(const aclprofConfig *profilerConfig);

#ifdef __cplusplus
}
#endif

#endif /* PYHCCL_ACL_ACL_PROF_H_ */
