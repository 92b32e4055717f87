// Measuring the link between the first two hosts (link_probe.h). Messages
// carry a signature of their own (no collective's), so a rank that is not
// probing cannot take them for an operation's.
#include "hccl/comm/link_probe.h"

#include <algorithm>
#include <vector>

#include "common/clock.h"
#include "hccl/op/spec.h"

namespace hccl {
namespace {

constexpr int kPings = 9;                       // ping-pongs; the median is the round trip
constexpr size_t kWarmBytes = 256 << 10;        // opens TCP's congestion window first
constexpr size_t kBurstBytes = 2 << 20;         // then the timed burst
constexpr int kSmall = 32;                      // small messages sent back to back

OpSig probe_sig(size_t bytes) {
  OpSig s;
  s.kind = static_cast<uint32_t>(OpKind::kSendRecv);
  s.count = bytes;
  s.root = 0xffffffffu;  // no collective or send/recv has it
  return s;
}

class Prober {
 public:
  Prober(Comm &c, int peer) : c_(c), peer_(peer), chunk_(std::max<uint64_t>(c.tuning.chunk_bytes, 4096)) {}

  // Sends (or receives) `bytes` in messages of `chunk` bytes (the transfer
  // chunk: they spread over the TCP sockets).
  HcclResult move(bool send, size_t bytes, char *buf, size_t chunk = 0) {
    if (chunk == 0) chunk = chunk_;
    std::vector<Transfer> xs;
    for (size_t off = 0; off < bytes; off += chunk) {
      Transfer t;
      t.kind = send ? Transfer::kSend : Transfer::kRecv;
      t.peer = peer_;
      t.bytes = std::min<size_t>(chunk, bytes - off);
      t.src = send ? buf + off : nullptr;
      t.dst = send ? nullptr : buf + off;
      t.sig = probe_sig(bytes);
      xs.push_back(t);
    }
    std::vector<Transfer *> ptrs;
    for (Transfer &t : xs) ptrs.push_back(&t);
    return c_.engine->run(ptrs.data(), ptrs.size(), &err);
  }

  WaitError err;

 private:
  Comm &c_;
  const int peer_;
  const size_t chunk_;
};

}  // namespace

HcclResult probe_link(Comm &c, LinkInfo *link, std::string *why) {
  if (c.topo.nhosts() < 2) return HCCL_SUCCESS;
  const int a = 0, b = c.topo.hosts[c.topo.host_of[0] == 0 ? 1 : 0][0];
  const int me = static_cast<int>(c.rank);
  if ((me != a && me != b) || link->measured == 0) return HCCL_SUCCESS;
  const bool lead = me == a;
  Prober p(c, lead ? b : a);
  std::vector<char> buf(kBurstBytes);
  std::vector<int64_t> rtt;
  HcclResult r = HCCL_SUCCESS;
  // Ping-pongs: rank 0 sends, its partner answers.
  for (int i = 0; i < kPings && r == HCCL_SUCCESS; ++i) {
    const int64_t t0 = common::now_ns();
    r = p.move(lead, 8, buf.data());
    if (r == HCCL_SUCCESS) r = p.move(!lead, 8, buf.data());
    rtt.push_back(common::now_ns() - t0);
  }
  // Bursts: a warm-up, then the timed one, each answered with 8 bytes.
  int64_t burst_ns = 0;
  for (size_t bytes : {kWarmBytes, kBurstBytes}) {
    const int64_t t0 = common::now_ns();
    if (r == HCCL_SUCCESS) r = p.move(lead, bytes, buf.data());
    if (r == HCCL_SUCCESS) r = p.move(!lead, 8, buf.data());
    burst_ns = common::now_ns() - t0;
  }
  // Small messages: kSmall of 8 bytes back to back, answered with one; past
  // the round trip, the time per message of the busier end.
  int64_t small_ns = 0;
  if (r == HCCL_SUCCESS) {
    const int64_t t0 = common::now_ns();
    r = p.move(lead, 8 * kSmall, buf.data(), 8);
    if (r == HCCL_SUCCESS) r = p.move(!lead, 8, buf.data());
    small_ns = common::now_ns() - t0;
  }
  if (r != HCCL_SUCCESS) {
    *why = "measuring the link to rank " + std::to_string(lead ? b : a) + ": " + p.err.what;
    return r;
  }
  if (!lead) return HCCL_SUCCESS;
  std::sort(rtt.begin(), rtt.end());
  const int64_t round_trip = rtt[rtt.size() / 2];
  if (link->measured & kLatencyMeasured) link->latency_ns = static_cast<uint64_t>(std::max<int64_t>(round_trip / 2, 1000));
  if (link->measured & kMessageMeasured)
    link->message_ns = static_cast<uint32_t>(std::max<int64_t>((small_ns - round_trip) / kSmall, 1));
  if (link->measured & kRateMeasured) {
    const int64_t wire_ns = std::max<int64_t>(burst_ns - round_trip, 1000);
    link->bits_per_s = static_cast<uint64_t>(8.0 * kBurstBytes * 1e9 / static_cast<double>(wire_ns));
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
