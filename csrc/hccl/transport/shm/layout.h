// Layout of one rank's shared-memory segment (shm transport).
//
//   ShmControl        identity, doorbell, failure flag, arrival, send wait
//   SyncLine head[n]  slots this rank has published in its FIFO toward rank q
//   SyncLine tail[n]  slots this rank has consumed from rank q's FIFO toward it
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

constexpr uint64_t kMagic = 0x344d48534c434348ull;  // "HCCLSHM4"

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
  SyncLine doorbell;                  // bumped by peers whenever they move data toward us
  std::atomic<uint32_t> poll_sleeper;  // nonzero while this rank sleeps in poll(): wake by datagram
  uint64_t failed_seq;                 // the collective it failed in, written before `failed`
  std::atomic<uint32_t> failed;        // HcclResult once this rank gave up, else 0
  std::atomic<uint32_t> left;          // 1 once this rank destroyed the communicator
  std::atomic<uint64_t> arrived;       // the collective this rank runs now or next, at once
  // Nonzero while this rank runs a stalled send-only HcclSend to one local
  // peer: (generation << 32) | (peer + 1), a new generation per operation.
  // Peers follow these to find a cycle of blocking sends (a deadlock).
  std::atomic<uint64_t> send_wait;
  char reason[984];                    // why (NUL-terminated), written before `failed`
};
static_assert(sizeof(Control) == 1152, "control block layout");

// In front of every slot's payload.
struct alignas(64) SlotHeader {
  MsgHeader msg;     // the message's header, repeated in every slot of it
  uint64_t offset;   // where this slot's payload goes in the message
  uint32_t len;      // payload bytes in this slot
  uint32_t pad;
};
static_assert(sizeof(SlotHeader) == 64, "slot header is one cache line");

// True when a 32-bit counter value has reached target (modulo 2^32).
inline bool reached(uint32_t value, uint32_t target) {
  return static_cast<int32_t>(value - target) >= 0;
}

struct Layout {
  size_t head_off, tail_off, fifo_off, fifo_bytes, total;
  size_t slot_bytes;
  uint32_t slots;

  Layout(int nranks, int nlocal, size_t slot, uint32_t nslots) : slot_bytes(slot), slots(nslots) {
    const size_t page = 4096;
    head_off = sizeof(Control);
    tail_off = head_off + sizeof(SyncLine) * nranks;
    fifo_off = (tail_off + sizeof(SyncLine) * nranks + page - 1) / page * page;
    fifo_bytes = slot * nslots;
    total = fifo_off + fifo_bytes * (nlocal > 1 ? nlocal : 1);
  }
};

}  // namespace shm
}  // namespace hccl
