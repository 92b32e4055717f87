// The records ranks exchange through the bootstrap while a communicator is
// set up (fixed layouts; every rank runs the same build, checked by version).
#pragma once

#include <cstdint>
#include <string>

#include "hccl/algo/tuning.h"
#include "hccl/comm/topology.h"

namespace hccl {

constexpr uint32_t kRankInfoVersion = 7;

// FIFO slots where PYHCCL_SLOTS is unset: on one host, and the fewest across hosts
// (fifo_slots, comm_init.cc); the slot size is budgeted for this many.
constexpr uint32_t kDefaultSlots = 8;

// Round 1: what each rank is, and its tuning environment (rank 0's is used).
struct RankInfo {
  uint32_t version;
  int32_t pid;
  uint64_t start_time;  // of the process, to tell a reused pid
  uint64_t pid_ns;
  int32_t device;
  uint32_t all_tcp;     // PYHCCL_TRANSPORT=tcp
  HostIdentity host;
  uint64_t flat_bytes, single_copy_min, chunk_bytes, chain_min;
  uint64_t net_latency_ns, net_bits_per_s;  // the link between hosts as declared; 0: measure it
  uint64_t net_message_ns;  // a rank's time per message between hosts as declared; 0: measure it
  uint64_t slot_bytes;  // shm FIFO slots
  uint32_t slots;       // PYHCCL_SLOTS; 0: unset, the set-up decides (fifo_slots)
  uint32_t sockets_per_peer;
  uint32_t socket_buffer;
  uint32_t board_bytes;  // shm boards (small collectives); 0: none
  uint32_t alltoall_window;  // PYHCCL_ALLTOALL_WINDOW; 0: from the size
  uint8_t nonce[16];    // names this communicator's TCP connections
  char pyhccl_algo[128];
  char hccl_algo[128];

  static RankInfo of_this_process(int32_t device, uint32_t nranks);
  AlgoTuning tuning(std::string *bad) const;
};

// Round 2: this rank's shm segment (empty name when it has no local peer).
struct SegmentInfo {
  uint32_t ok;
  int32_t fd;  // in the owner process, to probe access through /proc
  char name[120];
};

// After round 2: whether this rank can map its local peers' memory.
struct ReadyInfo {
  uint32_t mapped;
  uint32_t can_map;
};

// Round 3: this rank's TCP data listener.
struct ListenInfo {
  uint32_t ok;
  uint16_t port;
  uint16_t pad;
  char host[64];  // numeric address
};

}  // namespace hccl
