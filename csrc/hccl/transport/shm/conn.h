// A connection to a peer on the same host: this rank's FIFO toward the peer
// (in its own segment) carries sends, the peer's FIFO toward this rank
// carries receives. A message fills consecutive slots; every slot repeats
// the message header, so a receiver checks each one. A receive that reduces
// does so straight from the slot (one pass, no extra copy). A send from
// stable device memory (Transfer::shared) puts only a reference in its slot,
// one slot for the whole message: the receiver reads the bytes in place,
// through its mapping of the sender's memory, and the send completes once the
// receiver consumed that slot. A reference per 128 KiB, as the copies go, made
// the receiver wait for the sender to refill the FIFO every 1 MiB: a sender
// asleep in another wait (a ring between hosts) paced the fold inside the host.
#pragma once

#include <deque>

#include "hccl/transport/shm/hub.h"

namespace hccl {
namespace shm {

class ShmConnection final : public Connection {
 public:
  ShmConnection(Hub &hub, int peer);

  const char *kind() const override { return "shm"; }
  void post(Transfer *t) override { (t->kind == Transfer::kSend ? sends_ : recvs_).push_back(t); }
  HcclResult progress(bool *moved, WaitError *err) override;
  bool peer_failed(bool probe, WaitError *err) override;
  void notify_failure(HcclResult code, const std::string &why, uint64_t seq, int culprit) override {
    hub_.fail(code, why, seq, culprit);
  }
  bool peer_reported_failure(WaitError *err) override { return hub_.peer_failed(peer_, true, err); }
  bool unreceived() const override {
    return !reached(tx_tail_->value.load(std::memory_order_acquire), tx_count_);
  }
  bool peer_left() const override { return hub_.peer_left(peer_); }
  void clear() override {
    sends_.clear();
    recvs_.clear();
    lent_.clear();
    rx_part_ = 0;
  }
  void *map_peer_memory(const MemDesc &d) override { return hub_.map_peer_memory(peer_, d); }

 private:
  bool send_some(WaitError *err);
  HcclResult recv_some(bool *moved, WaitError *err);

  Hub &hub_;
  const int me_;
  const size_t payload_;  // payload bytes per slot
  const uint32_t slots_;
  // My FIFO toward the peer: slots I published, and the peer's count of consumed ones.
  char *tx_fifo_;
  SyncLine *tx_head_, *tx_tail_;
  // The peer's FIFO toward me.
  const char *rx_fifo_;
  SyncLine *rx_head_, *rx_tail_;
  uint32_t tx_count_ = 0, rx_count_ = 0;
  size_t rx_part_ = 0;  // bytes of the slot after rx_count_ already consumed
  // The most one reference covers (SlotHeader::len is 32 bits).
  static constexpr size_t kLendMaxBytes = size_t{1} << 30;
  std::deque<Transfer *> sends_, recvs_;
  // Sends by reference whose slots are all published: each completes once
  // the peer consumed `slot`, its last.
  struct Lent {
    Transfer *t;
    uint32_t slot;
  };
  std::deque<Lent> lent_;
};

}  // namespace shm
}  // namespace hccl
