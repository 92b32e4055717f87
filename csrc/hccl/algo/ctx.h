// What an algorithm sees while it runs: the communicator's transport, the
// round counter (see transport/transport.h for the slot rules) and helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hccl/algo/op.h"
#include "hccl/comm/comm.h"
#include "hccl/reduce/reduce.h"

namespace hccl {

class Ctx {
 public:
  Ctx(Comm &comm, const OpDesc &op);

  Comm &comm;
  const OpDesc &op;
  Transport &tr;
  const int me;
  const int n;
  const size_t slot_bytes;
  WaitError err;  // filled by a failing wait / fail()

  uint64_t next_round() {
    if (first_round_ == 0) publish();
    return ++comm.round;
  }
  char *my_slot(uint64_t round) {
    return static_cast<char *>(tr.local_slot(static_cast<int>(round % Transport::kSlots)));
  }
  const char *slot(int peer, uint64_t round) {
    return static_cast<const char *>(tr.peer_slot(peer, static_cast<int>(round % Transport::kSlots)));
  }
  // Before filling my slot in `round`: every reader finished the round that
  // last used it (they posted round - 1).
  HcclResult acquire(uint64_t round) { return wait_all(round - 1); }
  void post(uint64_t round) { tr.post(round); }
  // Opens the next round (*round) with `bytes` of `src` in my slot: waits
  // until the slot is free, copies, posts.
  HcclResult stage(const void *src, size_t bytes, uint64_t *round);
  // Same with chunk [off, off + chunk) of each of the n blocks (counts and
  // displs in elements) of `send`, block q at q * chunk elements in the slot.
  HcclResult stage_blocks(const char *send, const std::vector<uint64_t> &counts,
                          const std::vector<uint64_t> &displs, uint64_t off, size_t chunk,
                          uint64_t *round);
  HcclResult wait(int peer, uint64_t round);
  HcclResult wait_all(uint64_t round);
  // Fails the op with a message (read after "HcclXxx: ").
  HcclResult fail(HcclResult code, const std::string &what);

  // Whether PYHCCL_ALGO forces `path` for `coll` (e.g. "allreduce", "latency");
  // *any is set when some path is forced for coll.
  bool forced(const char *coll, const char *path, bool *any = nullptr) const;

 private:
  void publish();
  HcclResult check_peer_op(int peer);

  OpSig sig_{};
  uint64_t first_round_ = 0;  // this op's first round, once it has one
};

// [lo, hi) of part `i` when `count` elements are split over `parts`, each part
// a multiple of 64 bytes (except the last) so kernels see aligned runs.
struct Span {
  size_t lo, hi;
  size_t size() const { return hi - lo; }
};
Span split(size_t count, int parts, int i, size_t elem_bytes);

inline size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
// Elements of a block of `count` that lie in chunk [off, off + chunk).
inline size_t chunk_part(uint64_t count, uint64_t off, size_t chunk) {
  return count > off ? min_sz(chunk, static_cast<size_t>(count - off)) : 0;
}

// One function per collective (algo/<name>.cc); count 0 and one rank are
// handled inside. Called on the stream's worker thread, ops in ticket order.
HcclResult run_all_reduce(Ctx &x);
HcclResult run_broadcast(Ctx &x);
HcclResult run_all_gather(Ctx &x);
HcclResult run_reduce_scatter(Ctx &x);
HcclResult run_barrier(Ctx &x);
HcclResult run_reduce(Ctx &x);
HcclResult run_scatter(Ctx &x);
HcclResult run_all_to_all_v(Ctx &x);
HcclResult run_all_gather_v(Ctx &x);
HcclResult run_reduce_scatter_v(Ctx &x);
HcclResult run_send_recv(Ctx &x);

// Dispatches on op.kind.
HcclResult run_op_algorithm(Ctx &x);

}  // namespace hccl
