#include "hccl/algo/ctx.h"

namespace hccl {
namespace {

constexpr OpFacts kFacts[] = {
    {OpKind::kAllReduce, "HcclAllReduce", false, true, OpFacts::kSameCount, run_all_reduce},
    {OpKind::kBroadcast, "HcclBroadcast", true, false, OpFacts::kSameCount, run_broadcast},
    {OpKind::kAllGather, "HcclAllGather", false, false, OpFacts::kSameCount, run_all_gather},
    {OpKind::kReduceScatter, "HcclReduceScatter", false, true, OpFacts::kSameCount, run_reduce_scatter},
    {OpKind::kBarrier, "HcclBarrier", false, false, OpFacts::kSameCount, run_barrier},
    {OpKind::kReduce, "HcclReduce", true, true, OpFacts::kSameCount, run_reduce},
    {OpKind::kScatter, "HcclScatter", true, false, OpFacts::kSameCount, run_scatter},
    {OpKind::kAlltoAll, "HcclAlltoAll", false, false, OpFacts::kSameCount, run_all_to_all_v},
    {OpKind::kAllGatherV, "HcclAllGatherV", false, false, OpFacts::kRecvCountsDigest, run_all_gather_v},
    {OpKind::kReduceScatterV, "HcclReduceScatterV", false, true, OpFacts::kSendCountsDigest, run_reduce_scatter_v},
    {OpKind::kAlltoAllV, "HcclAlltoAllV", false, false, OpFacts::kNotCompared, run_all_to_all_v},
    {OpKind::kSendRecv, "send/recv", false, false, OpFacts::kNotCompared, run_send_recv},
    {OpKind::kSymWinRegister, "HcclCommSymWinRegister", false, false, OpFacts::kSameCount, run_host_call},
    {OpKind::kSymWinDeregister, "HcclCommSymWinDeregister", false, false, OpFacts::kSameCount, run_host_call},
    {OpKind::kCreateSubComm, "HcclCreateSubCommConfig", false, false, OpFacts::kSameCount, run_host_call},
};
static_assert(sizeof(kFacts) / sizeof(kFacts[0]) == kOpKinds, "one row per OpKind");

constexpr bool rows_in_order(int i) {
  return i == kOpKinds || (static_cast<int>(kFacts[i].kind) == i && rows_in_order(i + 1));
}
static_assert(rows_in_order(0), "rows in OpKind order");

}  // namespace

const OpFacts &op_facts(OpKind kind) { return kFacts[static_cast<int>(kind)]; }

const OpFacts *op_facts_or_null(uint32_t kind) {
  return kind < static_cast<uint32_t>(kOpKinds) ? &kFacts[kind] : nullptr;
}

}  // namespace hccl
