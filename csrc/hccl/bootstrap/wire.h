// Internal to the bootstrap: the wire format between ranks and the rendezvous
// server, and the small socket helpers both sides use. Not used elsewhere.
//
// Every message is a frame: a 16-byte header {tag, type, payload length} in
// network byte order, then the payload. The first frame on a connection is a
// HELLO carrying the job secret; nothing else is accepted before it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hccl/hccl_types.h"
#include "hccl/net/socket.h"

namespace hccl {
namespace bsnet {

using net::Clock;

constexpr uint32_t kFrameTag = 0x50484231;  // "PHB1"
constexpr size_t kHeaderBytes = 16;
constexpr char kHelloMagic[8] = {'P', 'Y', 'H', 'C', 'B', 'S', '0', '1'};
constexpr uint32_t kMaxRanks = 1u << 16;
// Bootstrap rounds carry small set-up records; this bounds the server's memory.
constexpr uint64_t kMaxContribution = 64ull << 20;
// ... and this the concatenation a round returns.
constexpr uint64_t kMaxRoundBytes = 1ull << 30;
constexpr uint64_t kMaxErrorText = 1024;

enum FrameType : uint32_t {
  kHello = 1,    // rank -> server: HelloPayload
  kReady = 2,    // server -> rank: all ranks joined; payload u32 nranks
  kContrib = 3,  // rank -> server: this rank's bytes for the current round
  kResult = 4,   // server -> rank: the concatenation in rank order
  kError = 5,    // server -> rank: u32 HcclResult + message text; the job failed
  kBye = 6,      // rank -> server: bootstrap_close, no payload
  kFail = 7,     // rank -> server: u32 HcclResult + message; fail the job for everyone with it
};

struct HelloPayload {
  char magic[8];
  uint8_t secret[32];
  uint32_t nranks;  // network byte order on the wire
  uint32_t rank;
};
static_assert(sizeof(HelloPayload) == 48, "hello layout");

void encode_header(uint8_t out[kHeaderBytes], uint32_t type, uint64_t len);
// False if the tag is wrong.
bool decode_header(const uint8_t in[kHeaderBytes], uint32_t *type, uint64_t *len);

// Outcome of a deadline-bounded socket operation.
enum class Io { kOk, kTimeout, kClosed, kError };

// Blocking-with-deadline transfers on a non-blocking socket; *err gets errno
// when kError. Handle partial transfers and EINTR; never raise SIGPIPE.
Io send_all(int fd, const void *buf, size_t len, Clock::time_point deadline, int *err);
Io recv_all(int fd, void *buf, size_t len, Clock::time_point deadline, int *err);

// Shared with the TCP transport (net/socket.h).
using net::close_fd;
using net::errno_text;
using net::poll_ms;
using net::set_nodelay;

}  // namespace bsnet
}  // namespace hccl
