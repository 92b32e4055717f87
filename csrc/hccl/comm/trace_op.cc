// A collective's event for the trace (runtime/trace.h: aclprofStart,
// PYHCCL_TRACE): name, times and algorithm come from the flight record, which
// has them already; the rest from the communicator and the operation.
#include <numeric>

#include "hccl/comm/comm.h"
#include "hccl/reduce/reduce.h"

namespace hccl {
namespace {

// The data this rank's call contributes: count x type size, summed over the
// send counts of the V variants and over the items of send/recv.
uint64_t op_bytes(const OpDesc &op) {
  if (!op.items.empty()) {
    uint64_t b = 0;
    for (const P2pItem &it : op.items) b += it.count * dtype_size(it.dtype);
    return b;
  }
  const uint64_t elems = op.send_counts.empty()
                             ? op.count
                             : std::accumulate(op.send_counts.begin(), op.send_counts.end(),
                                               uint64_t{0});
  return elems * dtype_size(op.dtype);
}

}  // namespace

void trace_op(const Comm &c, const OpDesc &op, const OpRecord &r) {
  hostrt::TraceEvent ev;
  ev.name = r.api;
  ev.device = c.device;
  ev.stream = hostrt::current_stream_id();
  ev.start_ns = r.start_ns;
  ev.end_ns = r.end_ns;
  ev.bytes = op_bytes(op);
  ev.ok = r.state == OpRecord::kDone;
  ev.hccl = true;
  ev.count = r.count;
  ev.seq = r.seq;
  ev.dtype = dtype_name(static_cast<HcclDataType>(r.dtype));
  ev.algo = r.algo;
  ev.comm = c.name.c_str();
  ev.rank = c.rank;
  ev.nranks = c.nranks;
  hostrt::trace_record(ev);
}

}  // namespace hccl
