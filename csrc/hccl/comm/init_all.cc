// HcclCommInitAll: one process drives ndev devices; rank i of one job lives
// on devices[i]. A root info is made here and every rank joins it from a
// thread of its own (set-up is collective and blocking, so the ranks must
// join at once); each thread sets its device first, so the communicator
// belongs to that device. If any rank fails, the ones that were built are
// destroyed again and no handle is returned.
#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hccl/bootstrap/bootstrap.h"
#include "hccl/comm/sub_comm.h"
#include "hccl/hccl.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

struct RankResult {
  HcclResult rc = HCCL_SUCCESS;
  std::string msg;
  HcclComm comm = nullptr;
};

void join_as(uint32_t ndev, const HcclRootInfo *root, uint32_t rank, int32_t device,
             const char *api, RankResult *out) {
  aclError e = aclrtSetDevice(device);
  if (e != ACL_SUCCESS) {
    out->rc = HCCL_E_RUNTIME;
    out->msg = hostrt::last_error();
    return;
  }
  out->rc = comm_init(ndev, root, rank, nullptr, api, &out->comm);
  if (out->rc != HCCL_SUCCESS) out->msg = hostrt::last_error();
  // The communicator keeps its device; this thread's reference goes.
  aclrtResetDevice(device);
}

// The most telling failure: one that is not merely "another rank failed".
size_t first_cause(const std::vector<RankResult> &res) {
  size_t pick = res.size();
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i].rc == HCCL_SUCCESS) continue;
    if (pick == res.size() || (res[pick].rc == HCCL_E_REMOTE && res[i].rc != HCCL_E_REMOTE)) pick = i;
  }
  return pick;
}

}  // namespace

HcclResult comm_init_all(uint32_t ndev, const int32_t *devices, HcclComm *comms, const char *api) {
  if (devices == nullptr || comms == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: %s is NULL", api, devices == nullptr ? "devices" : "comms");
  }
  uint32_t count = 0;
  if (aclrtGetDeviceCount(&count) != ACL_SUCCESS) return HCCL_E_RUNTIME;
  if (ndev == 0 || ndev > count) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: ndev (%u) must be between 1 and the device count (%u)", api, ndev,
                                  count);
  }
  std::set<int32_t> seen;
  for (uint32_t i = 0; i < ndev; ++i) {
    if (devices[i] < 0 || static_cast<uint32_t>(devices[i]) >= count) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: devices[%u] (%d) is not a device (there are %u)", api, i, devices[i],
                                    count);
    }
    if (!seen.insert(devices[i]).second) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: devices[%u] (%d) is listed twice (one rank per device)", api, i,
                                    devices[i]);
    }
  }
  for (uint32_t i = 0; i < ndev; ++i) comms[i] = nullptr;
  HcclRootInfo root;
  HcclResult r = root_info_create(&root, sizeof(root));
  if (r != HCCL_SUCCESS) return r;
  std::vector<RankResult> res(ndev);
  std::vector<std::thread> threads;
  try {
    for (uint32_t i = 0; i < ndev; ++i)
      threads.emplace_back(join_as, ndev, &root, i, devices[i], api, &res[i]);
  } catch (const std::exception &ex) {
    // Ranks already started fail at the rendezvous (the others never join),
    // within HCCL_CONNECT_TIMEOUT.
    for (size_t i = threads.size(); i < ndev; ++i) {
      res[i].rc = HCCL_E_INTERNAL;
      res[i].msg = std::string(api) + ": cannot start a thread for rank " + std::to_string(i) +
                   ": " + ex.what();
    }
  }
  for (std::thread &t : threads) t.join();
  size_t bad = first_cause(res);
  if (bad == res.size()) {
    for (uint32_t i = 0; i < ndev; ++i) comms[i] = res[i].comm;
    return HCCL_SUCCESS;
  }
  for (RankResult &x : res)
    if (x.comm != nullptr) HcclCommDestroy(x.comm);
  return HCCL_FAIL(res[bad].rc, "%s: rank %zu (device %d) failed: %s", api, bad, devices[bad],
                                res[bad].msg.c_str());
}

}  // namespace hccl
