// The one dispatcher. Candidates in order, each `applies` to the operation
// (its spec, size and topology, the same on every rank) and `run`s it:
//   one rank     copy the send buffer to the recv buffer (count-based specs);
//   count 0      compare signatures only, so that a rank given another count
//                (or collective) is told, not left waiting;
//   host call, send/recv;
//   window       single copy on symmetric windows (window_direct.cc);
//   board        small collectives on one host (board.cc);
//   chosen       select.cc's choice among the spec's algorithms (PYHCCL_ALGO
//                forces one by name); an algorithm that cannot run here (direct
//                on host memory, flat Reduce on many ranks) falls back to the
//                spec's copying algorithm: hier, else tree, else pairwise.
// x.algo names what ran, for the flight record and the log.
#include "hccl/algo/dispatch.h"

#include <cstring>

#include "hccl/algo/algorithms.h"
#include "hccl/algo/board.h"
#include "hccl/algo/direct.h"
#include "hccl/algo/select.h"

namespace hccl {
namespace {

// The algorithm a spec falls back to where its choice cannot run.
Algo fallback(const CollectiveSpec &s) {
  return s.has(Algo::kHier) ? Algo::kHier : s.has(Algo::kTree) ? Algo::kTree : Algo::kPairwise;
}

// Runs algorithm `a`; *ran false when it cannot run here (then nothing ran
// on any rank, or all ranks agreed it cannot).
HcclResult run_algo(Ctx &x, Algo a, bool *ran) {
  *ran = true;
  switch (a) {
    case Algo::kFlat:
      if (x.root < 0 || x.n <= kFlatRanks) return run_flat(x);
      *ran = false;
      return HCCL_SUCCESS;
    case Algo::kDirect: return try_direct(x, ran);
    case Algo::kHier: return run_hier(x, false);
    case Algo::kRing: return run_hier(x, true);
    case Algo::kLeader: return run_leader(x);
    case Algo::kTree: return run_tree(x);
    case Algo::kPairwise: return run_pairwise(x);
    case Algo::kRail:
      if (rail_fits(x)) return run_rail(x);
      *ran = false;  // the same topology on every rank: all fall back alike
      return HCCL_SUCCESS;
    default: return x.fail(HCCL_E_INTERNAL, std::string("cannot run algorithm ") + algo_name(a));
  }
}

HcclResult chosen(Ctx &x) {
  const size_t bytes = x.spec.largest(x.count, x.es, static_cast<uint32_t>(x.n));
  // Sizes from the V arrays (each rank's count differs, so never this rank's
  // count decides): by the arrays. Count 0 where the algorithm still runs
  // (empty messages): the copying algorithm.
  Algo a = !x.spec.counted() ? select_v_algo(x) : x.count == 0 ? fallback(x.spec) : select_algo(x, bytes);
  x.algo = algo_name(a);
  bool ran = false;
  HcclResult rc = run_algo(x, a, &ran);
  if (rc != HCCL_SUCCESS || ran) return rc;
  a = fallback(x.spec);
  x.algo = algo_name(a);
  return run_algo(x, a, &ran);
}

HcclResult one_rank(Ctx &x) {
  const size_t bytes = x.recv_bytes();
  if (bytes > 0 && x.in != x.out) std::memcpy(x.out, x.in, bytes);
  return HCCL_SUCCESS;
}

HcclResult host_call(Ctx &x) {
  x.algo = "host call";
  if (!x.op.host_fn) return x.fail(HCCL_E_INTERNAL, "host call without a function");
  return x.op.host_fn(x);
}

HcclResult window(Ctx &x) {
  bool ran = false;
  HcclResult rc = try_window(x, &ran);
  if (rc != HCCL_SUCCESS || ran) return rc;
  return board_applies(x) ? run_board(x) : chosen(x);  // not every buffer in a window: on as usual
}

struct Candidate {
  bool (*applies)(const Ctx &x);
  HcclResult (*run)(Ctx &x);
};

constexpr Candidate kCandidates[] = {
    {[](const Ctx &x) { return x.n == 1 && x.spec.counted() && !x.spec.host_call; }, one_rank},
    {[](const Ctx &x) { return x.count == 0 && x.spec.zero == ZeroCount::kCompareSignatures; },
     compare_signatures},
    {[](const Ctx &x) { return x.spec.host_call; }, host_call},
    {[](const Ctx &x) { return x.spec.kind == OpKind::kSendRecv; }, run_send_recv},
    {[](const Ctx &x) { return x.count > 0 && window_candidate(x); }, window},
    {[](const Ctx &x) { return board_applies(x); }, run_board},
    {[](const Ctx &) { return true; }, chosen},
};

}  // namespace

HcclResult dispatch(Ctx &x) {
  for (const Candidate &c : kCandidates)
    if (c.applies(x)) return c.run(x);
  return HCCL_SUCCESS;  // not reached: `chosen` applies to everything
}

}  // namespace hccl
