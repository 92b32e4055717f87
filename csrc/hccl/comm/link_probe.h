// The link between hosts, measured at set-up for the cost model across hosts
// (algo/select.cc): rank 0 and the first rank of the next host time a few
// ping-pongs (latency), a burst (bandwidth) and a run of small messages (the
// time a rank spends per message) over their TCP connection,
// while every other rank goes on to the last set-up round, where rank 0's
// result becomes everyone's. A value rank 0 declares (PYHCCL_NET_LATENCY_US,
// PYHCCL_NET_MBITS, PYHCCL_NET_MESSAGE_US) is used as it is, and not measured.
#pragma once

#include <cstdint>

#include "hccl/comm/comm.h"

namespace hccl {

// What the last set-up round carries from rank 0: the link as the cost model
// uses it, and whether each part was measured.
struct LinkInfo {
  uint64_t latency_ns = 0;
  uint64_t bits_per_s = 0;
  uint32_t measured = 0;  // kLatencyMeasured | kRateMeasured | kMessageMeasured
  uint32_t message_ns = 0;
};
constexpr uint32_t kLatencyMeasured = 1, kRateMeasured = 2, kMessageMeasured = 4;

// On rank 0: measures the parts `link->measured` names, with its partner
// across hosts (which only answers). Elsewhere, or with nothing to measure:
// nothing. Fails (the engine's error, *why) when the partner fails or the link
// stalls for the exec timeout.
HcclResult probe_link(Comm &c, LinkInfo *link, std::string *why);

}  // namespace hccl
