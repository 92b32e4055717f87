/*
 * pyhccl extensions that CANN's HCCL does not have. Code that must also build
 * against a real CANN toolkit tests PYHCCL_HOST_RUNTIME before using them.
 */
#ifndef PYHCCL_HCCL_HCCL_HOST_H_
#define PYHCCL_HCCL_HCCL_HOST_H_

/* Defined when building against pyhccl's CPU host runtime. */
#define PYHCCL_HOST_RUNTIME 1

#endif /* PYHCCL_HCCL_HCCL_HOST_H_ */
