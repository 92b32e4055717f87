// The seam between the algorithms and how bytes move between ranks.
//
// Model: every rank owns kSlots staging slots of slot_bytes() bytes. An
// algorithm runs in numbered rounds (one counter per communicator, the same
// sequence on every rank). In round j a rank may fill its slot j % kSlots,
// then post(j); a peer that returned from wait(rank, j) may read that slot
// until it posts j + 1. Shared memory (shm.*) makes peer slots directly
// readable; a TCP transport (tcp.*, future) would implement peer_slot() as a
// local mirror that wait() fills, without touching the algorithms.
// Point-to-point traffic (HcclSend/HcclRecv) goes through p2p(), which runs
// a batch of transfers to completion, progressing all of them together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hccl/hccl_types.h"

namespace hccl {

// Why a wait or transfer failed; `what` reads well after "HcclAllReduce: ".
struct WaitError {
  HcclResult code = HCCL_SUCCESS;
  std::string what;
};

// What a collective is, published by every rank so that peers can tell when
// ranks called different operations (or the same with different arguments).
struct OpSig {
  uint64_t seq;    // collective number on the communicator, from 1
  uint64_t count;  // as compared across ranks (0 when it may differ)
  uint32_t kind, dtype, root, op;
};

// One point-to-point transfer of a batch.
struct P2pXfer {
  bool send;
  int peer;
  void *buf;
  size_t bytes;
};

class Transport {
 public:
  static constexpr int kSlots = 2;

  virtual ~Transport() = default;

  virtual const char *kind() const = 0;
  // Bytes of one staging slot; equal on every rank.
  virtual size_t slot_bytes() const = 0;
  virtual void *local_slot(int slot) = 0;
  virtual const void *peer_slot(int peer, int slot) = 0;

  // Announces that this rank reached `round` (rounds only grow).
  virtual void post(uint64_t round) = 0;
  // Waits until `peer` posted `round`, bounded by the exec timeout; fails
  // early when the peer died or gave up.
  virtual HcclResult wait(int peer, uint64_t round, WaitError *err) = 0;

  // Publishes this rank's current collective (before its first post in it).
  virtual void publish_op(const OpSig &sig) = 0;
  // The peer's published collective for sequence number `seq`, valid once the
  // peer posted a round of it (sig.seq != seq: it is at another operation).
  virtual OpSig peer_op(int peer, uint64_t seq) = 0;

  // Runs every transfer of the batch to completion (messages between a pair
  // of ranks match in order); a receive checks the sender's byte count.
  virtual HcclResult p2p(P2pXfer *xfers, size_t n, WaitError *err) = 0;

  // Marks this rank failed so that peers waiting on it stop at once.
  virtual void abort(HcclResult code, const std::string &why) = 0;

  // Single-copy access to a peer's aclrtMalloc memory: a readable and writable
  // view of `bytes` at `offset` in the arena (memfd `fd`, `size` bytes) of the
  // peer, or nullptr when this transport cannot map it.
  virtual void *peer_arena(int peer, int fd, uint64_t size, uint64_t offset, size_t bytes) {
    return nullptr;
  }

  // Seconds a wait may last without progress.
  virtual void set_exec_timeout(int seconds) = 0;
};

}  // namespace hccl
