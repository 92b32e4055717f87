// A rank's shared-memory state in one communicator: its own segment (FIFOs
// toward its local peers, counters, doorbell, failure flag, boards), every
// local peer's segment mapped, and a datagram socket for being woken from
// poll(). The per-peer connections (conn.h) move messages through the FIFOs;
// board exchanges (board_exchange.h) use the boards.
//
// One class, its parts in files of one concern each:
//   hub.cc          segments: create, map the peers', unlink; peer memory
//   doorbell.cc     waking a rank (futex word, poll() datagram) and sleeping on it
//   liveness.cc     whether a local peer failed, died or left, and where it is
//                   (its announced collective, its FIFO toward this rank)
//   wait_records.cc what a rank publishes about where it is blocked, for the
//                   deadlock checks: stalled blocking sends and the Blocked record
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/futex.h"
#include "hccl/transport/shm/layout.h"
#include "hccl/transport/shm/segment.h"
#include "hccl/transport/shm/waits.h"
#include "hccl/transport/transport.h"

namespace hccl {
namespace shm {

// Who a local peer is, for mapping its segment and probing its liveness.
struct PeerDesc {
  std::string segment;      // shm name
  int pid = 0;
  uint64_t start_time = 0;  // /proc/<pid>/stat starttime, to tell a reused pid
  bool same_pid_ns = true;
};

class Hub {
 public:
  struct Options {
    int rank = 0;
    int nranks = 1;
    std::vector<int> local;  // global ranks on this host, ascending (includes rank)
    size_t slot_bytes = 0;
    uint32_t slots = 0;
    size_t board_bytes = 0;
  };

  // --- Segments (hub.cc) ---
  // Step 1: creates and maps this rank's segment named `name`.
  static std::unique_ptr<Hub> create(const Options &opt, const std::string &name, std::string *why);
  // Step 2: maps every local peer's segment (peers indexed by global rank).
  bool connect(const std::vector<PeerDesc> &peers, std::string *why);
  // Step 3, once every rank connected: removes this rank's name from /dev/shm.
  void unlink_own();
  ~Hub();

  std::unique_ptr<Connection> connection(int peer);

  int rank() const { return rank_; }
  int segment_fd() const { return peers_[rank_].map.fd; }
  const Layout &layout() const { return layout_; }
  Control *ctl(int r) const { return reinterpret_cast<Control *>(seg(r)); }
  SyncLine *head(int owner, int to) const {
    return reinterpret_cast<SyncLine *>(seg(owner) + layout_.head_off) + to;
  }
  SyncLine *tail(int owner, int from) const {
    return reinterpret_cast<SyncLine *>(seg(owner) + layout_.tail_off) + from;
  }
  // owner's FIFO toward rank `to`.
  char *fifo(int owner, int to) const {
    return seg(owner) + layout_.fifo_off + static_cast<size_t>(local_index(to)) * layout_.fifo_bytes;
  }
  int local_index(int r) const { return local_index_[r]; }
  // Boards (layout.h): board `b` (0 or 1) of local rank r, and its payload.
  BoardHeader *board(int r, int b) const {
    return reinterpret_cast<BoardHeader *>(seg(r) + layout_.board_off + b * layout_.board_stride);
  }
  char *board_data(int r, int b) const { return reinterpret_cast<char *>(board(r, b) + 1); }
  // Local peers in rank order (this rank included).
  const std::vector<int> &local_ranks() const { return local_; }
  // Whether every rank of the communicator is on this host.
  bool all_local() const { return static_cast<int>(local_count_) == nranks_; }

  // Which communicator this is: a uid every rank agrees on (not 0) and its
  // name. Enters the hub in the process's registry (shm/waits.h), which
  // then writes the process's Blocked record in this rank's segment.
  void set_identity(uint64_t uid, const std::string &name);
  uint64_t uid() const { return uid_; }
  const std::string &comm_name() const { return comm_name_; }

  // Maps a local peer's device memory (cached per peer and file).
  void *map_peer_memory(int r, const MemDesc &d);

  // --- Doorbell (doorbell.cc) ---
  // Wakes rank r after moving data toward it or freeing its FIFO space.
  void ring(int r);
  // This rank's doorbell (futex word peers bump) and its poll() wake-up socket.
  SyncLine *doorbell() const { return &ctl(rank_)->doorbell; }
  int wake_fd() const { return wake_fd_; }
  // Sleeps on this rank's doorbell while it still reads `bell`, at most until
  // `until` (common::now_ns()). The caller counts among its waiters before
  // idle() takes the last look: a peer that acts after that look sees the
  // count and rings (boards ring only counted waiters).
  template <typename Idle>
  void sleep_on_doorbell(uint32_t bell, int64_t until, Idle idle);
  // Around a poll() that includes wake_fd(): makes ring() send a datagram;
  // false (nothing to undo) when the doorbell rang past `bell` already.
  bool begin_poll_sleep(uint32_t bell);
  void end_poll_sleep();  // and drains the datagrams

  // --- Liveness (liveness.cc) ---
  // Publishes this rank's failure in collective `seq` (first one sticks) and
  // wakes its peers.
  void fail(HcclResult code, const std::string &why, uint64_t seq, int culprit);
  // Whether local peer r has failed, or (probe) died without leaving.
  bool peer_failed(int r, bool probe, WaitError *err);
  // Tells local peers that this rank left (destroyed its communicator, or
  // exited without): what it published is still to be read.
  void leave() {
    if (peers_[rank_].map.base != nullptr) ctl(rank_)->left.store(1, std::memory_order_seq_cst);
  }
  // Whether local peer r destroyed its communicator.
  bool peer_left(int r) const { return ctl(r)->left.load(std::memory_order_acquire) != 0; }
  // Arrival (Engine::announce): the collective local rank r runs now, or is
  // about to, and its signature.
  void announce(const OpSig &sig);
  uint64_t arrived(int r) const { return announcement(r)->arrived.load(std::memory_order_acquire); }
  // What local peer r announced last: its number (*at), and *sig when that
  // is `seq` (true then; a signature being rewritten is never returned).
  bool announced(int r, uint64_t seq, uint64_t *at, OpSig *sig) const;
  // Whether local peer r has a message in its FIFO toward this rank that no
  // receive took yet; *sig gets its signature.
  bool fifo_pending(int r, OpSig *sig) const;
  // Local peer r's pid, as this process sees it (0: another pid namespace).
  uint32_t pid_of(int r) const {
    const PeerDesc &d = peers_[r].desc;
    return d.same_pid_ns && d.pid > 0 ? static_cast<uint32_t>(d.pid) : 0;
  }

  // --- Wait records (wait_records.cc) ---
  // Deadlock detection of blocking sends (Engine::run): publishes that this
  // rank runs a stalled send-only operation toward local peer `to` (a new
  // generation each call), or (to < 0) that it no longer does.
  void publish_send_wait(int to);
  // Follows the published send waits from this rank through local peers.
  // True when they lead back to it and every FIFO along the cycle is full
  // (read after all the words); *cycle gets the ranks from this one on,
  // *words what each had published, to compare with a later look.
  bool send_wait_cycle(std::vector<int> *cycle, std::vector<uint64_t> *words) const;
  // The registry's writer (under its mutex), and a peer's reader: false
  // when the record is being rewritten (or never was written).
  void write_blocked(const BlockedAt &b);
  bool read_blocked(int r, BlockedAt *b) const;

 private:
  struct Peer {
    ShmMapping map;
    PeerDesc desc;
    std::string wake_name;
    // Device-memory files of the peer mapped so far, by (fd, inode).
    struct Mapped {
      void *base;
      uint64_t size;
    };
    std::map<std::pair<int, uint64_t>, Mapped> mem;
  };

  Hub(const Options &opt, const std::string &name);
  char *seg(int r) const { return static_cast<char *>(peers_[r].map.base); }
  Announce *announcement(int r) const { return reinterpret_cast<Announce *>(seg(r) + layout_.announce_off); }
  Blocked *blocked(int r) const { return reinterpret_cast<Blocked *>(seg(r) + layout_.blocked_off); }
  bool peer_dead(int r, WaitError *err);
  // The wake-up socket (doorbell.cc): bound in create().
  bool bind_wake(const std::string &name, std::string *why);

  int rank_;
  int nranks_;
  Layout layout_;
  std::string name_;
  bool unlinked_ = false;
  std::vector<int> local_index_;  // by global rank; -1 when not on this host
  std::vector<int> local_;
  size_t local_count_ = 0;
  std::vector<Peer> peers_;       // by global rank; mapped for local ranks only
  int wake_fd_ = -1;
  uint32_t send_wait_gen_ = 0;
  std::mutex mem_mu_;
  uint64_t announced_ = 0;  // the last collective this rank announced
  uint64_t uid_ = 0;
  std::string comm_name_;
};

// /proc/<pid>/stat starttime of a process (0 when unknown).
uint64_t process_start_time(int pid);

template <typename Idle>
void Hub::sleep_on_doorbell(uint32_t bell, int64_t until, Idle idle) {
  SyncLine *line = doorbell();
  line->waiters.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (line->value.load(std::memory_order_seq_cst) == bell && idle())
    common::futex_wait(&line->value, bell, until, /*shared=*/true);
  line->waiters.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace shm
}  // namespace hccl
