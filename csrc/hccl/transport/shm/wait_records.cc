// Hub's wait records (hub.h): words a rank publishes in its segment about
// where it is blocked, and the readers its local peers use to find a
// deadlock: the send wait of a stalled blocking send (a cycle of them, every
// FIFO on it full, is one; Engine::run) and the process's Blocked record
// (waits.h; two communicators used in opposite orders, transport/order.cc).
#include "hccl/transport/shm/hub.h"

namespace hccl {
namespace shm {

void Hub::publish_send_wait(int to) {
  uint64_t w = 0;
  if (to >= 0) {
    if (++send_wait_gen_ == 0) ++send_wait_gen_;
    w = static_cast<uint64_t>(send_wait_gen_) << 32 | static_cast<uint32_t>(to + 1);
  }
  ctl(rank_)->send_wait.store(w, std::memory_order_seq_cst);
}

bool Hub::send_wait_cycle(std::vector<int> *cycle, std::vector<uint64_t> *words) const {
  cycle->clear();
  words->clear();
  int r = rank_;
  do {
    // Longer than the host's ranks: the chain ends in a cycle without this rank.
    if (cycle->size() >= local_count_) return false;
    const uint64_t w = ctl(r)->send_wait.load(std::memory_order_seq_cst);
    const int to = static_cast<int>(static_cast<uint32_t>(w)) - 1;
    if (w == 0 || to < 0 || to >= nranks_ || to == r || local_index_[to] < 0) return false;
    cycle->push_back(r);
    words->push_back(w);
    r = to;
  } while (r != rank_);
  for (size_t i = 0; i < cycle->size(); ++i) {
    const int from = (*cycle)[i], to = (*cycle)[(i + 1) % cycle->size()];
    const uint32_t published = head(from, to)->value.load(std::memory_order_seq_cst);
    const uint32_t consumed = tail(to, from)->value.load(std::memory_order_seq_cst);
    if (published - consumed < layout_.slots) return false;  // room left: it may still move
  }
  return true;
}

void Hub::write_blocked(const BlockedAt &b) {
  Blocked *w = blocked(rank_);
  w->gen.store(b.gen - 1, std::memory_order_relaxed);  // odd: being rewritten
  std::atomic_thread_fence(std::memory_order_release);
  w->comm.store(b.comm, std::memory_order_relaxed);
  w->seq.store(b.seq, std::memory_order_relaxed);
  w->pid.store(b.pid, std::memory_order_relaxed);
  w->waits.store(b.waits, std::memory_order_relaxed);
  w->flags.store(b.flags, std::memory_order_relaxed);
  w->gen.store(b.gen, std::memory_order_release);
}

bool Hub::read_blocked(int r, BlockedAt *b) const {
  if (r < 0 || r >= nranks_ || local_index_[r] < 0) return false;
  const Blocked *w = blocked(r);
  b->gen = w->gen.load(std::memory_order_acquire);
  if (b->gen == 0 || (b->gen & 1) != 0) return false;
  b->comm = w->comm.load(std::memory_order_relaxed);
  b->seq = w->seq.load(std::memory_order_relaxed);
  b->pid = w->pid.load(std::memory_order_relaxed);
  b->waits = w->waits.load(std::memory_order_relaxed);
  b->flags = w->flags.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return w->gen.load(std::memory_order_relaxed) == b->gen;
}

}  // namespace shm
}  // namespace hccl
