// A communicator: identity, transport, and the ordering of its operations.
//
// Handles given to users are opaque ids looked up in a registry, so a stale
// or foreign handle is detected, never dereferenced. Enqueued tasks hold a
// shared_ptr, so memory a queued task will use is freed only after it ran.
// Operations run in the order they were enqueued (a ticket per op), even when
// spread over several streams: every rank must see the same sequence.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hccl/algo/op.h"
#include "hccl/comm/config.h"
#include "hccl/hccl_types.h"
#include "hccl/transport/transport.h"
#include "runtime/hostrt.h"

namespace hccl {

class Bootstrap;

// Algorithm choices agreed by all ranks at set-up (rank 0's values).
struct AlgoTuning {
  uint64_t latency_bytes = 0;  // AllReduce/Reduce: one-round path up to this size
  uint64_t single_copy_min = 0;  // single-copy path from this size (aclrtMalloc buffers)
  char force[128] = {};        // PYHCCL_ALGO, e.g. "allreduce:chunked,broadcast:staged"
};

class Comm {
 public:
  ~Comm();

  uint64_t id = 0;  // registry key; the user's HcclComm
  uint32_t rank = 0;
  uint32_t nranks = 1;
  int32_t device = 0;
  std::string name;
  CommSettings settings;
  AlgoTuning tuning;
  Bootstrap *bootstrap = nullptr;
  std::unique_ptr<Transport> transport;
  bool single_copy_ok = false;  // every rank can map every peer's aclrtMalloc arena
  // Collective rounds, and the last round seen posted by each peer; touched
  // only by the running op.
  uint64_t round = 0;
  std::vector<uint64_t> seen;
  uint64_t op_seq = 0;               // collectives run so far
  std::vector<uint64_t> checked_op;  // per peer: last op_seq whose signature matched

  // ---- ordering and state (all under mu) ----
  std::mutex mu;
  std::condition_variable cv;
  uint64_t next_ticket = 0;  // handed out at enqueue
  uint64_t turn = 0;         // ticket allowed to run now
  int in_flight = 0;         // enqueued, not yet finished
  bool destroyed = false;
  std::vector<uint64_t> abandoned;  // tickets that gave up waiting for their turn
  HcclResult async_error = HCCL_SUCCESS;  // first failure; later ops fail fast
  std::string async_msg;

  HcclComm handle() const { return reinterpret_cast<HcclComm>(id); }
  // Records the first asynchronous failure (and tells peers via the transport).
  void fail(HcclResult code, const std::string &msg);
  HcclResult error(std::string *msg);
};

// ---- registry of live communicators ----
HcclComm comm_register(std::shared_ptr<Comm> comm);
std::shared_ptr<Comm> comm_lookup(HcclComm handle);
std::shared_ptr<Comm> comm_unregister(HcclComm handle);
std::shared_ptr<Comm> comm_lookup_name(const char *name);

// ---- lifecycle (comm_init.cc, comm.cc) ----
HcclResult comm_init(uint32_t nranks, const HcclRootInfo *root, uint32_t rank,
                     const HcclCommConfig *config, const char *api, HcclComm *out);
// Waits (bounded) for the comm's enqueued work, then releases it.
HcclResult comm_destroy(std::shared_ptr<Comm> comm, const char *api);

// ---- execution (exec.cc) ----
// Enqueues op on stream (already resolved and checked). E_* + message on failure.
HcclResult comm_submit(const std::shared_ptr<Comm> &comm, hostrt::Stream *stream, OpDesc op);

}  // namespace hccl
