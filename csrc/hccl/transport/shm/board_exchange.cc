// Board exchanges (board_exchange.h): posting a part, telling a late peer
// from one that runs something else, and one exchange's wait.
#include "hccl/transport/shm/board_exchange.h"

#include <cstring>
#include <ctime>
#include <string>

#include "common/env.h"

namespace hccl {
namespace shm {

// What an exchange waits for: every peer's board at this exchange's number,
// checked in rank order (`next`: the first peer not seen to have posted).
class BoardExchange::Wait : public WaitFor {
 public:
  Wait(BoardExchange &x, const OpSig &sig, uint64_t gen)
      : x_(x), hub_(*x.hub_), sig_(sig), gen_(gen), b_(static_cast<int>(gen & 1)) {
    blame_grace = false;  // every peer is local and posts in place: none relays a verdict
  }

  HcclResult poll(bool *done, bool *moved, WaitError *err) override {
    (void)moved;  // a peer's post is no progress: the exchange's timeout counts from its start
    for (; next_ < x_.nranks_; ++next_) {
      if (next_ == x_.rank_) continue;
      if (!x_.ready(next_, gen_, sig_, err)) break;
      if (err->code != HCCL_SUCCESS) return err->code;
      x_.views_[next_] = hub_.board_data(next_, b_);
      x_.sizes_[next_] = hub_.board(next_, b_)->bytes;
    }
    if ((*done = next_ == x_.nranks_)) return HCCL_SUCCESS;
    // PYHCCL_FAULT=slow_board_look: a late second look, by which time a peer
    // may have posted and gone on to send FIFO messages (tests/c/test_c_hccl.py).
    static const bool slow_look = std::strcmp(common::env_str("PYHCCL_FAULT", ""), "slow_board_look") == 0;
    if (slow_look) {
      timespec ts{0, 2000000};
      nanosleep(&ts, nullptr);
    }
    return x_.stuck(next_, gen_, sig_, err) ? err->code : HCCL_SUCCESS;
  }
  int blocker() const override { return next_; }
  std::vector<int> missing() const override {
    std::vector<int> peers;
    for (int p = next_; p < x_.nranks_; ++p)
      if (p != x_.rank_ && hub_.board(p, b_)->gen.load(std::memory_order_acquire) != gen_) peers.push_back(p);
    return peers;
  }
  WaitError timed_out(int peer, std::string what) const override {
    OpSig seen;
    uint64_t at = hub_.arrived(peer);
    if (!hub_.announced(peer, at, &at, &seen)) seen = OpSig();
    return WaitError::timed_out(peer, std::move(what), seen);
  }
  bool still_idle() const override {
    return hub_.board(next_, b_)->gen.load(std::memory_order_seq_cst) != gen_;
  }

 private:
  BoardExchange &x_;
  const Hub &hub_;
  const OpSig &sig_;
  const uint64_t gen_;
  const int b_;
  int next_ = 0;
};

BoardExchange::BoardExchange(int rank, int nranks, const std::unique_ptr<Hub> &hub, Waiter &waiter)
    : rank_(rank), nranks_(nranks), hub_(hub), waiter_(waiter), views_(nranks), sizes_(nranks) {}

bool BoardExchange::ready(int p, uint64_t gen, const OpSig &sig, WaitError *err) const {
  const BoardHeader *h = hub_->board(p, static_cast<int>(gen & 1));
  if (h->gen.load(std::memory_order_acquire) != gen) return false;
  if (h->sig != sig) WaitError::sig_mismatch(p, sig, h->sig).into(err);
  return true;
}

bool BoardExchange::stuck(int p, uint64_t gen, const OpSig &sig, WaitError *err) const {
  OpSig theirs;
  WaitError e;
  // A FIFO message sent after the peer posted (the next step of its algorithm)
  // is no mismatch: the post is seen once the message is.
  if (hub_->fifo_pending(p, &theirs)) {
    if (ready(p, gen, sig, &e)) return false;
    // An earlier collective's message (a signature-check header that this rank
    // receives later, ctx.h): the peer is behind, not elsewhere. Had it run
    // something else then, that collective's check fails every rank.
    if (theirs.seq != 0 && static_cast<int64_t>(theirs.seq - sig.seq) < 0) return false;
    WaitError::sig_mismatch(p, sig, theirs).into(err);
    return true;
  }
  // A peer sets `failed` (when it failed or aborted) before `left`, and posts before it leaves.
  if (hub_->peer_left(p)) {
    if (hub_->peer_failed(p, false, err)) return true;
    if (ready(p, gen, sig, &e)) return false;
    WaitError::closed(p, "rank " + std::to_string(p) +
                             " destroyed its communicator while this rank waited for its part of "
                             "collective #" + std::to_string(sig.seq))
        .into(err);
    return true;
  }
  uint64_t at = 0;
  if (hub_->announced(p, sig.seq, &at, &theirs)) {
    if (theirs == sig) return false;
    WaitError::sig_mismatch(p, sig, theirs).into(err);
    return true;
  }
  if (static_cast<int64_t>(at - sig.seq) <= 0) return false;  // not there yet
  // Past this collective without posting this board (it posts before it moves
  // on): another sequence of collectives, or another algorithm for this one.
  if (ready(p, gen, sig, &e)) return false;
  theirs = OpSig();
  theirs.seq = at;
  OpSig known;
  if (hub_->announced(p, at, &at, &known)) theirs = known;
  WaitError::sig_mismatch(p, sig, theirs).into(err);
  return true;
}

void BoardExchange::post(const OpSig &sig, const void *mine, size_t bytes) {
  const uint64_t gen = ++gen_;
  const int b = static_cast<int>(gen & 1);
  BoardHeader *own = hub_->board(rank_, b);
  if (bytes > 0) std::memcpy(hub_->board_data(rank_, b), mine, bytes);
  own->bytes = bytes;
  own->sig = sig;
  own->gen.store(gen, std::memory_order_release);
  // Against a sleeper's `waiters` (Hub::sleep_on_doorbell): it is seen, or the sleeper sees the post.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int p : hub_->local_ranks())
    if (p != rank_ && hub_->ctl(p)->doorbell.waiters.load(std::memory_order_relaxed) != 0) hub_->ring(p);
}

bool BoardExchange::arrive(const OpSig &sig, const void *mine, size_t bytes) {
  if (!waiter_.brief_enabled()) return false;
  hub_->announce(sig);
  post(sig, mine, bytes);
  ahead_ = {true, mine, bytes};
  const uint64_t gen = gen_;
  const int b = static_cast<int>(gen & 1);
  return waiter_.brief([&](int p) { return hub_->board(p, b)->gen.load(std::memory_order_acquire) == gen; });
}

HcclResult BoardExchange::exchange(const OpSig &sig, const void *mine, size_t bytes, WaitError *err) {
  if (!ahead_.pending) {
    post(sig, mine, bytes);
  } else if (ahead_.mine != mine || ahead_.bytes != bytes) {
    ahead_.pending = false;
    return WaitError::internal("the board part posted ahead differs from the algorithm's (a bug)").into(err);
  }
  ahead_.pending = false;
  views_[rank_] = static_cast<const char *>(mine);
  sizes_[rank_] = bytes;
  Wait w(*this, sig, gen_);
  return waiter_.wait(w, err);
}

}  // namespace shm
}  // namespace hccl
