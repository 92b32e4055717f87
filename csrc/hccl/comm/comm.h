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

#include "hccl/op/op.h"
#include "hccl/algo/comm_view.h"
#include "hccl/comm/config.h"
#include "hccl/comm/flight.h"
#include "hccl/hccl_types.h"
#include "runtime/hostrt.h"

namespace hccl {

class Bootstrap;
class Engine;
struct WindowSet;

size_t comm_count();  // live communicators of this process

// rank, nranks, name, tuning, topo, engine, single_copy_ok, op_seq and
// scratch() are the algorithms' view (algo/comm_view.h).
class Comm : public CommView {
 public:
  Comm() { live_comms = comm_count; }
  ~Comm();

  uint64_t id = 0;  // registry key; the user's HcclComm
  int32_t device = 0;
  CommSettings settings;
  Bootstrap *bootstrap = nullptr;
  std::atomic<uint64_t> running_seq{0};  // the collective running now (0: none)
  // The user has seen the communicator's failure (HcclGetCommAsyncError returned it).
  std::atomic<bool> error_told{false};
  std::atomic<bool> failure_logged{false};  // the first failure and its flight record were logged
  FlightRecorder flight{64};        // the last operations, for post-mortems (under mu)

  // ---- ordering and state (all under mu) ----
  std::mutex mu;
  std::condition_variable cv;
  uint64_t next_ticket = 0;  // handed out at enqueue
  const void *last_stream = nullptr;  // of the last ticket (switched_at)
  uint64_t turn = 0;         // ticket allowed to run now
  int in_flight = 0;         // enqueued, not yet finished
  bool destroyed = false;
  std::vector<uint64_t> abandoned;  // tickets that gave up waiting for their turn
  HcclResult async_error = HCCL_SUCCESS;  // first failure; later ops fail fast
  std::string async_msg;
  std::shared_ptr<const WindowSet> windows;  // symmetric windows (comm/window.h); null: none

  HcclComm handle() const { return reinterpret_cast<HcclComm>(id); }
  // Records the first asynchronous failure, in collective `seq` (0: the one
  // running now, else the next one), and tells every peer.
  // `culprit`: the rank at fault (-1: this one), told to peers through relays.
  // `notify` false: peers are not told (they reach the verdict themselves).
  void fail(HcclResult code, const std::string &msg, uint64_t seq = 0, int culprit = -1,
            bool notify = true);
  HcclResult error(std::string *msg);
  // The same, after looking whether a peer reported a failure (or died): a
  // few syscalls, so not for every operation.
  HcclResult poll_error(std::string *msg);
};

// ---- registry of live communicators ----
HcclComm comm_register(std::shared_ptr<Comm> comm);
std::shared_ptr<Comm> comm_lookup(HcclComm handle);
std::shared_ptr<Comm> comm_unregister(HcclComm handle);
std::shared_ptr<Comm> comm_lookup_name(const char *name);
// The communicator whose shared-memory hub has this uid (shm::Hub::uid), or null.
std::shared_ptr<Comm> comm_lookup_uid(uint64_t uid);

// ---- lifecycle (comm_init.cc, comm.cc) ----
HcclResult comm_init(uint32_t nranks, const HcclRootInfo *root, uint32_t rank,
                     const HcclCommConfig *config, const char *api, HcclComm *out);
// Waits (bounded) for the comm's enqueued work, then releases it. With
// timeout_ms >= 0, work still in flight after that long is aborted (as by
// comm_abort; peers are told this rank left) and the call fails with
// HCCL_E_TIMEOUT naming what it abandoned.
HcclResult comm_destroy(std::shared_ptr<Comm> comm, const char *api, int64_t timeout_ms = -1);
// Aborts the communicator on this rank: every pending and later operation
// fails at once with `here`; peers' pending operations fail naming
// `peers_see` (PyhcclCommAbort, and destroy at a deadline).
void comm_abort(Comm &c, const std::string &peers_see, const std::string &here);

// ---- execution (exec.cc) ----
// Enqueues op on stream (already resolved and checked). E_* + message on failure.
HcclResult comm_submit(const std::shared_ptr<Comm> &comm, hostrt::Stream *stream, OpDesc op);
// Records the operation that just ran (`r`: its ended flight record) in the
// trace; call only when hostrt::trace_on() (trace_op.cc).
void trace_op(const Comm &c, const OpDesc &op, const OpRecord &r);

}  // namespace hccl
