/* Gradient aggregation with AllReduce in C, against the CANN-compatible API.
 *
 * Build (an absolute rpath to pyhccl's libraries, so it runs from any directory):
 *   mpicc examples/allreduce.c -o examples/allreduce_c $(python -m pyhccl --cflags --libs) -lm
 * or `make examples/allreduce_c` (an rpath relative to the binary, $ORIGIN/../pyhccl/lib).
 * Run:    mpirun -np 4 examples/allreduce_c
 * Exit status is non-zero if any rank sees a wrong result. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define COUNT 256

#define ACL_CHECK(call)                                                              \
  do {                                                                               \
    aclError err_ = (call);                                                          \
    if (err_ != ACL_SUCCESS) {                                                       \
      const char *msg_ = aclGetRecentErrMsg();                                       \
      fprintf(stderr, "%s failed: %d %s\n", #call, err_, msg_ ? msg_ : "");          \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
    }                                                                                \
  } while (0)

#define HCCL_CHECK(call)                                                             \
  do {                                                                               \
    HcclResult res_ = (call);                                                        \
    if (res_ != HCCL_SUCCESS) {                                                      \
      const char *msg_ = aclGetRecentErrMsg();                                       \
      fprintf(stderr, "%s failed: %s %s\n", #call, HcclGetErrorString(res_),         \
              msg_ ? msg_ : "");                                                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
    }                                                                                \
  } while (0)

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* One device per rank: the rank's index on its host. */
  MPI_Comm node;
  int local_rank;
  uint32_t ndev;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  ACL_CHECK(aclInit(NULL));
  ACL_CHECK(aclrtGetDeviceCount(&ndev));
  int32_t dev = (int32_t)(local_rank % (int)ndev);
  ACL_CHECK(aclrtSetDevice(dev));

  /* Rank 0 creates the root info; MPI ships it to everyone. */
  HcclRootInfo root_info;
  if (rank == 0) HCCL_CHECK(HcclGetRootInfo(&root_info));
  MPI_Bcast(&root_info, HCCL_ROOT_INFO_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);

  HcclComm comm;
  HCCL_CHECK(HcclCommInitRootInfo((uint32_t)size, &root_info, (uint32_t)rank, &comm));

  float host[COUNT];
  for (int i = 0; i < COUNT; i++) host[i] = (float)(rank * 0.1f) + (float)i;
  size_t bytes = sizeof(host);
  void *send_buf, *recv_buf;
  aclrtStream stream;
  ACL_CHECK(aclrtMalloc(&send_buf, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
  ACL_CHECK(aclrtMalloc(&recv_buf, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
  ACL_CHECK(aclrtMemcpy(send_buf, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  ACL_CHECK(aclrtCreateStream(&stream));

  /* Enqueued on the stream; returns at once. */
  HCCL_CHECK(HcclAllReduce(send_buf, recv_buf, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                           comm, stream));
  ACL_CHECK(aclrtSynchronizeStream(stream));
  ACL_CHECK(aclrtMemcpy(host, bytes, recv_buf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));

  int ok = 1;
  for (int i = 0; i < COUNT; i++) {
    double expected = 0.0;
    for (int r = 0; r < size; r++) expected += (double)((float)(r * 0.1f) + (float)i);
    if (fabs(host[i] - expected) > 4e-7 * fabs(expected) + 1e-6) ok = 0;
  }
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("AllReduce over %d ranks, first 5 values:", size);
    for (int i = 0; i < 5; i++) printf(" %.4f", host[i]);
    printf("\n%s\n", all_ok ? "result verified" : "WRONG RESULT");
  }

  HCCL_CHECK(HcclCommDestroy(comm));
  ACL_CHECK(aclrtFree(send_buf));
  ACL_CHECK(aclrtFree(recv_buf));
  ACL_CHECK(aclrtDestroyStream(stream));
  ACL_CHECK(aclrtResetDevice(dev));
  ACL_CHECK(aclFinalize());
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
