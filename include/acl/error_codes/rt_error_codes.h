/*
 * Runtime error codes (ACL_ERROR_RT_*), values as in CANN's
 * acl/error_codes/rt_error_codes.h. Returned as aclError by the runtime.
 */
#ifndef PYHCCL_ACL_ERROR_CODES_RT_ERROR_CODES_H_
#define PYHCCL_ACL_ERROR_CODES_RT_ERROR_CODES_H_

#define ACL_RT_SUCCESS                       0      /* success */

#define ACL_ERROR_RT_PARAM_INVALID           107000 /* invalid parameter */
#define ACL_ERROR_RT_INVALID_DEVICEID        107001 /* invalid device id */
#define ACL_ERROR_RT_CONTEXT_NULL            107002 /* no current context */
#define ACL_ERROR_RT_STREAM_CONTEXT          107003 /* stream not in current context */
#define ACL_ERROR_RT_MODEL_CONTEXT           107004 /* model not in current context */
#define ACL_ERROR_RT_STREAM_MODEL            107005 /* stream not in model */
#define ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID 107006 /* event timestamp invalid */
#define ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL 107007 /* event timestamp reversal */
#define ACL_ERROR_RT_ADDR_UNALIGNED          107008 /* memory address unaligned */
#define ACL_ERROR_RT_FILE_OPEN               107009 /* open file failed */
#define ACL_ERROR_RT_FILE_WRITE              107010 /* write file failed */
#define ACL_ERROR_RT_STREAM_SUBSCRIBE        107011 /* stream already subscribed / not subscribed */
#define ACL_ERROR_RT_THREAD_SUBSCRIBE        107012 /* thread already subscribed / not subscribed */
#define ACL_ERROR_RT_GROUP_NOT_SET           107013 /* group not set */
#define ACL_ERROR_RT_GROUP_NOT_CREATE        107014 /* group not created */
#define ACL_ERROR_RT_STREAM_NO_CB_REG        107015 /* no callback registered for the stream */
#define ACL_ERROR_RT_INVALID_MEMORY_TYPE     107016 /* invalid memory type */
#define ACL_ERROR_RT_INVALID_HANDLE          107017 /* invalid handle */
#define ACL_ERROR_RT_INVALID_MALLOC_TYPE     107018 /* invalid malloc type */
#define ACL_ERROR_RT_WAIT_TIMEOUT            107019 /* wait timed out */

#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT     207000 /* feature not supported */
#define ACL_ERROR_RT_MEMORY_ALLOCATION       207001 /* memory allocation failed */
#define ACL_ERROR_RT_MEMORY_FREE             207002 /* memory free failed */
#define ACL_ERROR_RT_NO_DEVICE               207004 /* no device */
#define ACL_ERROR_RT_DEVICE_OOM              207018 /* device out of memory */

#define ACL_ERROR_RT_INTERNAL_ERROR          507000 /* runtime internal error */
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT     507046 /* stream synchronize timed out */
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT      507047 /* event synchronize timed out */
#define ACL_ERROR_RT_COMM_OP_RETRY_FAIL      507904 /* communication op retry failed */

#endif /* PYHCCL_ACL_ERROR_CODES_RT_ERROR_CODES_H_ */
