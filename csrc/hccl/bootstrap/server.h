// Internal to the bootstrap: the rendezvous server behind one root info.
#pragma once

#include <cstdint>
#include <chrono>
#include <string>

#include "hccl/hccl_types.h"

namespace hccl {
namespace bsnet {

struct ServerConfig {
  int listen_fd = -1;       // bound, listening, non-blocking; the server owns it
  uint8_t secret[32] = {};  // the job secret every rank must present
  std::string where;        // "host:port", for log lines
  int join_timeout_s = 120; // all ranks must join this long after the first one
  int idle_timeout_s = 1836;  // give up if nobody at all joins for this long
  std::string job;            // job id (hex), for bootstrap_linger
};

// Starts the detached server thread; it takes ownership of cfg.listen_fd (also
// on failure). E_INTERNAL with a message if the thread cannot start.
HcclResult start_server(const ServerConfig &cfg);

// Waits, at most `limit`, until this process's server of `job` (if any) has
// finished: told every rank its verdict and seen them go.
void wait_server(const std::string &job, std::chrono::milliseconds limit);

}  // namespace bsnet
}  // namespace hccl
