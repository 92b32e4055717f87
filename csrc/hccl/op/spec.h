// What each collective is, in one table (spec_table.cc): its name, how ranks
// compare it, how many bytes each rank sends and receives for a count, what
// it posts on a board and which algorithms it has. comm/, algo/ and api/
// derive their rules from it; adding a collective is one row here plus its
// algorithms (algo/dispatch.cc). This layer includes nothing above it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hccl {

// One enum for every enqueued operation. The numbers travel in message
// signatures (transport.h OpSig::kind): append, never renumber.
enum class OpKind : uint32_t {
  kAllReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kBarrier,
  kReduce,
  kScatter,
  kAlltoAll,   // counts/displs filled like AlltoAllV
  kAllGatherV,
  kReduceScatterV,
  kAlltoAllV,
  kSendRecv,   // HcclSend, HcclRecv, HcclBatchSendRecv, or a group of them
  // Collective management calls run in the communicator's operation order
  // (comm/host_call.h): their exchanges carry these kinds in signatures.
  kSymWinRegister,
  kSymWinDeregister,
  kCreateSubComm,
  kGather,     // PyhcclGather (hccl/hccl_host.h), CANN's HCCL_CMD_GATHER
};
constexpr int kOpKinds = static_cast<int>(OpKind::kGather) + 1;

// The algorithms the dispatcher (algo/dispatch.cc) knows. kBoard and kWindow
// are chosen by size and registration alone, never forced by PYHCCL_ALGO.
enum class Algo : uint8_t { kAuto, kFlat, kDirect, kHier, kRing, kTree, kPairwise, kLeader, kRail, kBoard, kWindow };
constexpr unsigned algo_bit(Algo a) { return 1u << static_cast<unsigned>(a); }
const char *algo_name(Algo a);  // "flat", ...

// How `count` is compared across ranks: the same everywhere, a digest of
// recvCounts (AllGatherV) or sendCounts (ReduceScatterV), or not at all.
enum class CountRule : uint8_t { kSameCount, kRecvCountsDigest, kSendCountsDigest, kNotCompared };

// Bytes one rank's buffer holds for `count` elements: none, count, or count
// per rank; kVector: from the V arrays (or the items), not from count.
enum class Size : uint8_t { kNone, kCount, kPerRank, kVector };
// Which ranks have the buffer in rooted collectives.
enum class Who : uint8_t { kAll, kRoot, kNonRoot };
struct BufferRule {
  Size size;
  Who who;
  // Bytes of the buffer for `count` elements of `es` bytes on `n` ranks,
  // anywhere (mine: false), or on this rank (mine: true, is_root says).
  size_t bytes(uint64_t count, size_t es, uint32_t n) const {
    return size == Size::kCount ? count * es : size == Size::kPerRank ? count * es * n : 0;
  }
  size_t mine(uint64_t count, size_t es, uint32_t n, bool is_root) const {
    const bool has = who == Who::kAll || (who == Who::kRoot) == is_root;
    return has ? bytes(count, es, n) : 0;
  }
};

// Count 0: every rank only compares signatures (a barrier), or the
// algorithm runs with empty messages.
enum class ZeroCount : uint8_t { kCompareSignatures, kRunAlgorithm };

struct CollectiveSpec {
  OpKind kind;
  const char *api;       // "HcclAllReduce": how messages name it
  const char *algo_key;  // PYHCCL_ALGO's name for it ("allreduce"); null: not tunable
  bool rooted;           // root must match on every rank
  bool reducing;         // the reduction op must match on every rank
  CountRule count_rule;
  BufferRule send, recv;  // what each rank sends and receives; the board posts `send`
  bool one_buffer;        // in place by definition (Broadcast): the send buffer is recv
  ZeroCount zero;
  unsigned algos;         // candidate algorithms (algo_bit), in dispatch order
  bool host_call;         // a management call run in the op order (op.host_fn)

  bool has(Algo a) const { return (algos & algo_bit(a)) != 0; }
  // Sizes derive from count (not from V arrays or items).
  bool counted() const { return send.size != Size::kVector; }
  // The larger buffer of any rank: what the size choice (select) weighs.
  size_t largest(uint64_t count, size_t es, uint32_t n) const {
    size_t s = send.bytes(count, es, n), r = recv.bytes(count, es, n);
    return s > r ? s : r;
  }
};

const CollectiveSpec &op_spec(OpKind kind);
// The spec of a kind number read from a peer's message (null if unknown).
const CollectiveSpec *op_spec_or_null(uint32_t kind);
// The tunable collective named `key` in PYHCCL_ALGO (null if none).
const CollectiveSpec *op_spec_by_key(const char *key);

// Whether an operation may run on the calling thread (comm/exec.cc): same
// count everywhere, not a management call, and count x element size x ranks
// within `limit`.
inline bool inline_candidate(const CollectiveSpec &s, uint64_t count, size_t es, uint32_t n,
                             uint64_t limit) {
  return s.count_rule == CountRule::kSameCount && !s.host_call && count * es * n <= limit;
}

}  // namespace hccl
