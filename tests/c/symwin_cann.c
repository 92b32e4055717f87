/*
 * A program written for CANN, unchanged but for how ranks find the root info
 * (a file here, MPI or a launcher on a cluster): it allocates with the
 * virtual-memory API, registers the memory as a symmetric window and runs
 * AllReduce and AllGather on it, as CANN's HcclCommSymWinRegister sample does.
 *
 *   symwin_cann RANK NRANKS ROOTFILE
 *
 * Prints "rank R: PASS" and exits 0 when every result is right.
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define ACLCHECK(ret)                                                                 \
  do {                                                                                \
    if ((ret) != ACL_SUCCESS) {                                                       \
      printf("acl interface return err %s:%d, retcode: %d (%s)\n", __FILE__, __LINE__, \
             (int)(ret), aclGetRecentErrMsg());                                       \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

#define HCCLCHECK(ret)                                                                \
  do {                                                                                \
    if ((ret) != HCCL_SUCCESS) {                                                      \
      printf("hccl interface return err %s:%d, retcode: %d (%s)\n", __FILE__, __LINE__, \
             (int)(ret), aclGetRecentErrMsg());                                       \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

static int share_root_info(int rank, const char *path, HcclRootInfo *info) {
  if (rank == 0) {
    char tmp[4200];
    if (HcclGetRootInfo(info) != HCCL_SUCCESS) return 1;
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(info, sizeof(*info), 1, f) != 1 || fclose(f) != 0) return 1;
    return rename(tmp, path);
  }
  for (int tries = 0; tries < 6000; ++tries) {
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
      size_t got = fread(info, sizeof(*info), 1, f);
      fclose(f);
      if (got == 1) return 0;
    }
    usleep(10000);
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s RANK NRANKS ROOTFILE\n", argv[0]);
    return 2;
  }
  uint32_t rankId = (uint32_t)atoi(argv[1]), rankSize = (uint32_t)atoi(argv[2]);
  int32_t deviceId = 0;  /* one device per rank on a real machine; any device here */
  ACLCHECK(aclInit(NULL));
  ACLCHECK(aclrtSetDevice(deviceId));
  aclrtStream stream;
  ACLCHECK(aclrtCreateStream(&stream));

  HcclRootInfo rootInfo;
  if (share_root_info((int)rankId, argv[3], &rootInfo) != 0) {
    printf("rank %u: no root info\n", rankId);
    return 1;
  }
  HcclCommConfig config;
  HcclCommConfigInit(&config);
  config.hcclSymWinMaxMemSizePerRank = 1; /* GB */
  HcclComm hcclComm;
  HCCLCHECK(HcclCommInitRootInfoConfig(rankSize, &rootInfo, rankId, &config, &hcclComm));

  /* Physical memory, mapped into reserved virtual addresses. */
  aclrtPhysicalMemProp prop;
  memset(&prop, 0, sizeof(prop));
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.id = (uint32_t)deviceId;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  size_t granularity = 0;
  ACLCHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                                            &granularity));
  const uint64_t count = 300001;  /* float32 elements per rank: odd on purpose */
  size_t need = (size_t)count * sizeof(float) * (2 + rankSize);
  size_t size = (need + granularity - 1) / granularity * granularity;
  void *virPtr = NULL;
  ACLCHECK(aclrtReserveMemAddress(&virPtr, size, 0, NULL, 0));
  aclrtDrvMemHandle handle;
  ACLCHECK(aclrtMallocPhysical(&handle, size, &prop, 0));
  ACLCHECK(aclrtMapMem(virPtr, size, 0, handle, 0));

  HcclCommSymWindow winHandle;
  HCCLCHECK(HcclCommSymWinRegister(hcclComm, virPtr, size, &winHandle, 1));

  /* Layout of the window: [send: count][recv: count][gather: count x ranks]. */
  float *sendBuf = (float *)virPtr;
  float *recvBuf = sendBuf + count;
  float *gatherBuf = recvBuf + count;
  float *host = (float *)malloc(count * sizeof(float) * rankSize);
  for (uint64_t i = 0; i < count; ++i) host[i] = (float)((i % 97) + rankId);
  ACLCHECK(aclrtMemcpy(sendBuf, count * sizeof(float), host, count * sizeof(float),
                       ACL_MEMCPY_HOST_TO_DEVICE));

  int bad = 0;
  for (int iter = 0; iter < 3; ++iter) {
    /* AllReduce out of place, then in place; small counts too (the window path
     * runs at every size). */
    HCCLCHECK(HcclAllReduce(sendBuf, recvBuf, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                            hcclComm, stream));
    HCCLCHECK(HcclAllReduce(sendBuf + 7, recvBuf + 7, 5, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX,
                            hcclComm, stream));
    HCCLCHECK(HcclAllGather(sendBuf, gatherBuf, count, HCCL_DATA_TYPE_FP32, hcclComm, stream));
    ACLCHECK(aclrtSynchronizeStream(stream));
    ACLCHECK(aclrtMemcpy(host, count * sizeof(float), recvBuf, count * sizeof(float),
                         ACL_MEMCPY_DEVICE_TO_HOST));
    for (uint64_t i = 0; i < count && bad < 5; ++i) {
      float want = (float)((i % 97) * rankSize + rankSize * (rankSize - 1) / 2);
      if (i >= 7 && i < 12) want = (float)((i % 97) + rankSize - 1);
      if (host[i] != want) {
        printf("rank %u: AllReduce[%llu] = %g, want %g\n", rankId, (unsigned long long)i,
               host[i], want);
        ++bad;
      }
    }
    ACLCHECK(aclrtMemcpy(host, count * sizeof(float) * rankSize, gatherBuf,
                         count * sizeof(float) * rankSize, ACL_MEMCPY_DEVICE_TO_HOST));
    for (uint32_t r = 0; r < rankSize; ++r)
      for (uint64_t i = 0; i < count && bad < 5; ++i)
        if (host[r * count + i] != (float)((i % 97) + r)) {
          printf("rank %u: AllGather block %u [%llu] = %g\n", rankId, r, (unsigned long long)i,
                 host[r * count + i]);
          ++bad;
        }
    HCCLCHECK(HcclAllReduce(recvBuf, recvBuf, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MIN,
                            hcclComm, stream));
    ACLCHECK(aclrtSynchronizeStream(stream));
  }

  HCCLCHECK(HcclCommSymWinDeregister(winHandle));
  ACLCHECK(aclrtUnmapMem(virPtr));
  ACLCHECK(aclrtFreePhysical(handle));
  ACLCHECK(aclrtReleaseMemAddress(virPtr));
  HCCLCHECK(HcclCommDestroy(hcclComm));
  ACLCHECK(aclrtDestroyStream(stream));
  ACLCHECK(aclrtResetDevice(deviceId));
  ACLCHECK(aclFinalize());
  free(host);
  if (bad) return 1;
  printf("rank %u: PASS\n", rankId);
  return 0;
}
