// Gradient aggregation with the acltdt communicator API, one process per rank, no MPI.
//
// pyhccl's own program for the flow of the article its project started from: the same
// calls, file name, build line and output, so the article's four steps work as printed
// (see README.md beside this file; four_steps.sh performs them).
//
//   g++ -o aigc_hccl_allreduce_example aigc_hccl_allreduce_example.cpp
//       -I$CANN_HOME/include -L$CANN_HOME/lib -lacl_tdt -lacl_rt -lacl_mdl -std=c++11
//     (one line)
//   ./aigc_hccl_allreduce_example 0 4 & ... ./aigc_hccl_allreduce_example 3 4
//
// An optional third argument names another group than the article's
// "default_aigc_comm_group", so that two jobs can run side by side (tests do).
//
// Every rank fills 256 floats with rank*0.1, rank*0.1 + 1, ... and AllReduces them
// (sum); at 4 ranks each prints 0.6 4.6 8.6 12.6 16.6. The acltdt calls are a pyhccl
// extension mapped onto HCCL (include/acl/acl_tdt.h): CANN's acl_tdt.h has no
// communicator. Exit status is non-zero on any failed call or wrong element.
#include "acl/acl.h"
#include "acl/acl_tdt.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

// Every ACL call is checked; the runtime's message names the call and the argument.
#define CHECK_ACL_RET(expr)                                                             \
  do {                                                                                  \
    aclError aclRet = (expr);                                                           \
    if (aclRet != ACL_SUCCESS) {                                                        \
      const char *detail = aclGetRecentErrMsg();                                        \
      std::cerr << "ACL Error: " << aclRet << " in " << #expr << " ("                   \
                << (detail != nullptr ? detail : "no message") << ")" << std::endl;     \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

static bool parse_rank_args(int argc, char *argv[], int32_t *rank, int32_t *world) {
  if (argc != 3 && argc != 4) return false;
  char *end1 = nullptr, *end2 = nullptr;
  long r = std::strtol(argv[1], &end1, 10), w = std::strtol(argv[2], &end2, 10);
  if (*end1 != '\0' || *end2 != '\0' || w < 1 || r < 0 || r >= w || w > 4096) return false;
  *rank = static_cast<int32_t>(r);
  *world = static_cast<int32_t>(w);
  return true;
}

int main(int argc, char *argv[]) {
  int32_t rankId = 0, worldSize = 0;
  if (!parse_rank_args(argc, argv, &rankId, &worldSize)) {
    std::cerr << "Usage: " << argv[0] << " <rank_id> <world_size> [group]"
              << "  (0 <= rank_id < world_size)" << std::endl;
    return 1;
  }
  const int32_t deviceId = rankId;  // one device per rank
  std::cout << "Process " << getpid() << " (Rank " << rankId << ") starting..." << std::endl;

  CHECK_ACL_RET(aclInit(nullptr));
  CHECK_ACL_RET(aclrtSetDevice(deviceId));
  aclrtContext context = nullptr;
  aclrtStream stream = nullptr;
  CHECK_ACL_RET(aclrtCreateContext(&context, deviceId));
  CHECK_ACL_RET(aclrtCreateStream(&stream));

  // The ranks of "default_aigc_comm_group" find each other by that name: no MPI, no
  // variables on one host (across hosts: MASTER_ADDR / MASTER_PORT).
  const char *group = argc == 4 ? argv[3] : "default_aigc_comm_group";
  acltdtComm comm = nullptr;
  CHECK_ACL_RET(acltdtCreateComm(&comm, worldSize, rankId, group, stream));
  std::cout << "Rank " << rankId << ": acltdtComm created." << std::endl;

  const size_t count = 256;
  const size_t bytes = count * sizeof(float);  // acltdt sizes are in bytes
  void *gradients = nullptr;
  CHECK_ACL_RET(aclrtMalloc(&gradients, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> local(count);
  std::iota(local.begin(), local.end(), static_cast<float>(rankId) * 0.1f);
  CHECK_ACL_RET(aclrtMemcpy(gradients, bytes, local.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::cout << "Rank " << rankId << ": Local gradients initialized and copied to device."
            << std::endl;

  // Enqueued on the stream and returns at once; the sum lands in place.
  CHECK_ACL_RET(acltdtCommAllReduce(comm, gradients, bytes, ACL_FLOAT, ACL_TDT_COMM_REDUCE_SUM,
                                    stream));
  std::cout << "Rank " << rankId << ": acltdtCommAllReduce started." << std::endl;
  CHECK_ACL_RET(aclrtSynchronizeStream(stream));
  std::cout << "Rank " << rankId << ": acltdtCommAllReduce completed." << std::endl;

  std::vector<float> global(count);
  CHECK_ACL_RET(aclrtMemcpy(global.data(), bytes, gradients, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  std::cout << "Rank " << rankId << ": Global gradients (first 5 elements): ";
  for (size_t i = 0; i < std::min<size_t>(count, 5); ++i) std::cout << global[i] << " ";
  std::cout << std::endl;

  // Element i is the sum over ranks r of (r * 0.1 + i): 0.1 * W(W-1)/2 + W * i.
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    double expected = 0.0;
    for (int32_t r = 0; r < worldSize; ++r) expected += static_cast<double>(r * 0.1f) + i;
    if (std::fabs(global[i] - expected) > 1e-6 * std::fabs(expected) + 1e-5) ++wrong;
  }
  if (wrong != 0)
    std::cerr << "Rank " << rankId << ": " << wrong << " of " << count << " elements are wrong"
              << std::endl;

  CHECK_ACL_RET(acltdtDestroyComm(comm));
  CHECK_ACL_RET(aclrtFree(gradients));
  CHECK_ACL_RET(aclrtDestroyStream(stream));
  CHECK_ACL_RET(aclrtDestroyContext(context));
  CHECK_ACL_RET(aclrtResetDevice(deviceId));
  CHECK_ACL_RET(aclFinalize());
  std::cout << "Rank " << rankId << ": All resources released. Exiting." << std::endl;
  return wrong == 0 ? 0 : 1;
}
