// Layout of one rank's shared-memory segment (shm transport).
//
//   ShmControl        identity, doorbell, failure flag, send wait
//   Announce          the collective this rank runs now, and its signature
//   Blocked           where this rank's process is blocked now (any communicator)
//   SyncLine head[n]  slots this rank has published in its FIFO toward rank q
//   SyncLine tail[n]  slots this rank has consumed from rank q's FIFO toward it
//   Board[2]          small collectives: BoardHeader + board_bytes, alternating
//   (page aligned)    one FIFO per local peer (by local index): `slots` slots
//                     of slot_bytes, each a SlotHeader then payload
//
// Counters are 32-bit futex words compared modulo 2^32. Each sits on its own
// cache line with a count of sleepers, so that a poster only calls FUTEX_WAKE
// when somebody announced itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hccl/transport/transport.h"

namespace hccl {
namespace shm {

constexpr uint64_t kMagic = 0x364d48534c434348ull;  // "HCCLSHM6"

struct alignas(64) SyncLine {
  std::atomic<uint32_t> value;
  std::atomic<uint32_t> waiters;
};
static_assert(sizeof(SyncLine) == 64, "one cache line per counter");

struct alignas(64) Control {
  uint64_t magic;
  uint32_t nranks;
  uint32_t rank;
  uint64_t slot_bytes;
  uint32_t slots;
  uint32_t nlocal;
  uint64_t board_bytes;
  SyncLine doorbell;                  // bumped by peers whenever they move data toward us
  std::atomic<uint32_t> poll_sleeper;  // nonzero while this rank sleeps in poll(): wake by datagram
  uint64_t failed_seq;                 // the collective it failed in, written before `failed`
  std::atomic<uint32_t> failed;        // HcclResult once this rank gave up, else 0
  std::atomic<uint32_t> left;          // 1 once this rank destroyed the communicator
  // Nonzero while this rank runs a stalled send-only HcclSend to one local
  // peer: (generation << 32) | (peer + 1), a new generation per operation.
  // Peers follow these to find a cycle of blocking sends (a deadlock).
  std::atomic<uint64_t> send_wait;
  int32_t culprit;                     // the rank at fault, written before `failed`
  char reason[980];                    // why (NUL-terminated), written before `failed`
};
static_assert(sizeof(Control) == 1152, "control block layout");

// The collective a rank runs now or next, at once, and its signature, one
// per parity of its number: a peer reading collective k's while the owner
// writes k + 1's cannot see a torn one (hub.h, Hub::announced). Apart from
// Control, whose failure flags peers read after every collective.
struct alignas(64) Announce {
  std::atomic<uint64_t> arrived;
  std::atomic<uint64_t> words[2][4];  // OpSig as four words
};
static_assert(sizeof(Announce) == 128, "announcement layout");

// Where the process of a rank is blocked now, in whichever communicator
// (shm/waits.h): the same record in every communicator's segment of the
// process, so that a peer blocked in one of them sees that this process is
// blocked in another (two communicators used in opposite orders). Written as
// a seqlock: `gen` odd while the words change; a new even value per record.
struct alignas(64) Blocked {
  std::atomic<uint64_t> gen;
  std::atomic<uint64_t> comm;   // the communicator's uid (Hub::uid); 0: not blocked
  std::atomic<uint64_t> seq;    // its collective the wait is in
  std::atomic<uint32_t> pid;    // the process it waits for
  std::atomic<uint32_t> waits;  // waits of the process blocked now
  std::atomic<uint32_t> flags;  // kHeld, kVerdict
  static constexpr uint32_t kHeld = 1;     // no thread of the process can call another collective
  static constexpr uint32_t kVerdict = 2;  // it found this wait deadlocked
};
static_assert(sizeof(Blocked) == 64, "one cache line");

// A board: a rank pins its part of a small collective here and every local
// peer reads it in place (board_exchange.h). `gen` is written last. The
// part follows at once, so a small one shares the header's cache line.
struct BoardHeader {
  std::atomic<uint64_t> gen;  // the exchange number this board holds
  uint64_t bytes;
  OpSig sig;
};
static_assert(sizeof(BoardHeader) == 48, "board header layout");

// In front of every slot's payload.
struct alignas(64) SlotHeader {
  MsgHeader msg;     // the message's header, repeated in every slot of it
  uint64_t offset;   // where this slot's payload goes in the message
  uint32_t len;      // payload bytes in this slot (by reference: bytes it names)
  uint32_t shared;   // 1: the payload is a MemDesc naming the bytes in the sender's device memory
};
static_assert(sizeof(SlotHeader) == 64, "slot header is one cache line");

// True when a 32-bit counter value has reached target (modulo 2^32).
inline bool reached(uint32_t value, uint32_t target) {
  return static_cast<int32_t>(value - target) >= 0;
}

struct Layout {
  size_t announce_off, blocked_off, head_off, tail_off, board_off, board_stride, fifo_off, fifo_bytes, total;
  size_t slot_bytes, board_bytes;
  uint32_t slots;

  Layout(int nranks, int nlocal, size_t slot, uint32_t nslots, size_t board)
      : slot_bytes(slot), board_bytes(board), slots(nslots) {
    const size_t page = 4096;
    announce_off = sizeof(Control);
    blocked_off = announce_off + sizeof(Announce);
    head_off = blocked_off + sizeof(Blocked);
    tail_off = head_off + sizeof(SyncLine) * nranks;
    board_off = tail_off + sizeof(SyncLine) * nranks;
    board_stride = (sizeof(BoardHeader) + board + 63) / 64 * 64;
    fifo_off = (board_off + 2 * board_stride + page - 1) / page * page;
    fifo_bytes = slot * nslots;
    total = fifo_off + fifo_bytes * (nlocal > 1 ? nlocal : 1);
  }
};

}  // namespace shm
}  // namespace hccl
