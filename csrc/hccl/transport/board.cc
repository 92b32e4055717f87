// Board exchanges (engine.h): small collectives among the ranks of one host
// without FIFO messages. Each rank writes its part and then the exchange
// number on its own board (two boards, alternating), and waits for every
// peer's board to show the same number; a peer that sleeps meanwhile is
// woken through its doorbell, which it announced by counting itself in
// `waiters` before its last look.
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
#include <algorithm>
#include <cstring>
#include <ctime>

#include "common/clock.h"
#include "common/env.h"
#include "common/futex.h"
#include "hccl/transport/engine.h"
#include "runtime/hostrt.h"

namespace hccl {
namespace {

HcclResult mismatch(int peer, const OpSig &mine, const OpSig &theirs, WaitError *err) {
  err->code = HCCL_E_PARA;
  err->mismatch = true;
  err->peer = peer;
  err->mine = mine;
  err->theirs = theirs;
  err->what = "rank " + std::to_string(peer) + " called another operation";
  return err->code;
}

}  // namespace

bool Engine::board_ready(int p, uint64_t gen, const OpSig &sig, WaitError *err) const {
  const shm::BoardHeader *h = hub->board(p, static_cast<int>(gen & 1));
  if (h->gen.load(std::memory_order_acquire) != gen) return false;
  if (h->sig != sig) mismatch(p, sig, h->sig, err);
  return true;
}

bool Engine::board_stuck(int p, uint64_t gen, const OpSig &sig, WaitError *err) const {
  OpSig theirs;
  WaitError e;
  // A FIFO message sent after the peer posted (the next step of its algorithm)
  // is no mismatch: the post is seen once the message is.
  if (hub->fifo_pending(p, &theirs))
    return !board_ready(p, gen, sig, &e) && mismatch(p, sig, theirs, err) != HCCL_SUCCESS;
  // A peer sets `failed` (when it failed or aborted) before `left`, and posts before it leaves.
  if (hub->peer_left(p)) {
    if (hub->peer_failed(p, false, err)) return true;
    if (board_ready(p, gen, sig, &e)) return false;
    err->code = HCCL_E_REMOTE;
    err->peer = p;
    err->what = "rank " + std::to_string(p) +
                " destroyed its communicator while this rank waited for its part of collective #" +
                std::to_string(sig.seq);
    return true;
  }
  uint64_t at = 0;
  if (hub->announced(p, sig.seq, &at, &theirs)) {
    if (theirs != sig) return mismatch(p, sig, theirs, err) != HCCL_SUCCESS;
    return false;
  }
  if (static_cast<int64_t>(at - sig.seq) <= 0) return false;  // not there yet
  // Past this collective without posting this board (it posts before it moves
  // on): another sequence of collectives, or another algorithm for this one.
  if (board_ready(p, gen, sig, &e)) return false;
  theirs = OpSig();
  theirs.seq = at;
  OpSig known;
  if (hub->announced(p, at, &at, &known)) theirs = known;
  return mismatch(p, sig, theirs, err) != HCCL_SUCCESS;
}

void Engine::board_post(const OpSig &sig, const void *mine, size_t bytes) {
  const uint64_t gen = ++board_gen_;
  const int b = static_cast<int>(gen & 1);
  shm::BoardHeader *own = hub->board(rank_, b);
  if (bytes > 0) std::memcpy(hub->board_data(rank_, b), mine, bytes);
  own->bytes = bytes;
  own->sig = sig;
  own->gen.store(gen, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // against a sleeper's `waiters` (below)
  for (int p : hub->local_ranks())
    if (p != rank_ && hub->ctl(p)->doorbell.waiters.load(std::memory_order_relaxed) != 0) hub->ring(p);
}

HcclResult Engine::board_exchange(const OpSig &sig, const void *mine, size_t bytes, WaitError *err) {
  const char **views = board_views_.data();
  size_t *sizes = board_sizes_.data();
  if (!ahead_.pending) {
    board_post(sig, mine, bytes);
  } else if (ahead_.mine != mine || ahead_.bytes != bytes) {
    ahead_.pending = false;
    err->code = HCCL_E_INTERNAL;
    err->what = "the board part posted ahead differs from the algorithm's (a bug)";
    return err->code;
  }
  ahead_.pending = false;
  const uint64_t gen = board_gen_;
  const int b = static_cast<int>(gen & 1);
  views[rank_] = static_cast<const char *>(mine);
  sizes[rank_] = bytes;

  irq_ = hostrt::interrupts();
  int next = 0;  // peers before it (in rank order) have posted
  const int64_t start = common::now_ns();
  int64_t idle_since = 0, next_probe = start + kSliceNs;
  int64_t next_warn = watchdog_ns_;
  OrderWatch order;  // ends (unpublished) with the exchange
  for (;;) {
    const uint32_t bell = hub->doorbell()->value.load(std::memory_order_acquire);
    for (; next < nranks_; ++next) {
      if (next == rank_) continue;
      if (!board_ready(next, gen, sig, err)) break;
      if (err->code != HCCL_SUCCESS) return err->code;
      views[next] = hub->board_data(next, b);
      sizes[next] = hub->board(next, b)->bytes;
    }
    if (next == nranks_) return HCCL_SUCCESS;
    // PYHCCL_FAULT=slow_board_look: a late second look, by which time a peer
    // may have posted and gone on to send FIFO messages (tests/test_c_hccl.py).
    static const bool slow_look = std::strcmp(common::env_str("PYHCCL_FAULT", ""), "slow_board_look") == 0;
    if (slow_look) {
      timespec ts{0, 2000000};
      nanosleep(&ts, nullptr);
    }
    if (board_stuck(next, gen, sig, err)) return order_override(&order, err);
    const int64_t now = common::now_ns();
    if (idle_since == 0) idle_since = now;
    const bool probe = now >= next_probe;
    if (probe) next_probe = now + kSliceNs;
    if (check_failures(probe, err) != HCCL_SUCCESS) return order_override(&order, err);
    if (probe && watchdog_due(now - start, &next_warn)) {
      std::vector<int> peers;
      for (int p = next; p < nranks_; ++p)
        if (p != rank_ && hub->board(p, b)->gen.load(std::memory_order_acquire) != gen)
          peers.push_back(p);
      watchdog_warn(now - start, peers);
    }
    if (probe && order.wait.active() && order_deadlock(&order, next, now, err)) return err->code;
    if (now - start >= timeout_ns_) {
      err->code = HCCL_E_TIMEOUT;
      err->what = timeout_text(next);
      err->timeout = true;
      err->peer = next;
      uint64_t at = hub->arrived(next);
      if (!hub->announced(next, at, &at, &err->last_seen)) err->last_seen = OpSig();
      return err->code;
    }
    if (spin_or_yield(now - idle_since)) continue;
    if (!order.wait.active()) order_publish(&order, next);
    // Counted among the waiters before the last look: a peer posting after
    // that look sees the count and rings.
    shm::SyncLine *line = hub->doorbell();
    line->waiters.fetch_add(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const shm::BoardHeader *h = hub->board(next, b);
    if (line->value.load(std::memory_order_seq_cst) == bell &&
        h->gen.load(std::memory_order_seq_cst) != gen)
      common::futex_wait(&line->value, bell, std::min(next_probe, start + timeout_ns_), /*shared=*/true);
    line->waiters.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace hccl
