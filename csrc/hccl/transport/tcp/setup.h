// Bringing up the TCP connections of a communicator. Every rank with peers
// on other hosts listens on its chosen interface (net/netif.h) and publishes
// the address through the bootstrap; then, for every pair on different hosts,
// the lower rank dials the higher one nsock + 1 times (a control socket and
// the data sockets); on each, the higher rank sends a random challenge, the
// lower one answers with an HMAC of it keyed by the job secret, naming the
// communicator's nonce and the pair, and the higher rank checks it and proves
// the secret back (wire.h). The secret never crosses the network; a
// connection that cannot prove it, or replays another's hello, is refused and
// logged. Everything is bounded by the set-up deadline
// (HCCL_CONNECT_TIMEOUT); unauthenticated connections get one second to say
// hello and at most 64 wait at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hccl/net/addr.h"
#include "hccl/net/socket.h"
#include "hccl/transport/transport.h"

namespace hccl {
namespace tcp {

struct Setup {
  int rank = 0;
  int nranks = 1;
  std::vector<char> remote;          // by rank: 1 when a TCP connection is needed
  std::vector<net::SockAddr> addrs;  // by rank: each rank's data listener
  std::vector<std::string> hosts;    // by rank: its host's name, for messages
  uint8_t secret[32] = {};
  uint8_t nonce[16] = {};
  int nsock = 2;
  int buffer_bytes = 4 << 20;
  size_t stage_bytes = 256 << 10;
  net::Clock::time_point deadline;
  int exec_timeout_s = 1836;  // the communicator's: bounds how long a connection outlives an outage
  std::string congestion;     // TCP congestion control of every socket (PYHCCL_TCP_CONGESTION); empty: the system's
  // Polled too: when it turns readable (the bootstrap root's verdict that
  // another rank failed), set-up stops waiting with HCCL_E_REMOTE.
  int watch_fd = -1;
};

// Opens this rank's data listener on `local` (HCCL_IF_BASE_PORT honoured).
// Returns the fd or -1 after setting a message naming `api`.
int open_listener(const net::SockAddr &local, const char *api, net::SockAddr *bound, HcclResult *code);

// Connects to every remote peer; fills conns[peer] for those. Closes
// `listen_fd`. On failure calls on_error(code, why), why saying which peer
// (and host) and what went wrong, while this rank's sockets are still open,
// and returns what it returns: a peer must not see them close (and report
// that) before this rank's own error is on record.
using OnError = std::function<HcclResult(HcclResult, const std::string &)>;
HcclResult connect_all(const Setup &s, int listen_fd,
                       std::vector<std::unique_ptr<Connection>> *conns, const OnError &on_error);

}  // namespace tcp
}  // namespace hccl
