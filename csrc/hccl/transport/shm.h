// Shared-memory transport: all ranks on one host. Each rank creates one
// segment (shm_layout.h), maps every peer's, and synchronises through
// counters in them: spin briefly, yield, then sleep on a shared futex with a
// short timeout so that deadlines and dead peers are noticed.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hccl/transport/shm_layout.h"
#include "hccl/transport/shm_segment.h"
#include "hccl/transport/transport.h"

namespace hccl {

class ShmTransport final : public Transport {
 public:
  struct Options {
    int rank = 0;
    int nranks = 1;
    size_t slot_bytes = 0;
    size_t p2p_bytes = 0;
    int exec_timeout_s = 1836;
    int local_ranks = 1;  // ranks sharing this host (to tell oversubscription)
  };
  struct PeerDesc {
    std::string segment;  // shm name
    int segment_fd = -1;  // its fd in the owner process (to probe /proc access)
    int pid = 0;
    bool same_pid_ns = true;
  };

  // Step 1: creates and maps this rank's segment named `name`.
  static std::unique_ptr<ShmTransport> create(const Options &opt, const std::string &name,
                                              std::string *why);
  // Step 2: maps every peer's segment (peers[rank] is this rank).
  bool connect(const std::vector<PeerDesc> &peers, std::string *why);
  // Step 3, once every rank connected: removes this rank's name from /dev/shm.
  void unlink_own();
  // On a failed set-up: also removes peers' names (ENOENT is fine).
  static void unlink_names(const std::vector<PeerDesc> &peers);

  ~ShmTransport() override;

  const char *kind() const override { return "shm"; }
  size_t slot_bytes() const override { return layout_.slot_bytes; }
  void *local_slot(int slot) override { return coll_slot(rank_, slot); }
  const void *peer_slot(int peer, int slot) override { return coll_slot(peer, slot); }
  void post(uint64_t round) override;
  HcclResult wait(int peer, uint64_t round, WaitError *err) override;
  HcclResult p2p(P2pXfer *xfers, size_t n, WaitError *err) override;
  void publish_op(const OpSig &sig) override { ctl(rank_)->ops[sig.seq % kOpRing] = sig; }
  OpSig peer_op(int peer, uint64_t seq) override { return ctl(peer)->ops[seq % kOpRing]; }
  void abort(HcclResult code, const std::string &why) override;
  void *peer_arena(int peer, int fd, uint64_t size, uint64_t offset, size_t bytes) override;
  void set_exec_timeout(int seconds) override;

  const std::string &segment_name() const { return name_; }
  int segment_fd() const { return peers_[rank_].map.fd; }
  // Whether this process may open peers' file descriptors through
  // /proc/<pid>/fd (what single-copy mapping of their arenas needs).
  bool can_open_peer_fds() const;

 private:
  struct Peer {
    ShmMapping map;
    int pid = 0;
    bool same_pid_ns = true;
    int segment_fd = -1;
    // Peer's aclrtMalloc arena, mapped on first single-copy use.
    int arena_fd = -1;
    uint64_t arena_size = 0;
    void *arena_base = nullptr;
  };

  ShmTransport(const Options &opt, const std::string &name);

  char *seg(int r) const { return static_cast<char *>(peers_[r].map.base); }
  ShmControl *ctl(int r) const { return reinterpret_cast<ShmControl *>(seg(r)); }
  SyncLine *tx_line(int owner, int to) const {
    return reinterpret_cast<SyncLine *>(seg(owner) + layout_.tx_off) + to;
  }
  SyncLine *rx_line(int owner, int from) const {
    return reinterpret_cast<SyncLine *>(seg(owner) + layout_.rx_off) + from;
  }
  char *coll_slot(int r, int slot) const {
    return seg(r) + layout_.coll_off + static_cast<size_t>(slot) * layout_.slot_bytes;
  }
  char *p2p_slot(int owner, int to, int slot) const {
    return seg(owner) + layout_.p2p_off +
           (static_cast<size_t>(to) * kP2pSlots + slot) * layout_.p2p_bytes;
  }

  void post_line(SyncLine *line, uint32_t value);
  void ring(int peer);
  // Waits until line reaches target; `watch` lists the peers whose failure or
  // death ends the wait; `waiting_for` names one in the timeout message.
  HcclResult wait_line(SyncLine *line, uint32_t target, const int *watch, int nwatch,
                       int waiting_for, WaitError *err);
  bool peer_failed(int peer, WaitError *err) const;
  bool peer_dead(int peer, WaitError *err) const;

  int rank_;
  int nranks_;
  ShmLayout layout_;
  std::string name_;
  bool unlinked_ = false;
  std::vector<Peer> peers_;
  int64_t timeout_ns_;
  int timeout_s_;
  int64_t spin_ns_;   // busy-wait budget of a wait (0 when ranks outnumber cores)
  int64_t yield_ns_;  // then sched_yield for this long, then sleep on the futex
  // p2p chunks published to / consumed from each peer (mirrors tx/rx lines).
  std::vector<uint32_t> tx_count_, rx_count_;
  std::mutex arena_mu_;
};

}  // namespace hccl
