// Board exchanges: small collectives among the ranks of one host without
// FIFO messages. Each rank writes its part and then the exchange number on
// its own board (shm/layout.h; two boards, alternating), and waits (through
// the Waiter) for every peer's board to show the same number; a peer that
// sleeps meanwhile is woken through its doorbell, which it announced by
// counting itself in `waiters` before its last look. One cache line tells a
// peer a part is there; no FIFO message, no doorbell unless the peer sleeps.
//
// Why a board may be rewritten two exchanges later: a rank completes
// exchange g + 1 only once every peer posted g + 1, and a peer posts g + 1
// only after it finished reading the boards of exchange g.
//
// A peer that runs something else is told apart from one that is late: its
// board shows another signature, or it announced another collective (or a
// later one) without posting, or it sent a FIFO message (a send, or a
// collective on the FIFO path) that this rank would otherwise never read.
// So is one that destroyed its communicator without posting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "hccl/transport/shm/hub.h"
#include "hccl/transport/transport.h"
#include "hccl/transport/waiter.h"

namespace hccl {
namespace shm {

class BoardExchange {
 public:
  // The engine's hub (set after construction) and waiter.
  BoardExchange(int rank, int nranks, const std::unique_ptr<Hub> &hub, Waiter &waiter);

  // The largest part a board holds, 0 when boards cannot be used (a peer on
  // another host, PYHCCL_BOARD_BYTES=0).
  size_t board_bytes() const {
    return hub_ && hub_->all_local() && nranks_ > 1 ? hub_->layout().board_bytes : 0;
  }
  // One exchange; every rank makes the same exchanges in the same order.
  // Posts `bytes` of `mine` under `sig`, waits for every peer's part (under
  // the same signature, else a mismatch) and points views()[p] at it,
  // sizes()[p] its bytes (rank: mine). Views stay valid until this rank's
  // next exchange: a peer rewrites a board only after every rank posted the
  // next. The caller may move the views (they are its scratch).
  HcclResult exchange(const OpSig &sig, const void *mine, size_t bytes, WaitError *err);
  const char **views() { return views_.data(); }
  const size_t *sizes() const { return sizes_.data(); }
  // Arrival for a small collective whose first step is an exchange: posts
  // that exchange's part ahead (its exchange() then only waits), then waits
  // briefly (Waiter::brief) for every peer's part.
  bool arrive(const OpSig &sig, const void *mine, size_t bytes);

 private:
  class Wait;  // one exchange's wait (board_exchange.cc)

  void post(const OpSig &sig, const void *mine, size_t bytes);
  // Whether peer p posted exchange `gen`; *err when under another signature.
  bool ready(int p, uint64_t gen, const OpSig &sig, WaitError *err) const;
  // Whether peer p, which has not posted, never will (a mismatch, or it left).
  bool stuck(int p, uint64_t gen, const OpSig &sig, WaitError *err) const;

  const int rank_;
  const int nranks_;
  const std::unique_ptr<Hub> &hub_;
  Waiter &waiter_;
  uint64_t gen_ = 0;                 // exchanges posted
  std::vector<const char *> views_;  // of the last exchange, by rank
  std::vector<size_t> sizes_;
  // arrive()'s part, posted ahead of its exchange.
  struct {
    bool pending = false;
    const void *mine;
    size_t bytes;
  } ahead_;
};

}  // namespace shm
}  // namespace hccl
