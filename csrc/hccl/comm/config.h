// Communicator settings: the caller's HcclCommConfig (read defensively, as
// docs/ABI.md 3.1 says: versioned, size-checked) plus environment defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hccl/hccl_types.h"

namespace hccl {

struct CommSettings {
  uint32_t buffer_mb = HCCL_COMM_DEFAULT_BUFFSIZE;  // staging budget per rank
  uint32_t deterministic = 0;  // as configured; results are deterministic anyway
  std::string name;            // "" = derive from the job id
  int exec_timeout_s = 0;      // seconds a wait may last without progress
  std::string algo;            // hcclAlgo, kept for HcclConfigGetInfo
  uint32_t op_expansion_mode = 0;
  uint64_t symwin_max_gb = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;  // hcclSymWinMaxMemSizePerRank
};

// Fills *out from config (NULL = defaults) and the environment (HCCL_BUFFSIZE,
// HCCL_EXEC_TIMEOUT); `deterministic` defaults to global_deterministic().
// E_PARA + message naming `api` and the field when the config is malformed.
HcclResult read_comm_config(const HcclCommConfig *config, const char *api, CommSettings *out);

// The process-wide HCCL_DETERMINISTIC setting (0, 1 or 2): what HcclSetConfig
// last set, else the HCCL_DETERMINISTIC variable (0/1/2, true/false; another
// value warns once and reads as 0). Reported only: reductions here are
// deterministic whatever its value.
int32_t global_deterministic();
void set_global_deterministic(int32_t value);

}  // namespace hccl
