#include <cstring>

#include "hccl/op/spec.h"

namespace hccl {
namespace {

constexpr unsigned bits(Algo a) { return algo_bit(a); }
template <typename... More>
constexpr unsigned bits(Algo a, More... more) { return algo_bit(a) | bits(more...); }

using A = Algo;
using C = CountRule;
constexpr BufferRule kNone{Size::kNone, Who::kAll}, kCount{Size::kCount, Who::kAll},
    kPerRank{Size::kPerRank, Who::kAll}, kRootCount{Size::kCount, Who::kRoot},
    kNonRootCount{Size::kCount, Who::kNonRoot}, kRootPerRank{Size::kPerRank, Who::kRoot},
    kVector{Size::kVector, Who::kAll};
constexpr ZeroCount kCompare = ZeroCount::kCompareSignatures, kRun = ZeroCount::kRunAlgorithm;

// kind, api, PYHCCL_ALGO key, rooted, reducing, count rule, send, recv,
// one buffer, count 0, algorithms, host call.
constexpr CollectiveSpec kSpecs[] = {
    {OpKind::kAllReduce, "HcclAllReduce", "allreduce", false, true, C::kSameCount, kCount, kCount, false,
     kCompare, bits(A::kWindow, A::kBoard, A::kFlat, A::kDirect, A::kHier, A::kRing, A::kLeader), false},
    {OpKind::kBroadcast, "HcclBroadcast", "broadcast", true, false, C::kSameCount, kRootCount, kNonRootCount,
     true, kCompare, bits(A::kWindow, A::kBoard, A::kDirect, A::kTree), false},
    {OpKind::kAllGather, "HcclAllGather", "allgather", false, false, C::kSameCount, kCount, kPerRank, false,
     kCompare, bits(A::kWindow, A::kBoard, A::kDirect, A::kHier, A::kRing, A::kLeader), false},
    {OpKind::kReduceScatter, "HcclReduceScatter", "reducescatter", false, true, C::kSameCount, kPerRank,
     kCount, false, kCompare, bits(A::kWindow, A::kBoard, A::kDirect, A::kHier, A::kRing, A::kLeader), false},
    {OpKind::kBarrier, "HcclBarrier", nullptr, false, false, C::kSameCount, kNone, kNone, false, kCompare, 0,
     false},
    {OpKind::kReduce, "HcclReduce", "reduce", true, true, C::kSameCount, kCount, kRootCount, false, kCompare,
     bits(A::kWindow, A::kBoard, A::kFlat, A::kDirect, A::kTree), false},
    {OpKind::kScatter, "HcclScatter", nullptr, true, false, C::kSameCount, kRootPerRank, kCount, false, kRun,
     bits(A::kPairwise), false},
    {OpKind::kAlltoAll, "HcclAlltoAll", "alltoall", false, false, C::kSameCount, kPerRank, kPerRank, false,
     kRun, bits(A::kBoard, A::kDirect, A::kPairwise, A::kLeader, A::kRail), false},
    {OpKind::kAllGatherV, "HcclAllGatherV", nullptr, false, false, C::kRecvCountsDigest, kVector, kVector,
     false, kRun, bits(A::kPairwise, A::kHier, A::kRing, A::kLeader), false},
    {OpKind::kReduceScatterV, "HcclReduceScatterV", nullptr, false, true, C::kSendCountsDigest, kVector,
     kVector, false, kRun, bits(A::kPairwise, A::kHier, A::kRing, A::kLeader), false},
    {OpKind::kAlltoAllV, "HcclAlltoAllV", nullptr, false, false, C::kNotCompared, kVector, kVector, false,
     kRun, bits(A::kPairwise), false},
    {OpKind::kSendRecv, "send/recv", nullptr, false, false, C::kNotCompared, kVector, kVector, false, kRun, 0,
     false},
    {OpKind::kSymWinRegister, "HcclCommSymWinRegister", nullptr, false, false, C::kSameCount, kNone, kNone,
     false, kRun, 0, true},
    {OpKind::kSymWinDeregister, "HcclCommSymWinDeregister", nullptr, false, false, C::kSameCount, kNone,
     kNone, false, kRun, 0, true},
    {OpKind::kCreateSubComm, "HcclCreateSubCommConfig", nullptr, false, false, C::kSameCount, kNone, kNone,
     false, kRun, 0, true},
    {OpKind::kGather, "PyhcclGather", nullptr, true, false, C::kSameCount, kCount, kRootPerRank, false, kRun,
     bits(A::kBoard, A::kPairwise), false},
};
static_assert(sizeof(kSpecs) / sizeof(kSpecs[0]) == kOpKinds, "one row per OpKind");

constexpr bool rows_in_order(int i) {
  return i == kOpKinds || (static_cast<int>(kSpecs[i].kind) == i && rows_in_order(i + 1));
}
static_assert(rows_in_order(0), "rows in OpKind order");

constexpr const char *kAlgoNames[] = {"auto",     "flat",   "direct", "hier",  "ring",  "tree",
                                      "pairwise", "leader", "rail",   "board", "window"};
static_assert(sizeof(kAlgoNames) / sizeof(kAlgoNames[0]) == static_cast<size_t>(Algo::kWindow) + 1,
              "one name per Algo");

}  // namespace

const char *algo_name(Algo a) { return kAlgoNames[static_cast<int>(a)]; }

const CollectiveSpec &op_spec(OpKind kind) { return kSpecs[static_cast<int>(kind)]; }

const CollectiveSpec *op_spec_or_null(uint32_t kind) {
  return kind < static_cast<uint32_t>(kOpKinds) ? &kSpecs[kind] : nullptr;
}

const CollectiveSpec *op_spec_by_key(const char *key) {
  for (const CollectiveSpec &s : kSpecs)
    if (s.algo_key != nullptr && std::strcmp(s.algo_key, key) == 0) return &s;
  return nullptr;
}

}  // namespace hccl
