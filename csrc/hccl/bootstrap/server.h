// Internal to the bootstrap: the rendezvous server behind one root info.
#pragma once

#include <cstdint>
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
};

// Starts the detached server thread; it takes ownership of cfg.listen_fd (also
// on failure). E_INTERNAL with a message if the thread cannot start.
HcclResult start_server(const ServerConfig &cfg);

}  // namespace bsnet
}  // namespace hccl
