// Algorithm tuning, agreed by every rank at set-up: rank 0's environment is
// sent to all ranks and parsed once, so that ranks whose environments differ
// cannot choose differently.
//
// PYHCCL_ALGO="coll:algo[,coll:algo...]" forces an algorithm per collective:
//   coll: the collectives with a PYHCCL_ALGO key in op/spec_table.cc:
//         allreduce reduce broadcast allgather reducescatter alltoall
//   algo: flat    every rank sends its whole buffer to the others (AllReduce,
//                 Reduce; small messages, one step)
//         direct  single copy between peers' device memory on one host
//         hier    reduce-scatter inside each host, a ring across hosts in
//                 which every local rank carries its own slice, all-gather
//                 inside each host (on one host: pairwise reduce-scatter +
//                 all-gather); needs the same number of ranks on every host
//         ring    one ring over all ranks, host by host
//         tree    Broadcast/Reduce: star for small messages, a pipelined
//                 chain for large ones; across hosts through one rank per host,
//                 a star or a chain between them by the cost model
//         pairwise  AlltoAll: every pair exchanges directly
//         leader  AllReduce across hosts: reduce onto one rank per host, the
//                 leaders exchange partial sums, each hands its host the result
//   The foundation's names still work: latency = flat, chunked/staged = hier,
//   single = direct. A forced algorithm that cannot run (direct on host
//   memory, hier on uneven hosts) falls back to the automatic choice.
// HCCL_ALGO, CANN's syntax ("level0:NA;level1:ring", or per collective
// "allreduce=level0:NA;level1:ring/alltoall=level0:NA;level1:pairwise"),
// forces the algorithm between hosts where it maps: ring, pipeline (= hier),
// pairwise. PYHCCL_ALGO wins where both name a collective.
#pragma once

#include <cstdint>
#include <string>

#include "hccl/op/spec.h"

namespace hccl {


// A link as the cost model sees it (select.cc): a message costs alpha seconds
// plus beta seconds per byte.
struct LinkCost {
  double alpha, beta;
  double time(double messages, double bytes) const { return messages * alpha + bytes * beta; }
};

struct AlgoTuning {
  uint64_t flat_bytes = 64 << 10;        // AllReduce/Reduce: flat up to this size (PYHCCL_LATENCY_BYTES)
  uint64_t single_copy_min = 256 << 10;  // direct from this size (PYHCCL_SINGLE_COPY_BYTES)
  uint64_t chunk_bytes = 1 << 20;        // largest message of a transfer (PYHCCL_CHUNK_BYTES)
  uint64_t chain_min = 256 << 10;        // Broadcast/Reduce trees: a chain from this size
  // Pairwise AlltoAll(V), AllGatherV and ReduceScatterV between hosts: sends under
  // way at once per rank (PYHCCL_ALLTOALL_WINDOW); 0: from the message size (pairwise.cc).
  uint32_t alltoall_window = 0;
  // Between hosts: declared (PYHCCL_NET_LATENCY_US, PYHCCL_NET_MBITS) or measured at
  // set-up (comm/link_probe.h); 50 us and 10 Gbit/s until then.
  LinkCost net{50e-6, 8.0 / 10e9};
  // The time a rank spends on each message between hosts it sends or receives
  // (system calls, wake-ups), which the cost model charges each candidate for
  // the messages of its busiest rank (select.cc; PYHCCL_NET_MESSAGE_US, or
  // measured); 0 until then.
  double net_message = 0;
  // The link from nanoseconds and bits per second; a 0 keeps that part as it is.
  void set_net(uint64_t latency_ns, uint64_t bits_per_s, uint64_t message_ns) {
    if (latency_ns > 0) net.alpha = static_cast<double>(latency_ns) * 1e-9;
    if (bits_per_s > 0) net.beta = 8.0 / static_cast<double>(bits_per_s);
    if (message_ns > 0) net_message = static_cast<double>(message_ns) * 1e-9;
  }
  // By OpKind; only collectives with a PYHCCL_ALGO key (op/spec.h) are forced.
  Algo forced[kOpKinds] = {};
  Algo forced_between_hosts[kOpKinds] = {};  // from HCCL_ALGO

  // Parses PYHCCL_ALGO and HCCL_ALGO values (rank 0's). Entries that cannot
  // be honoured are listed in *bad (one line each, for a warning).
  void parse(const std::string &pyhccl_algo, const std::string &hccl_algo, std::string *bad);
  Algo forced_for(OpKind k, bool multi_host) const;
};

// Prints the warning for bad entries once per process.
void warn_tuning_once(const std::string &pyhccl_algo, const std::string &hccl_algo,
                      const std::string &bad);

}  // namespace hccl
