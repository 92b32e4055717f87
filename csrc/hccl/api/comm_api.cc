// Communicator management entry points (hccl/hccl_comm.h).
#include <cstring>

#include "hccl/api/checks.h"
#include "hccl/api/state_callbacks.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/comm/comm.h"
#include "hccl/comm/memrange.h"
#include "hccl/comm/window.h"
#include "hccl/hccl.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

using hccl::Comm;

namespace {

HcclResult init_common(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                       const HcclCommConfig *config, HcclComm *comm, const char *api) {
  HCCL_TRY(hccl::check_ptr(comm, api, "comm"));
  HCCL_TRY(hccl::check_ptr(rootInfo, api, "rootInfo"));
  if (nRanks == 0 || nRanks > 65536) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: nRanks (%u) must be between 1 and 65536", api, nRanks);
  }
  HCCL_TRY(hccl::check_rank(rank, nRanks, api, "rank"));
  *comm = nullptr;
  return hccl::comm_init(nRanks, rootInfo, rank, config, api, comm);
}

}  // namespace

extern "C" {

HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo) {
  HCCL_TRY(hccl::check_ptr(rootInfo, "HcclGetRootInfo", "rootInfo"));
  return hccl::root_info_create(rootInfo, sizeof(*rootInfo));
}

HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                HcclComm *comm) {
  return init_common(nRanks, rootInfo, rank, nullptr, comm, "HcclCommInitRootInfo");
}

HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                      const HcclCommConfig *config, HcclComm *comm) {
  return init_common(nRanks, rootInfo, rank, config, comm, "HcclCommInitRootInfoConfig");
}

namespace {

HcclResult destroy(HcclComm comm, const char *api, int64_t timeout_ms) {
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  hccl::run_state_callbacks(comm, HCCL_COMM_STATE_PHASE_DESTROY_PRE);
  c = hccl::comm_unregister(comm);
  if (!c) return hccl::check_comm(comm, api, &c);  // destroyed meanwhile by another thread
  std::shared_ptr<Comm> keep = c;
  HcclResult r = hccl::comm_destroy(std::move(c), api, timeout_ms);
  // Registered memory is released with the communicator (its queued work ran).
  hccl::windows_drop(*keep);
  hccl::memory_drop_comm(keep->id);
  hccl::run_state_callbacks(comm, HCCL_COMM_STATE_PHASE_DESTROY_POST);
  return r;
}

}  // namespace

HcclResult HcclCommDestroy(HcclComm comm) { return destroy(comm, "HcclCommDestroy", -1); }

HcclResult PyhcclCommDestroyTimeout(HcclComm comm, int32_t timeoutMs) {
  const char *api = "PyhcclCommDestroyTimeout";
  if (timeoutMs < 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: timeoutMs (%d) must be >= 0", api, timeoutMs);
  }
  return destroy(comm, api, timeoutMs);
}

HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize) {
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, "HcclGetRankSize", &c));
  HCCL_TRY(hccl::check_ptr(rankSize, "HcclGetRankSize", "rankSize"));
  *rankSize = c->nranks;
  return HCCL_SUCCESS;
}

HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank) {
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, "HcclGetRankId", &c));
  HCCL_TRY(hccl::check_ptr(rank, "HcclGetRankId", "rank"));
  *rank = c->rank;
  return HCCL_SUCCESS;
}

HcclResult HcclGetCommName(HcclComm comm, char *commName) {
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, "HcclGetCommName", &c));
  HCCL_TRY(hccl::check_ptr(commName, "HcclGetCommName", "commName"));
  size_t n = c->name.size() < COMM_NAME_MAX_LENGTH - 1 ? c->name.size() : COMM_NAME_MAX_LENGTH - 1;
  std::memcpy(commName, c->name.data(), n);
  commName[n] = '\0';
  return HCCL_SUCCESS;
}

HcclResult HcclCommGetHandleWithName(const char *commName, HcclComm *comm) {
  const char *api = "HcclCommGetHandleWithName";
  HCCL_TRY(hccl::check_ptr(commName, api, "commName"));
  HCCL_TRY(hccl::check_ptr(comm, api, "comm"));
  std::shared_ptr<Comm> c = hccl::comm_lookup_name(commName);
  if (!c) {
    return HCCL_FAIL(HCCL_E_NOT_FOUND, "%s: no live communicator named \"%.128s\" in this process", api, commName);
  }
  *comm = c->handle();
  return HCCL_SUCCESS;
}

HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError) {
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, "HcclGetCommAsyncError", &c));
  HCCL_TRY(hccl::check_ptr(asyncError, "HcclGetCommAsyncError", "asyncError"));
  *asyncError = c->poll_error(nullptr);
  if (*asyncError != HCCL_SUCCESS) c->error_told = true;
  return HCCL_SUCCESS;
}

HcclResult HcclCommGetStatus(const char *commId, HcclCommStatus *status) {
  const char *api = "HcclCommGetStatus";
  HCCL_TRY(hccl::check_ptr(commId, api, "commId"));
  HCCL_TRY(hccl::check_ptr(status, api, "status"));
  std::shared_ptr<Comm> c = hccl::comm_lookup_name(commId);
  if (!c) {
    return HCCL_FAIL(HCCL_E_NOT_FOUND, "%s: no live communicator named \"%.128s\" in this process", api, commId);
  }
  *status = c->poll_error(nullptr) == HCCL_SUCCESS ? HCCL_COMM_STATUS_READY : HCCL_COMM_STATUS_INVALID;
  return HCCL_SUCCESS;
}

HcclResult HcclConfigGetInfo(HcclComm comm, HcclConfigType cfgType, uint32_t infoLen, void *info) {
  const char *api = "HcclConfigGetInfo";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_ptr(info, api, "info"));
  if (cfgType == HCCL_CONFIG_TYPE_OP_EXPANSION_MODE) {
    if (infoLen < sizeof(int32_t)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: infoLen (%u) is smaller than 4 bytes", api, infoLen);
    }
    int32_t mode = HCCL_OP_EXPANSION_MODE_HOST;  // algorithms run on the host CPU
    std::memcpy(info, &mode, sizeof(mode));
    return HCCL_SUCCESS;
  }
  if (cfgType == HCCL_CONFIG_TYPE_HCCL_ALGO) {
    const std::string &algo = c->settings.algo;
    if (infoLen < algo.size() + 1) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: infoLen (%u) cannot hold the algorithm string (%zu bytes)", api,
                                    infoLen, algo.size() + 1);
    }
    std::memcpy(info, algo.c_str(), algo.size() + 1);
    return HCCL_SUCCESS;
  }
  return HCCL_FAIL(HCCL_E_PARA, "%s: cfgType (%d) is not an HcclConfigType", api, static_cast<int>(cfgType));
}

HcclResult HcclSetCommConfig(HcclComm comm, HcclConfig config, HcclConfigValue configValue) {
  const char *api = "HcclSetCommConfig";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  if (config != HCCL_DETERMINISTIC) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: config (%d) is not a known HcclConfig", api, static_cast<int>(config));
  }
  if (configValue.value < 0 || configValue.value > 2) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: HCCL_DETERMINISTIC value (%d) must be 0, 1 or 2", api, configValue.value);
  }
  std::lock_guard<std::mutex> lock(c->mu);
  c->settings.deterministic = static_cast<uint32_t>(configValue.value);
  return HCCL_SUCCESS;
}

HcclResult HcclGetCommConfig(HcclComm comm, HcclConfig config, HcclConfigValue *configValue) {
  const char *api = "HcclGetCommConfig";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_ptr(configValue, api, "configValue"));
  if (config != HCCL_DETERMINISTIC) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: config (%d) is not a known HcclConfig", api, static_cast<int>(config));
  }
  std::lock_guard<std::mutex> lock(c->mu);
  configValue->value = static_cast<int32_t>(c->settings.deterministic);
  return HCCL_SUCCESS;
}

}  // extern "C"
