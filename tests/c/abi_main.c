/* ABI test of include/acl and include/hccl: asserts the facts of
 * docs/ABI.md section 7 at compile time where C allows it and at run
 * time otherwise. Built as C99, C11 and C++11 together with abi_tu2.c; prints
 * "abi ok" and exits 0 on success, else names every failed check. */
#include <stdio.h>
#include <string.h>

#include "abi_common.h"

/* ---- HCCL layouts ------------------------------------------------------- */

ABI_STATIC_ASSERT(sizeof(HcclRootInfo) == 4108);
ABI_STATIC_ASSERT(ABI_ALIGNOF(HcclRootInfo) == 1);
ABI_STATIC_ASSERT(HCCL_ROOT_INFO_BYTES == 4108);

ABI_STATIC_ASSERT(sizeof(HcclSendRecvItem) == 32);
ABI_STATIC_ASSERT(ABI_ALIGNOF(HcclSendRecvItem) == 8);
ABI_STATIC_ASSERT(offsetof(HcclSendRecvItem, sendRecvType) == 0);
ABI_STATIC_ASSERT(offsetof(HcclSendRecvItem, buf) == 8);
ABI_STATIC_ASSERT(offsetof(HcclSendRecvItem, count) == 16);
ABI_STATIC_ASSERT(offsetof(HcclSendRecvItem, dataType) == 24);
ABI_STATIC_ASSERT(offsetof(HcclSendRecvItem, remoteRank) == 28);

ABI_STATIC_ASSERT(sizeof(HcclCommConfig) == 2248);
ABI_STATIC_ASSERT(ABI_ALIGNOF(HcclCommConfig) == 8);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, reserved) == 0);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclBufferSize) == 24);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclDeterministic) == 28);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclCommName) == 32);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclUdi) == 160);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclOpExpansionMode) == 288);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclRdmaTrafficClass) == 292);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclRdmaServiceLevel) == 296);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclWorldRankID) == 300);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclJobID) == 304);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, aclGraphZeroCopyEnable) == 312);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclExecTimeOut) == 316);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclAlgo) == 320);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclRetryEnable) == 1920);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclRetryParams) == 1970);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclBufferName) == 2098);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclQos) == 2228);
/* v10 ends right after hcclQos. */
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclQos) + sizeof(uint32_t) == 2232);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclSymWinMaxMemSizePerRank) == 2232);
ABI_STATIC_ASSERT(offsetof(HcclCommConfig, hcclChannelSqDepth) == 2240);
ABI_STATIC_ASSERT(sizeof(((HcclCommConfig *)0)->hcclCommName) == 128);
ABI_STATIC_ASSERT(sizeof(((HcclCommConfig *)0)->hcclAlgo) == 1600);
ABI_STATIC_ASSERT(sizeof(((HcclCommConfig *)0)->hcclRetryEnable) == 50);

ABI_STATIC_ASSERT(sizeof(HcclConfigValue) == 4);
ABI_STATIC_ASSERT(sizeof(HcclComm) == 8);
ABI_STATIC_ASSERT(sizeof(HcclResult) == 4);
ABI_STATIC_ASSERT(sizeof(HcclDataType) == 4);
ABI_STATIC_ASSERT(sizeof(HcclReduceOp) == 4);

/* ---- HCCL constants and enums ------------------------------------------- */

ABI_STATIC_ASSERT(HCCL_SUCCESS == 0);
ABI_STATIC_ASSERT(HCCL_E_PARA == 1);
ABI_STATIC_ASSERT(HCCL_E_PTR == 2);
ABI_STATIC_ASSERT(HCCL_E_NOT_SUPPORT == 5);
ABI_STATIC_ASSERT(HCCL_E_TIMEOUT == 9);
ABI_STATIC_ASSERT(HCCL_E_OOM == 24);
ABI_STATIC_ASSERT(HCCL_E_IN_STATUS == 1041);

ABI_STATIC_ASSERT(HCCL_DATA_TYPE_INT8 == 0);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_FP16 == 3);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_FP32 == 4);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_UINT64 == 6);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_UINT8 == 7);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_FP64 == 10);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_BFP16 == 11);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_INT128 == 12);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_HIF8 == 14);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_FP8E8M0 == 17);
ABI_STATIC_ASSERT(HCCL_DATA_TYPE_RESERVED == 255);

ABI_STATIC_ASSERT(HCCL_REDUCE_SUM == 0 && HCCL_REDUCE_PROD == 1);
ABI_STATIC_ASSERT(HCCL_REDUCE_MAX == 2 && HCCL_REDUCE_MIN == 3);
ABI_STATIC_ASSERT(HCCL_SEND == 0 && HCCL_RECV == 1);

ABI_STATIC_ASSERT(HCCL_COMM_CONFIG_RESERVED == 12);
ABI_STATIC_ASSERT(HCCL_COMM_CONFIG_BUFFER_NAME == 11);
ABI_STATIC_ASSERT(HCCL_DETERMINISTIC == 0);
ABI_STATIC_ASSERT(HCCL_CONFIG_RESERVED == 1);
ABI_STATIC_ASSERT(HCCL_COMM_STATUS_READY == 0);
ABI_STATIC_ASSERT(HCCL_COMM_STATUS_INVALID == 254);
ABI_STATIC_ASSERT(HCCL_COMM_STATE_PHASE_INVALID == -1);
ABI_STATIC_ASSERT(HCCL_COMM_STATE_PHASE_RESUME_POST == 3);
ABI_STATIC_ASSERT(HCCL_OP_EXPANSION_AIV_ONLY == 6);
ABI_STATIC_ASSERT(HCCL_CONFIG_TYPE_HCCL_ALGO == 1);

ABI_STATIC_ASSERT(HCCL_COMM_CONFIG_INFO_BYTES == 24);
ABI_STATIC_ASSERT(HCCL_COMM_CONFIG_MAGIC_WORD == 0xf0f0f0f0u);
ABI_STATIC_ASSERT(HCCL_COMM_CONFIG_VERSION == 11);
ABI_STATIC_ASSERT(COMM_NAME_MAX_LENGTH == 128 && UDI_MAX_LENGTH == 128);
ABI_STATIC_ASSERT(BUFFER_NAME_MAX_LENGTH == 128);
ABI_STATIC_ASSERT(HCCL_COMM_ALGO_MAX_LENGTH == 1600);
ABI_STATIC_ASSERT(HCCL_COMM_DEFAULT_BUFFSIZE == 200);
ABI_STATIC_ASSERT(HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET == -1);
ABI_STATIC_ASSERT(HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE == 16);
ABI_STATIC_ASSERT(PYHCCL_HOST_RUNTIME == 1);

/* ---- ACL ---------------------------------------------------------------- */

ABI_STATIC_ASSERT(sizeof(aclError) == 4);
ABI_STATIC_ASSERT(sizeof(aclrtStream) == 8);
ABI_STATIC_ASSERT(sizeof(aclFloat16) == 2);
ABI_STATIC_ASSERT(ACL_ERROR_RT_PARAM_INVALID == 107000);
ABI_STATIC_ASSERT(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046);
ABI_STATIC_ASSERT(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT == 507047);
ABI_STATIC_ASSERT(ACL_ERROR_RT_FEATURE_NOT_SUPPORT == 207000);
ABI_STATIC_ASSERT(ACL_BF16 == 27 && ACL_FLOAT16 == 1);
ABI_STATIC_ASSERT(ACL_FLOAT == 0 && ACL_DT_UNDEFINED == -1);
ABI_STATIC_ASSERT(ACL_MEMCPY_HOST_TO_DEVICE == 1 && ACL_MEMCPY_DEVICE_TO_HOST == 2);
ABI_STATIC_ASSERT(ACL_MEMCPY_DEFAULT == 4);
ABI_STATIC_ASSERT(ACL_MEM_MALLOC_HUGE_ONLY == 1);
ABI_STATIC_ASSERT(ACL_EVENT_STATUS_COMPLETE == 0);
ABI_STATIC_ASSERT(ACL_EVENT_RECORDED_STATUS_COMPLETE == 1);
ABI_STATIC_ASSERT(ACL_HOST == 1);
ABI_STATIC_ASSERT(ACL_STREAM_STATUS_RESERVED == 0xFFFF);
ABI_STATIC_ASSERT(ACL_MAJOR_VERSION == 1 && ACL_MINOR_VERSION == 17);
ABI_STATIC_ASSERT(ACL_HBM_MEM_HUGE == 4 && ACL_MEM_P2P_HUGE1G == 17);
ABI_STATIC_ASSERT(ACL_MEM_LOCATION_TYPE_DEVICE == 1);
ABI_STATIC_ASSERT(ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED == 1);
ABI_STATIC_ASSERT(ACL_PROF_HCCL_TRACE == 0x20 && ACL_AICORE_PIPE_UTILIZATION == 1);
ABI_STATIC_ASSERT(offsetof(aclrtPhysicalMemProp, location) == 12);
ABI_STATIC_ASSERT(sizeof(aclrtPhysicalMemProp) == 32);

static int failures = 0;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        ++failures;
    }
}

#define CHECK(c) check((c) ? 1 : 0, #c)

/* static const int codes are not constant expressions in C: check at run time. */
static void check_acl_codes(void)
{
    CHECK(ACL_SUCCESS == 0);
    CHECK(ACL_ERROR_NONE == 0);
    CHECK(ACL_ERROR_INVALID_PARAM == 100000);
    CHECK(ACL_ERROR_UNINITIALIZE == 100001);
    CHECK(ACL_ERROR_REPEAT_INITIALIZE == 100002);
    CHECK(ACL_ERROR_REPEAT_FINALIZE == 100037);
    CHECK(ACL_ERROR_BAD_ALLOC == 200000);
    CHECK(ACL_ERROR_API_NOT_SUPPORT == 200001);
    CHECK(ACL_ERROR_INTERNAL_ERROR == 500000);
    CHECK(ACL_ERROR_PROFILING_FAILURE == 500005);
    CHECK(tu2_acl_rt_param_invalid() == ACL_ERROR_RT_PARAM_INVALID);
}

static uint32_t read_u32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static void check_config_init(void)
{
    HcclCommConfig c;
    uint64_t size64;
    uint64_t reserved64;
    size_t i;
    int strings_zero = 1;

    memset(&c, 0xab, sizeof(c)); /* Init must overwrite everything */
    HcclCommConfigInit(&c);
    memcpy(&size64, c.reserved + 0, sizeof(size64));
    memcpy(&reserved64, c.reserved + 16, sizeof(reserved64));
    CHECK(size64 == sizeof(HcclCommConfig));
    CHECK(size64 == 2248);
    CHECK(read_u32(c.reserved + 8) == 0xf0f0f0f0u);
    CHECK(read_u32(c.reserved + 12) == 11);
    CHECK(reserved64 == 0);
    CHECK(c.hcclBufferSize == 0xffffffffu);
    CHECK(c.hcclDeterministic == 0xffffffffu);
    CHECK(c.hcclCommName[0] == 0);
    CHECK(c.hcclUdi[0] == 0);
    CHECK(c.hcclOpExpansionMode == 0);
    CHECK(c.hcclRdmaTrafficClass == 0xffffffffu);
    CHECK(c.hcclRdmaServiceLevel == 0xffffffffu);
    CHECK(c.hcclWorldRankID == 0);
    CHECK(c.hcclJobID == 0);
    CHECK(c.aclGraphZeroCopyEnable == 0);
    CHECK(c.hcclExecTimeOut == -1);
    CHECK(c.hcclAlgo[0] == 0);
    CHECK(c.hcclRetryEnable[0] == 0);
    CHECK(c.hcclRetryParams[0] == 0);
    CHECK(c.hcclBufferName[0] == 0);
    CHECK(c.hcclQos == 0xffffffffu);
    CHECK(c.hcclSymWinMaxMemSizePerRank == 16);
    CHECK(c.hcclChannelSqDepth == 0xffffffffu);
    /* memset(0) first: whole strings and the padding bytes are zero. */
    for (i = 0; i < sizeof(c.hcclAlgo); ++i) {
        strings_zero &= c.hcclAlgo[i] == 0;
    }
    for (i = 0; i < sizeof(c.hcclBufferName); ++i) {
        strings_zero &= c.hcclBufferName[i] == 0;
    }
    CHECK(strings_zero);
    CHECK(((const unsigned char *)&c)[313] == 0); /* pad after aclGraphZeroCopyEnable */
    CHECK(((const unsigned char *)&c)[2244] == 0); /* tail pad */
    CHECK(tu2_init_buffer_size() == 0xffffffffu);
}

int main(void)
{
    HcclConfigValue v;
    HcclRootInfo root;

    v.value = 1;
    CHECK(v.value == 1);
    memset(&root, 0, sizeof(root));
    CHECK(sizeof(root.internal) == HCCL_ROOT_INFO_BYTES);

    check_acl_codes();
    check_config_init();
    CHECK(tu2_sizeof_comm_config() == sizeof(HcclCommConfig));
    CHECK(tu2_offsetof_chan_sq_depth() == 2240);
    CHECK(tu2_check_signatures() == 1);

    if (failures != 0) {
        printf("abi FAILED (%d checks)\n", failures);
        return 1;
    }
    printf("abi ok\n");
    return 0;
}
