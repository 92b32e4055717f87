// What travels on the TCP transport's sockets besides messages. Every data
// socket and the control socket of a pair start with a Hello from the lower
// rank (the dialer) and an Ack from the higher one; the control socket then
// carries only failure notices (Notice + reason text).
#pragma once

#include <cstdint>

namespace hccl {
namespace tcp {

constexpr char kHelloMagic[8] = {'P', 'Y', 'H', 'C', 'T', 'C', 'P', '1'};
constexpr uint32_t kNoticeMagic = 0x4e484350;  // "PCHN"
constexpr uint32_t kMaxNoticeText = 1024;

struct Hello {
  char magic[8];
  uint8_t secret[32];  // the job secret from the root info
  uint8_t nonce[16];   // this communicator's (chosen by rank 0 at set-up)
  uint32_t from, to;   // ranks
  uint32_t index;      // 0 = control socket, 1..nsock = data sockets
  uint32_t nsock;
};
static_assert(sizeof(Hello) == 72, "hello layout");

enum AckStatus : uint32_t {
  kAckOk = 0,
  kAckBadSecret = 1,  // wrong job secret
  kAckBadPeer = 2,    // not a connection this rank expects (wrong comm, ranks, index)
};

struct Ack {
  char magic[8];
  uint32_t status;
  uint32_t rank;  // who answers
};
static_assert(sizeof(Ack) == 16, "ack layout");

struct Notice {
  uint32_t magic;
  uint32_t code;  // HcclResult of the failure; 0: goodbye (the communicator was destroyed)
  uint32_t len;   // reason bytes that follow
  int32_t culprit;  // the rank at fault (the sender's, or the one it relays)
  uint64_t seq;   // the collective the sender failed in
};
static_assert(sizeof(Notice) == 24, "notice layout");

}  // namespace tcp
}  // namespace hccl
