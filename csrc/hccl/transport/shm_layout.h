// Layout of one rank's shared-memory segment (shm transport).
//
//   Control          header, progress counter, doorbell, failure flag
//   SyncLine tx[n]   chunks this rank has published to peer q (p2p)
//   SyncLine rx[n]   chunks this rank has consumed from peer q (p2p)
//   (page aligned)   kSlots collective slots of slot_bytes
//                    n x kP2pSlots p2p slots of p2p_bytes (to peer q)
//
// Counters are 32-bit futex words compared modulo 2^32 (peers are never 2^31
// steps apart). Each sits on its own cache line with a count of sleepers, so
// a poster only calls FUTEX_WAKE when someone announced itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hccl/transport/transport.h"

namespace hccl {

constexpr uint64_t kShmMagic = 0x314d48534c434348ull;  // "HCCLSHM1"
constexpr int kP2pSlots = 2;
constexpr size_t kP2pHeader = 64;  // per p2p slot: total bytes of the message
// Published op signatures kept per rank: far more than the few operations a
// rank can run ahead of the slowest peer.
constexpr int kOpRing = 16;

struct alignas(64) SyncLine {
  std::atomic<uint32_t> value;
  std::atomic<uint32_t> waiters;
};
static_assert(sizeof(SyncLine) == 64, "one cache line per counter");

struct alignas(64) ShmControl {
  uint64_t magic;
  uint32_t nranks;
  uint32_t rank;
  uint64_t slot_bytes;
  uint64_t p2p_bytes;
  SyncLine progress;                // last collective round posted
  SyncLine doorbell;                // bumped by peers on p2p progress toward us
  std::atomic<uint32_t> failed;     // HcclResult once this rank gave up, else 0
  char reason[252];                 // why (NUL-terminated), written before `failed`
  OpSig ops[kOpRing];               // collective `seq` at ops[seq % kOpRing]
};

// True when a 32-bit counter value has reached target (modulo 2^32).
inline bool reached(uint32_t value, uint32_t target) {
  return static_cast<int32_t>(value - target) >= 0;
}

struct ShmLayout {
  size_t tx_off, rx_off, coll_off, p2p_off, total;
  size_t slot_bytes, p2p_bytes;

  ShmLayout(int nranks, size_t slot, size_t p2p) : slot_bytes(slot), p2p_bytes(p2p) {
    const size_t page = 4096;
    tx_off = sizeof(ShmControl);
    rx_off = tx_off + sizeof(SyncLine) * nranks;
    coll_off = (rx_off + sizeof(SyncLine) * nranks + page - 1) / page * page;
    p2p_off = coll_off + slot * 2;
    total = p2p_off + p2p * kP2pSlots * nranks;
  }
};

}  // namespace hccl
