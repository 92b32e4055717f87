// The shared-memory connection (conn.h): messages cut into slots of the
// FIFO toward the peer, and a peer that left or died told from a late one.
#include "hccl/transport/shm/conn.h"

#include <algorithm>
#include <cstring>

#include "hccl/reduce/reduce.h"

namespace hccl {
namespace shm {

ShmConnection::ShmConnection(Hub &hub, int peer)
    : Connection(peer),
      hub_(hub),
      me_(hub.rank()),
      payload_(hub.layout().slot_bytes - sizeof(SlotHeader)),
      slots_(hub.layout().slots),
      tx_fifo_(hub.fifo(hub.rank(), peer)),
      tx_head_(hub.head(hub.rank(), peer)),
      tx_tail_(hub.tail(peer, hub.rank())),
      rx_fifo_(hub.fifo(peer, hub.rank())),
      rx_head_(hub.head(peer, hub.rank())),
      rx_tail_(hub.tail(hub.rank(), peer)) {}

bool ShmConnection::peer_failed(bool probe, WaitError *err) {
  // `left` first: a peer sets `failed` before `left`, so a peer seen to have
  // left and not failed really left normally.
  const bool left = hub_.peer_left(peer_);
  if (hub_.peer_failed(peer_, probe, err)) return true;
  if (!left) return false;
  // Gone for good: only what it published before is still to come.
  const bool recv_stuck = !recvs_.empty() &&
                          !reached(rx_head_->value.load(std::memory_order_acquire), rx_count_ + 1);
  const uint32_t consumed = tx_tail_->value.load(std::memory_order_acquire);
  const bool send_stuck = (!sends_.empty() && !reached(consumed, tx_count_ + 1 - slots_)) ||
                          (!lent_.empty() && !reached(consumed, lent_.front().slot));
  if (!recv_stuck && !send_stuck) return false;
  WaitError::closed(peer_, "rank " + std::to_string(peer_) +
                              " destroyed its communicator while this rank still " +
                              (recv_stuck ? "expected data from it" : "sent data to it"))
      .into(err);
  return true;
}

HcclResult ShmConnection::progress(bool *moved, WaitError *err) {
  *moved = send_some(err);
  return recv_some(moved, err);
}

// Fills free slots from the queued sends, in order.
bool ShmConnection::send_some(WaitError *err) {
  (void)err;
  bool moved = false;
  const uint32_t consumed = tx_tail_->value.load(std::memory_order_acquire);
  for (; !lent_.empty() && reached(consumed, lent_.front().slot); lent_.pop_front()) {
    lent_.front().t->complete = true;
    moved = true;
  }
  const size_t slot_bytes = hub_.layout().slot_bytes;
  while (!sends_.empty()) {
    Transfer *t = sends_.front();
    const size_t ready = t->input_ready();
    const bool by_ref = t->shared.fd >= 0 && hub_.pid_of(peer_) != 0;
    while (!t->started || t->done < t->bytes) {
      const uint32_t g = tx_count_ + 1;
      if (!reached(tx_tail_->value.load(std::memory_order_acquire), g - slots_)) return moved;
      size_t len = std::min(by_ref ? kLendMaxBytes : payload_, t->bytes - t->done);
      if (t->done + len > ready) {
        // Only what the dependency produced, in whole elements.
        len = (ready - t->done) / t->elem * t->elem;
        if (len == 0 && t->bytes > 0) return moved;
      }
      char *slot = tx_fifo_ + static_cast<size_t>(g % slots_) * slot_bytes;
      SlotHeader *h = reinterpret_cast<SlotHeader *>(slot);
      h->msg = make_header(*t);
      h->offset = t->done;
      h->len = static_cast<uint32_t>(len);
      h->shared = by_ref ? 1 : 0;
      if (by_ref) {
        MemDesc at = t->shared;
        at.offset += t->done;
        at.bytes = len;
        std::memcpy(slot + sizeof(SlotHeader), &at, sizeof(at));
      } else if (len > 0) {
        std::memcpy(slot + sizeof(SlotHeader), t->src + t->done, len);
      }
      tx_count_ = g;
      tx_head_->value.store(g, std::memory_order_release);
      hub_.ring(peer_);
      t->started = true;
      t->done += len;
      moved = true;
    }
    sends_.pop_front();
    if (by_ref)
      lent_.push_back(Lent{t, tx_count_});
    else
      t->complete = true;
  }
  return moved;
}

// Consumes published slots into the queued receives, in order. A slot is
// consumed in pieces of at most one copied slot's payload, each as far as a
// reduction's local operand is ready, and no more pieces a call than the
// FIFO holds slots: a message by reference (one slot) pipelines into the
// steps after it as copied slots would.
HcclResult ShmConnection::recv_some(bool *moved, WaitError *err) {
  const size_t slot_bytes = hub_.layout().slot_bytes;
  uint32_t pieces = 0;
  while (!recvs_.empty()) {
    Transfer *t = recvs_.front();
    while (!t->started || t->done < t->bytes) {
      if (pieces == slots_) return HCCL_SUCCESS;  // *moved: the engine calls again
      const uint32_t g = rx_count_ + 1;
      if (!reached(rx_head_->value.load(std::memory_order_acquire), g)) return HCCL_SUCCESS;
      const char *slot = rx_fifo_ + static_cast<size_t>(g % slots_) * slot_bytes;
      const SlotHeader *h = reinterpret_cast<const SlotHeader *>(slot);
      last_seen_ = h->msg.sig;
      HcclResult rc = check_header(h->msg, *t, err);
      if (rc != HCCL_SUCCESS) return rc;
      const size_t len = h->len;
      if (h->offset + rx_part_ != t->done || len - rx_part_ > t->bytes - t->done) {
        const std::string what =
            "garbled message from rank " + std::to_string(peer_) + " (slot out of order)";
        return WaitError::corrupt(-1, what).into(err);
      }
      size_t take = std::min(len - rx_part_, payload_);
      if (t->kind == Transfer::kRecvReduce) {  // as far as the local operand is ready
        const size_t ready = t->input_ready();
        if (ready < t->done + take) take = ready > t->done ? (ready - t->done) / t->elem * t->elem : 0;
        if (take == 0 && len > 0) return HCCL_SUCCESS;
      }
      const char *payload = slot + sizeof(SlotHeader);
      if (h->shared != 0) {
        MemDesc at;
        std::memcpy(&at, payload, sizeof(at));
        payload = at.bytes == len ? static_cast<const char *>(hub_.map_peer_memory(peer_, at)) : nullptr;
        if (payload == nullptr)
          return WaitError::failure(HCCL_E_INTERNAL, peer_,
                                    "cannot map the device memory of rank " + std::to_string(peer_))
              .into(err);
      }
      payload += rx_part_;
      if (t->kind == Transfer::kRecvReduce) {
        const void *srcs[3];
        const int n = t->operands(t->done, payload, srcs);
        if (take > 0) reduce(t->dtype, t->op, t->dst + t->done, srcs, n, take / t->elem);
      } else if (take > 0) {
        std::memcpy(t->dst + t->done, payload, take);
      }
      rx_part_ += take;
      if (rx_part_ == len) {  // the slot is free again
        rx_part_ = 0;
        rx_count_ = g;
        rx_tail_->value.store(g, std::memory_order_release);
        hub_.ring(peer_);
      }
      t->started = true;
      t->done += take;
      *moved = true;
      ++pieces;
    }
    t->complete = true;
    recvs_.pop_front();
  }
  return HCCL_SUCCESS;
}

}  // namespace shm
}  // namespace hccl
