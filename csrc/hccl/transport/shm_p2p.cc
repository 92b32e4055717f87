// Point-to-point over shared memory. Each ordered pair (p -> q) is a channel:
// p's segment holds kP2pSlots chunk slots for q and tx[q] (chunks published),
// q's segment holds rx[p] (chunks consumed). Chunk g goes to slot g % kP2pSlots
// once q consumed chunk g - kP2pSlots. Every slot starts with a header holding
// the message's total byte count, which the receiver checks. Progress toward a
// rank rings its doorbell, so a batch sleeps on one futex for all its peers.
#include <algorithm>
#include <cstring>
#include <vector>

#include "hccl/transport/shm.h"

namespace hccl {

HcclResult ShmTransport::p2p(P2pXfer *xfers, size_t n, WaitError *err) {
  const size_t payload = layout_.p2p_bytes - kP2pHeader;
  std::vector<size_t> done(n, 0);
  std::vector<char> finished(n, 0);
  std::vector<int> watch;
  for (size_t i = 0; i < n; ++i) {
    if (xfers[i].bytes == 0) finished[i] = 1;
    if (xfers[i].peer != rank_ &&
        std::find(watch.begin(), watch.end(), xfers[i].peer) == watch.end())
      watch.push_back(xfers[i].peer);
  }
  SyncLine *bell = &ctl(rank_)->doorbell;
  for (;;) {
    const uint32_t seen_bell = bell->value.load(std::memory_order_acquire);
    bool progressed = false;
    bool all_done = true;
    int blocked_on = -1;
    for (size_t i = 0; i < n; ++i) {
      if (finished[i]) continue;
      all_done = false;
      P2pXfer &x = xfers[i];
      // Messages between a pair match in order: only the first unfinished
      // transfer per (peer, direction) may move.
      bool earlier = false;
      for (size_t k = 0; k < i && !earlier; ++k)
        earlier = !finished[k] && xfers[k].peer == x.peer && xfers[k].send == x.send;
      if (earlier) continue;
      while (!finished[i]) {
        const size_t len = std::min(payload, x.bytes - done[i]);
        if (x.send) {
          uint32_t g = tx_count_[x.peer] + 1;
          uint32_t consumed = rx_line(x.peer, rank_)->value.load(std::memory_order_acquire);
          if (!reached(consumed, g - kP2pSlots)) break;
          char *slot = p2p_slot(rank_, x.peer, static_cast<int>(g % kP2pSlots));
          uint64_t total = x.bytes;
          std::memcpy(slot, &total, sizeof(total));
          std::memcpy(slot + kP2pHeader, static_cast<const char *>(x.buf) + done[i], len);
          tx_count_[x.peer] = g;
          post_line(tx_line(rank_, x.peer), g);
        } else {
          uint32_t g = rx_count_[x.peer] + 1;
          uint32_t avail = tx_line(x.peer, rank_)->value.load(std::memory_order_acquire);
          if (!reached(avail, g)) break;
          const char *slot = p2p_slot(x.peer, rank_, static_cast<int>(g % kP2pSlots));
          uint64_t total;
          std::memcpy(&total, slot, sizeof(total));
          if (total != x.bytes) {
            err->code = HCCL_E_PARA;
            err->what = "rank " + std::to_string(x.peer) + " sent " + std::to_string(total) +
                        " bytes, this rank expected " + std::to_string(x.bytes);
            return err->code;
          }
          std::memcpy(static_cast<char *>(x.buf) + done[i], slot + kP2pHeader, len);
          rx_count_[x.peer] = g;
          post_line(rx_line(rank_, x.peer), g);
        }
        if (x.peer != rank_) ring(x.peer);
        done[i] += len;
        progressed = true;
        if (done[i] == x.bytes) finished[i] = 1;
      }
      if (!finished[i] && blocked_on < 0) blocked_on = x.peer;
    }
    if (all_done) return HCCL_SUCCESS;
    if (progressed) continue;
    HcclResult r = wait_line(bell, seen_bell + 1, watch.data(), static_cast<int>(watch.size()),
                             blocked_on < 0 ? rank_ : blocked_on, err);
    if (r != HCCL_SUCCESS) return r;
  }
}

}  // namespace hccl
