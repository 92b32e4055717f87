// The engine (engine.h): a batch of transfers progressed to completion
// through the Waiter, the deadlock of a cycle of blocking sends, inline
// arrival, and what the communicator asks of its peers at once (failure
// notices, settling a collective, destroy's linger, leaving).
#include "hccl/transport/engine.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "common/clock.h"

namespace hccl {
namespace {

// A blocking send stalled this long publishes its wait and looks for a cycle
// (at each failure probe); nothing of it runs before, nor in collectives.
constexpr int64_t kSendStallNs = 100 * 1000000LL;

}  // namespace

// What run() waits for: every transfer of the batch complete.
class Engine::Batch : public WaitFor {
 public:
  Batch(Engine &e, Transfer *const *xfers, size_t n, bool blocking_send)
      : e_(e), xfers_(xfers), n_(n), blocking_send_(blocking_send) {
    // Deadlock detection: for blocking sends to one local peer only (a rank
    // sending to several may be stalled on another peer than the one named).
    if (!blocking_send || !e.hub) return;
    wait_peer_ = xfers[0]->peer;
    for (size_t i = 0; i < n && wait_peer_ >= 0; ++i)
      if (xfers[i]->peer != wait_peer_ || xfers[i]->kind != Transfer::kSend) wait_peer_ = -1;
    if (wait_peer_ == e.rank_ || (wait_peer_ >= 0 && e.hub->local_index(wait_peer_) < 0)) wait_peer_ = -1;
  }
  ~Batch() override {
    if (published_) e_.hub->publish_send_wait(-1);
  }

  HcclResult poll(bool *done, bool *moved, WaitError *err) override {
    HcclResult rc = e_.progress_active(moved, err);
    if (rc != HCCL_SUCCESS) return rc;
    while (first_open_ < n_ && xfers_[first_open_]->complete) ++first_open_;
    *done = first_open_ == n_;
    if (!*done) e_.flush_data();
    return HCCL_SUCCESS;
  }
  int blocker() const override { return xfers_[first_open_]->peer; }
  std::vector<int> missing() const override {
    std::vector<int> peers;
    for (size_t i = first_open_; i < n_; ++i)
      if (!xfers_[i]->complete && std::find(peers.begin(), peers.end(), xfers_[i]->peer) == peers.end())
        peers.push_back(xfers_[i]->peer);
    return peers;
  }
  WaitError timed_out(int peer, std::string what) const override {
    if (blocking_send_)  // the likely cause, where peers' states cannot be seen (other hosts)
      what += "; a send larger than the channel waits for its receive, so a ring (or any "
              "cycle) of blocking sends never completes: post its sends and receives "
              "together in HcclGroupStart/HcclGroupEnd (pyhccl.group()) or HcclBatchSendRecv";
    return WaitError::timed_out(peer, std::move(what), e_.conns[peer]->last_seen());
  }
  void poll_fds(std::vector<pollfd> *fds) override {
    for (Connection *c : e_.active_) c->poll_fds(fds);
  }
  void before_sleep() override { e_.before_sleep(); }
  bool stalled(int64_t stalled_ns, WaitError *err) override {
    if (wait_peer_ < 0 || stalled_ns < kSendStallNs) return false;
    if (!published_) e_.hub->publish_send_wait(wait_peer_);
    published_ = true;
    return send_deadlock(err);
  }

 private:
  // A cycle of local ranks, each in a blocking send to the next whose FIFO is
  // full, is a deadlock: none of them receives before its send completes.
  // Seen twice, one probe apart, with the same words (so every member stayed
  // in the same operation, and the FIFOs, full in between, could not drain),
  // it is certain; a peer that is late, busy or in another operation never
  // publishes.
  bool send_deadlock(WaitError *err) {
    std::vector<int> cycle;
    std::vector<uint64_t> words;
    if (!e_.hub->send_wait_cycle(&cycle, &words)) {
      seen_.clear();
      return false;
    }
    const bool again = seen_ == words;
    seen_ = words;
    if (!again) return false;
    std::string ring;
    for (size_t i = 0; i < cycle.size(); ++i) {
      if (i == 7 && cycle.size() > 8) {
        ring += "... -> ";
        break;
      }
      ring += std::to_string(cycle[i]) + " -> ";
    }
    ring += std::to_string(e_.rank_);
    const int to = wait_peer_;
    WaitError::deadlock(to, "send to rank " + std::to_string(to) + " cannot complete, deadlock: ranks " +
                                ring +
                                " each wait in a blocking send to the next and none receives; post the "
                                "sends and receives of a ring together in HcclGroupStart/HcclGroupEnd "
                                "(pyhccl.group()) or HcclBatchSendRecv")
        .into(err);
    return true;
  }

  Engine &e_;
  Transfer *const *xfers_;
  const size_t n_;
  const bool blocking_send_;
  size_t first_open_ = 0;  // transfers before it are complete
  int wait_peer_ = -1;     // the local peer of a blocking send, watched for a cycle
  bool published_ = false;
  std::vector<uint64_t> seen_;  // the cycle's words at the last look
};

// What drain() waits for: the kept `later` receives of collectives up to seq_,
// and with flush_ the held headers going out.
class Engine::Drain : public WaitFor {
 public:
  Drain(Engine &e, uint64_t seq, bool flush) : e_(e), seq_(seq), flush_(flush) {}

  HcclResult poll(bool *done, bool *moved, WaitError *err) override {
    HcclResult rc = e_.progress_active(moved, err);
    if (rc != HCCL_SUCCESS) return rc;
    e_.pop_later();
    if (flush_) e_.prune_held();
    *done = blocker() < 0;
    if (!*done) e_.flush_data();
    return HCCL_SUCCESS;
  }
  int blocker() const override {
    for (int p = 0; p < e_.nranks_; ++p)
      if (open(p)) return p;
    return -1;
  }
  std::vector<int> missing() const override {
    std::vector<int> peers;
    for (int p = 0; p < e_.nranks_; ++p)
      if (open(p)) peers.push_back(p);
    return peers;
  }
  WaitError timed_out(int peer, std::string what) const override {
    return WaitError::timed_out(peer, std::move(what), e_.conns[peer]->last_seen());
  }
  void poll_fds(std::vector<pollfd> *fds) override {
    for (Connection *c : e_.active_) c->poll_fds(fds);
  }
  void before_sleep() override { e_.before_sleep(); }
  // Headers of operations kLaterOps back (comm/exec.cc): this rank is ahead,
  // and with held headers (which come in batches) often so.
  bool patient() const override { return !flush_; }

 private:
  bool open(int p) const {
    if (!e_.later_[p].empty() && e_.later_[p].front().sig.seq <= seq_) return true;
    return flush_ && e_.conns[p] && e_.conns[p]->holds();
  }

  Engine &e_;
  const uint64_t seq_;
  const bool flush_;
};

Engine::Engine(int rank, int nranks)
    : conns(nranks), rank_(rank), nranks_(nranks), waiter_(rank, nranks, conns, hub),
      boards_(rank, nranks, hub, waiter_), later_(nranks) {}

Engine::~Engine() {
  conns.clear();  // before the hub their shm connections point into
  hub.reset();
}

HcclResult Engine::run(Transfer *const *xfers, size_t n, WaitError *err, bool blocking_send) {
  if (n == 0) return HCCL_SUCCESS;
  active_.clear();
  own_.clear();
  for (size_t i = 0; i < n; ++i) {
    Transfer *t = xfers[i];
    if (t->later) {  // the batch's own copy dies with it
      later_[t->peer].push_back(*t);
      t = &later_[t->peer].back();
    }
    Connection *c = conns[t->peer].get();
    c->post(t);
    if (t->lazy && t->complete) {  // held: it goes out later, without the batch
      note_held(c);
    } else if (!t->later) {
      own_.push_back(t);
    }
    if (std::find(active_.begin(), active_.end(), c) == active_.end()) active_.push_back(c);
  }
  add_later_conns();
  HcclResult rc = HCCL_SUCCESS;
  if (!own_.empty()) {
    Batch batch(*this, own_.data(), own_.size(), blocking_send);
    rc = waiter_.wait(batch, err);
  }
  if (rc != HCCL_SUCCESS) {
    forget_active();
  } else {
    for (Connection *c : active_)  // sends it held once their data was ready
      if (c->holds()) note_held(c);
  }
  pop_later();
  active_.clear();
  return rc;
}

HcclResult Engine::drain(uint64_t seq, bool flush, WaitError *err) {
  pop_later();
  if (flush) {
    flush_held();
    prune_held();
  }
  Drain d(*this, seq, flush);
  if (d.blocker() < 0) return HCCL_SUCCESS;
  active_.clear();
  add_later_conns();
  HcclResult rc = waiter_.wait(d, err);
  if (rc != HCCL_SUCCESS) forget_active();
  active_.clear();
  return rc;
}

HcclResult Engine::progress_active(bool *moved, WaitError *err) {
  if (held_since_ns_ != 0 && common::now_ns() - held_since_ns_ >= kHoldNs) flush_held();
  for (Connection *c : active_) {
    bool m = false;
    HcclResult rc = c->progress(&m, err);
    if (rc != HCCL_SUCCESS) return rc;
    *moved |= m;
  }
  return HCCL_SUCCESS;
}

void Engine::forget_active() {
  // What is held belongs to operations that completed here: a peer may still
  // complete its part with it (best effort, what the sockets take now).
  for (Connection *c : held_) c->flush_held();
  for (Connection *c : active_) c->clear();  // every kept receive's connection is among them
  for (Connection *c : held_) c->clear();
  for (auto &q : later_) q.clear();
  held_.clear();
  held_since_ns_ = 0;
}

void Engine::add_later_conns() {
  for (int p = 0; p < nranks_; ++p) {
    if (later_[p].empty()) continue;
    Connection *c = conns[p].get();
    if (std::find(active_.begin(), active_.end(), c) == active_.end()) active_.push_back(c);
  }
  for (Connection *c : held_)  // a partly flushed header goes on as they progress
    if (std::find(active_.begin(), active_.end(), c) == active_.end()) active_.push_back(c);
}

void Engine::flush_held() {
  for (Connection *c : held_) c->flush();
  held_since_ns_ = 0;
}

void Engine::note_held(Connection *c) {
  if (held_since_ns_ == 0) held_since_ns_ = common::now_ns();
  if (std::find(held_.begin(), held_.end(), c) == held_.end()) held_.push_back(c);
}

void Engine::flush_data() {
  for (Connection *c : active_)
    if (c->holds_data()) c->flush_held();
}

void Engine::before_sleep() {
  // Every held connection is active in a wait (add_later_conns): flush() sends what it holds.
  held_since_ns_ = 0;
  for (Connection *c : active_) c->flush();
}

void Engine::prune_held() {
  held_.erase(std::remove_if(held_.begin(), held_.end(), [](Connection *c) { return !c->holds(); }),
              held_.end());
}

void Engine::pop_later() {
  for (auto &q : later_)
    while (!q.empty() && q.front().complete) q.pop_front();
}

bool Engine::arrive(const OpSig &sig) {
  if (nranks_ == 1) return true;
  if (!hub || !hub->all_local() || !waiter_.brief_enabled()) return false;
  hub->announce(sig);
  return waiter_.brief([&](int p) { return static_cast<int64_t>(hub->arrived(p) - sig.seq) >= 0; });
}

void Engine::notify_failure(HcclResult code, const std::string &why, uint64_t seq, int culprit) {
  if (culprit < 0) culprit = rank_;
  // UNAVAIL is this rank's own verdict (interrupted, aborted); to its peers it is a
  // remote failure, whichever of the two notices (the interrupted op's, the abort's)
  // goes out first.
  if (code == HCCL_E_UNAVAIL) code = HCCL_E_REMOTE;
  for (auto &c : conns)
    if (c) c->notify_failure(code, why, seq, culprit);
}

HcclResult Engine::linger(int64_t deadline_ns, WaitError *err) {
  flush_held();
  for (;;) {
    for (Connection *c : held_) {  // what the sockets did not take at once
      bool moved = false;
      WaitError e;
      c->progress(&moved, &e);
    }
    bool waiting = false;
    for (int p = 0; p < nranks_; ++p) {
      if (p == rank_ || !conns[p] || !conns[p]->unreceived()) continue;
      waiting = true;
      WaitError e;
      const bool failed = conns[p]->peer_failed(true, &e);
      if (!failed && !conns[p]->peer_left()) continue;
      const std::string why = failed ? "it failed: " + e.what : "it destroyed its communicator first";
      return WaitError::failure(failed ? e.code : HCCL_E_REMOTE, p,
                                "rank " + std::to_string(p) +
                                    " never received this rank's last message(s): " + why +
                                    " (a send completes before its receive when it fits the channel; "
                                    "check that every send has a matching receive)")
          .into(err);
    }
    if (!waiting || common::now_ns() >= deadline_ns) return HCCL_SUCCESS;
    usleep(1000);  // rare and at destroy only: a plain sleep, no doorbell
  }
}

void Engine::leave() {
  for (auto &c : conns)
    if (c) c->leave();
  if (hub) hub->leave();
}

bool Engine::peer_failure(WaitError *err) {
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_ && conns[p] && conns[p]->peer_reported_failure(err)) return true;
  return false;
}

HcclResult Engine::settle(uint64_t seq, WaitError *err) {
  // Notices from other hosts wait unread on the control sockets: look only
  // when one is there (one poll for all), shared-memory flags always. At
  // most one look a kNoticePollNs: a peer that timed out in this operation
  // did so long after this rank's last look, and a notice sent just now can
  // miss a look anyway (the next operation fails then). The poll was about a
  // tenth of a small operation's round trip between two hosts.
  const int64_t now = common::now_ns();
  bool notices = false;
  if (now - notice_poll_ns_ >= kNoticePollNs) {
    notice_poll_ns_ = now;
    fds_.clear();
    for (auto &c : conns)
      if (c && c->notice_fd() >= 0) fds_.push_back({c->notice_fd(), POLLIN, 0});
    notices = !fds_.empty() && poll(fds_.data(), fds_.size(), 0) > 0;
  }
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_ || !conns[p]) continue;
    WaitError e;
    bool failed = notices || hub ? conns[p]->peer_failed(notices, &e) : false;
    if (failed && (e.failed_seq == 0 || e.failed_seq <= seq)) {
      *err = e;
      return err->code;
    }
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
