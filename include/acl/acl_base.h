/*
 * ACL base types: data types, data buffers, float16. ABI-compatible with
 * CANN's acl/acl_base.h. Compiles as C99 and C++11.
 */
#ifndef PYHCCL_ACL_ACL_BASE_H_
#define PYHCCL_ACL_ACL_BASE_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base_rt.h"
#include "acl/error_codes/rt_error_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* IEEE binary16 bit pattern. */
typedef uint16_t aclFloat16;

/* Opaque buffer descriptor (used by pointer only). */
typedef struct aclDataBuffer aclDataBuffer;

/* Tensor element types (numbers differ from HcclDataType). */
typedef enum aclDataType {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41
} aclDataType;

/* Bytes per element of dataType (0 for unknown or sub-byte types). */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

/* Recent error message of this thread, or NULL if none. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* PYHCCL_ACL_ACL_BASE_H_ */
