/* A CANN program, linked with each set of library names CANN's build files use
 * (tests/install/test_lib_names.py): -lhccl -lascendcl, -lhccl -lacl_rt -lmsprofiler,
 * -lhccl -lhcomm -lacl_rt -lmsprofiler. It runs a one-rank AllReduce, then checks that
 * every function it called was bound to the real libraries (libascendcl.so, libhccl.so),
 * never to an alias, and that dlopen() of each alias by path finds the real functions.
 * Usage: link_names LIBDIR; prints "link names ok". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"

#define CHECK(cond)                                                   \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                 \
        }                                                             \
    } while (0)

/* The file name of the object that holds `fn` (NULL if none). */
static const char *home(void *fn) {
    Dl_info info;
    if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fname == NULL) return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

static int bound_to(void *fn, const char *lib, const char *name) {
    const char *h = home(fn);
    if (h == NULL || strcmp(h, lib) != 0) {
        fprintf(stderr, "%s is bound to %s, not %s\n", name, h ? h : "(nothing)", lib);
        return 0;
    }
    return 1;
}

static int run_allreduce(void) {
    float host[4] = {1.0f, 2.0f, 3.0f, 4.0f}, out[4] = {0};
    void *buf = NULL;
    aclrtStream stream = NULL;
    HcclRootInfo root;
    HcclComm comm = NULL;
    CHECK(aclInit(NULL) == ACL_SUCCESS);
    CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
    CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS);
    CHECK(aclrtMalloc(&buf, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    CHECK(aclrtMemcpy(buf, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    CHECK(HcclGetRootInfo(&root) == HCCL_SUCCESS);
    CHECK(HcclCommInitRootInfo(1, &root, 0, &comm) == HCCL_SUCCESS);
    CHECK(HcclAllReduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream) == HCCL_SUCCESS);
    CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    CHECK(aclrtMemcpy(out, sizeof out, buf, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
    CHECK(memcmp(out, host, sizeof out) == 0);
    CHECK(HcclCommDestroy(comm) == HCCL_SUCCESS);
    CHECK(aclrtFree(buf) == ACL_SUCCESS);
    CHECK(aclrtDestroyStream(stream) == ACL_SUCCESS);
    CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
    CHECK(aclFinalize() == ACL_SUCCESS);
    return 0;
}

/* dlopen(LIBDIR/alias) + dlsym(name) must give the real library's function. */
static int dlopen_alias(const char *libdir, const char *alias, const char *name, const char *real) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", libdir, alias);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return 0;
    }
    int ok = bound_to(dlsym(h, name), real, name);
    dlclose(h);
    return ok;
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    if (run_allreduce() != 0) return 1;
    CHECK(bound_to((void *)aclrtMalloc, "libascendcl.so", "aclrtMalloc"));
    CHECK(bound_to((void *)aclrtSynchronizeStream, "libascendcl.so", "aclrtSynchronizeStream"));
    CHECK(bound_to((void *)aclprofInit, "libascendcl.so", "aclprofInit"));
    CHECK(bound_to((void *)HcclAllReduce, "libhccl.so", "HcclAllReduce"));
    CHECK(bound_to((void *)HcclCommInitRootInfo, "libhccl.so", "HcclCommInitRootInfo"));
    CHECK(dlopen_alias(argv[1], "libacl_rt.so", "aclrtMalloc", "libascendcl.so"));
    CHECK(dlopen_alias(argv[1], "libmsprofiler.so", "aclprofStart", "libascendcl.so"));
    CHECK(dlopen_alias(argv[1], "libhcomm.so", "HcclCommInitRootInfo", "libhccl.so"));
    CHECK(dlopen_alias(argv[1], "libhccl.so", "HcclBarrier", "libhccl.so"));
    printf("link names ok\n");
    return 0;
}
