// Communicator settings: the caller's HcclCommConfig (read defensively, as
// ABI.md 3.1 says: versioned, size-checked) plus environment defaults.
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
};

// Fills *out from config (NULL = defaults) and the environment (HCCL_BUFFSIZE,
// HCCL_DETERMINISTIC, HCCL_EXEC_TIMEOUT). E_PARA + message naming `api` and
// the field when the config is malformed.
HcclResult read_comm_config(const HcclCommConfig *config, const char *api, CommSettings *out);

}  // namespace hccl
