// Communicators from rank tables, sub-communicators, one process on several
// devices, and state callbacks (hccl/hccl_comm.h); see comm/sub_comm.h.
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "hccl/api/checks.h"
#include "hccl/api/state_callbacks.h"
#include "hccl/comm/sub_comm.h"
#include "hccl/hccl.h"
#include "runtime/hostrt.h"
#include "common/log.h"
#include "hccl/fail.h"

using hccl::Comm;

namespace {

struct Callback {
  HcclCommStateCallback fn;
  void *args;
};

std::mutex g_cb_mu;
std::map<std::string, Callback> &callbacks() {
  static auto *m = new std::map<std::string, Callback>;
  return *m;
}

}  // namespace

namespace hccl {

void run_state_callbacks(HcclComm comm, HcclCommStatePhase phase) {
  std::map<std::string, Callback> now;
  {
    std::lock_guard<std::mutex> lock(g_cb_mu);
    now = callbacks();
  }
  // Called without the lock: a callback may register or remove callbacks.
  for (const auto &kv : now) {
    HcclResult r = kv.second.fn(comm, phase, kv.second.args);
    if (r != HCCL_SUCCESS)
      PYHCCL_NOTICE(common::kInit, "state callback \"%s\" returned %d for phase %d (ignored)",
                   kv.first.c_str(), static_cast<int>(r), static_cast<int>(phase));
  }
}

}  // namespace hccl

extern "C" {

HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm) {
  return hccl::comm_init_rank_table(clusterInfo, rank, nullptr, comm, "HcclCommInitClusterInfo");
}

HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                         HcclCommConfig *config, HcclComm *comm) {
  return hccl::comm_init_rank_table(clusterInfo, rank, config, comm,
                                    "HcclCommInitClusterInfoConfig");
}

HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                   uint64_t subCommId, uint32_t subCommRankId,
                                   HcclCommConfig *config, HcclComm *subComm) {
  const char *api = "HcclCreateSubCommConfig";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_ptr(comm, api, "comm"));
  HCCL_TRY(hccl::check_comm(*comm, api, &c));
  return hccl::sub_comm_create(c, rankNum, rankIds, subCommId, subCommRankId, config, subComm,
                               api);
}

HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms) {
  return hccl::comm_init_all(ndev, devices, comms, "HcclCommInitAll");
}

HcclResult HcclCommRegCommStateCallback(const char *regName, HcclCommStateCallback cb, void *args) {
  const char *api = "HcclCommRegCommStateCallback";
  HCCL_TRY(hccl::check_ptr(regName, api, "regName"));
  size_t len = strnlen(regName, 256);
  if (len == 0 || len >= 256) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: regName must have 1 to 255 characters", api);
  }
  std::lock_guard<std::mutex> lock(g_cb_mu);
  if (cb == nullptr) {
    if (callbacks().erase(regName) == 0) {
      return HCCL_FAIL(HCCL_E_NOT_FOUND, "%s: no callback is registered as \"%s\"", api, regName);
    }
    return HCCL_SUCCESS;
  }
  callbacks()[regName] = Callback{cb, args};
  return HCCL_SUCCESS;
}

}  // extern "C"
