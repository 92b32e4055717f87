// What travels on the TCP transport's sockets besides messages. Every data
// socket and the control socket of a pair start with a handshake that proves
// the job secret without sending it: the higher rank (the acceptor) sends a
// Challenge (a fresh random nonce); the lower rank (the dialer) answers with a
// Hello whose mac is an HMAC-SHA256 keyed by the secret over the challenge, its
// own nonce and what the socket is for; the acceptor checks it and answers an
// Ack whose mac (status ok) proves the secret back. A captured Hello replayed
// on another socket fails: that socket's challenge differs. The control socket
// then carries only failure notices (Notice + reason text).
#pragma once

#include <cstdint>

namespace hccl {
namespace tcp {

constexpr char kHelloMagic[8] = {'P', 'Y', 'H', 'C', 'T', 'C', 'P', '2'};
constexpr size_t kNonceBytes = 16;
constexpr uint32_t kNoticeMagic = 0x4e484350;  // "PCHN"
constexpr uint32_t kMaxNoticeText = 1024;

struct Challenge {
  char magic[8];
  uint8_t nonce[kNonceBytes];  // fresh for every accepted socket
};
static_assert(sizeof(Challenge) == 24, "challenge layout");

// mac = HMAC-SHA256(secret, "pyhccl tcp hello\0" || challenge || nonce ||
// comm || from || to || index || nsock), 32-bit fields big-endian.
struct Hello {
  char magic[8];
  uint8_t nonce[kNonceBytes];  // the dialer's own, for the Ack's mac
  uint8_t comm[16];            // this communicator's nonce (chosen by rank 0 at set-up)
  uint32_t from, to;           // ranks
  uint32_t index;              // 0 = control socket, 1..nsock = data sockets
  uint32_t nsock;
  uint8_t mac[32];
};
static_assert(sizeof(Hello) == 88, "hello layout");

enum AckStatus : uint32_t {
  kAckOk = 0,
  kAckBadSecret = 1,  // the hello's mac is wrong: wrong job secret, or a replayed hello
  kAckBadPeer = 2,    // not a connection this rank expects (wrong comm, ranks, index)
};

// mac (kAckOk only; zero otherwise) = HMAC-SHA256(secret, "pyhccl tcp ack\0"
// || hello.nonce || challenge || comm || from || to || index || nsock).
struct Ack {
  char magic[8];
  uint32_t status;
  uint32_t rank;  // who answers
  uint8_t mac[32];
};
static_assert(sizeof(Ack) == 48, "ack layout");

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
