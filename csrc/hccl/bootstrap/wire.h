// Internal to the bootstrap: the wire format between ranks and the rendezvous
// server, and the small socket helpers both sides use. Not used elsewhere.
//
// Every message is a frame: a 16-byte header {tag, type, payload length} in
// network byte order, then the payload. The job secret never crosses the
// network: the server opens every connection with a CHALLENGE (a fresh random
// nonce); the rank answers with a HELLO holding its own nonce and an
// HMAC-SHA256 keyed by the secret over both nonces, nRanks and its rank; the
// server checks it (nothing else is accepted before it) and answers with a
// PROOF, its own HMAC over the same, before anything else. A captured hello
// replayed on another connection fails: that connection's challenge differs.
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
constexpr char kHelloMagic[8] = {'P', 'Y', 'H', 'C', 'B', 'S', '0', '2'};
constexpr size_t kNonceBytes = 16;
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
  kChallenge = 8,  // server -> rank, first on every connection: ChallengePayload
  kProof = 9,      // server -> rank, right after an authentic hello: proof_mac (32 bytes)
};

struct ChallengePayload {
  char magic[8];  // kHelloMagic
  uint8_t nonce[kNonceBytes];
};
static_assert(sizeof(ChallengePayload) == 24, "challenge layout");

struct HelloPayload {
  char magic[8];
  uint8_t nonce[kNonceBytes];  // the rank's own, for the server's proof
  uint32_t nranks;             // network byte order on the wire
  uint32_t rank;
  uint8_t mac[32];  // hello_mac
};
static_assert(sizeof(HelloPayload) == 64, "hello layout");

// HMAC-SHA256(secret, "pyhccl bootstrap hello\0" || challenge || h.nonce ||
// nranks || rank): the rank's answer to the server's challenge.
void hello_mac(const uint8_t secret[32], const uint8_t challenge[kNonceBytes], const HelloPayload &h,
               uint8_t mac[32]);
// HMAC-SHA256(secret, "pyhccl bootstrap proof\0" || h.nonce || challenge ||
// nranks || rank): the server's, so that a rank is not fooled by an impostor.
void proof_mac(const uint8_t secret[32], const uint8_t challenge[kNonceBytes], const HelloPayload &h,
               uint8_t mac[32]);

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
