#include "hccl/comm/flight.h"

#include <cstdio>
#include <string>

#include "common/clock.h"
#include "hccl/reduce/reduce.h"

namespace hccl {

FlightRecorder::FlightRecorder(size_t capacity) : ring_(capacity > 0 ? capacity : 1) {}

const OpRecord *FlightRecorder::find(uint64_t ticket) const {
  const OpRecord &r = ring_[ticket % ring_.size()];
  return r.ticket == ticket && next_ > ticket ? &r : nullptr;
}

void FlightRecorder::enqueued(uint64_t ticket, const OpDesc &op, int64_t at) {
  OpRecord &r = ring_[ticket % ring_.size()];
  r = OpRecord{};
  r.ticket = ticket;
  r.api = op.api;
  r.count = op.count;
  r.dtype = static_cast<int32_t>(op.dtype);
  r.root = static_cast<int32_t>(op.root);
  r.rooted = op_spec(op.kind).rooted;
  r.op = static_cast<int32_t>(op.op);
  r.enqueue_ns = at;
  if (ticket + 1 > next_) next_ = ticket + 1;
}

void FlightRecorder::set_enqueued_at(uint64_t ticket, int64_t at) {
  if (OpRecord *r = find(ticket)) r->enqueue_ns = at;
}

void FlightRecorder::started(uint64_t ticket, uint64_t seq) {
  if (OpRecord *r = find(ticket)) {
    r->seq = seq;
    r->state = OpRecord::kRunning;
    r->start_ns = common::now_ns();
    if (r->enqueue_ns == 0) r->enqueue_ns = r->start_ns;
  }
}

void FlightRecorder::ended(uint64_t ticket, bool ok, const char *algo) {
  if (OpRecord *r = find(ticket)) {
    r->state = ok ? OpRecord::kDone : OpRecord::kFailed;
    r->end_ns = common::now_ns();
    r->algo = algo;
  }
}

bool FlightRecorder::get(uint64_t ticket, OpRecord *out) const {
  const OpRecord *r = find(ticket);
  if (r != nullptr) *out = *r;
  return r != nullptr;
}

std::vector<OpRecord> FlightRecorder::snapshot() const {
  std::vector<OpRecord> out;
  uint64_t first = next_ > ring_.size() ? next_ - ring_.size() : 0;
  for (uint64_t t = first; t < next_; ++t)
    if (const OpRecord *r = find(t)) out.push_back(*r);
  return out;
}

std::string FlightRecorder::dump(const std::vector<OpRecord> &records) {
  static const char *const kStates[] = {"queued", "running", "done", "FAILED"};
  std::string out;
  for (const OpRecord &r : records) {
    char line[256];
    double run_us = r.start_ns == 0 ? 0 : ((r.end_ns ? r.end_ns : common::now_ns()) - r.start_ns) / 1e3;
    // Only the fields the operation has: a root for rooted ones, none for a barrier.
    const std::string api = r.api;
    char what[96] = "";
    if (api != "HcclBarrier")
      std::snprintf(what, sizeof(what), " count %llu %s", static_cast<unsigned long long>(r.count),
                    dtype_name(static_cast<HcclDataType>(r.dtype)));
    char root[24] = "";
    if (r.rooted) std::snprintf(root, sizeof(root), " root %d", r.root);
    std::snprintf(line, sizeof(line), "\n  #%llu %s%s%s: %s%s%s, %.1f us",
                  static_cast<unsigned long long>(r.seq), r.api, what, root, kStates[r.state],
                  r.algo[0] ? " via " : "", r.algo, run_us);
    out += line;
  }
  return out;
}

}  // namespace hccl
