/* Shared helpers of the ABI test (abi_main.c, abi_tu2.c): compile-time
 * asserts that work in C99, C11 and C++11, and alignof for C99. */
#ifndef PYHCCL_TESTS_ABI_COMMON_H_
#define PYHCCL_TESTS_ABI_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"
#include "hccl/hccl_host.h"

#define ABI_CAT2(a, b) a##b
#define ABI_CAT(a, b) ABI_CAT2(a, b)

#if defined(__cplusplus)
#define ABI_STATIC_ASSERT(c) static_assert(c, #c)
#define ABI_ALIGNOF(T) alignof(T)
#else
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define ABI_STATIC_ASSERT(c) _Static_assert(c, #c)
#else
/* C99: a negative array size fails to compile. */
#define ABI_STATIC_ASSERT(c) typedef char ABI_CAT(abi_static_assert_, __LINE__)[(c) ? 1 : -1]
#endif
#define ABI_ALIGNOF(T) offsetof(struct { char c; T t; }, t)
#endif

/* Compile-time check that fn has exactly the signature ret(args): comparing
 * function pointers of different types is an error in C++ and a (-Werror)
 * diagnostic in C. Inside sizeof, so fn needs no definition at link time. */
#define ABI_SIG(ret, fn, args)                                                \
    typedef ret(*ABI_CAT(fn, _sig_t)) args;                                   \
    enum { ABI_CAT(fn, _sig_ok) = sizeof((ABI_CAT(fn, _sig_t))0 == &fn) }

/* Implemented in abi_tu2.c: the same facts seen from a second translation
 * unit, so both TUs link together with the headers included twice. */
size_t tu2_sizeof_comm_config(void);
size_t tu2_offsetof_chan_sq_depth(void);
uint32_t tu2_init_buffer_size(void);
int tu2_acl_rt_param_invalid(void);
int tu2_check_signatures(void);

#endif /* PYHCCL_TESTS_ABI_COMMON_H_ */
