#include "hccl/comm/op_errors.h"

#include <mutex>
#include <unordered_map>

#include "runtime/hostrt.h"

namespace hccl {
namespace {

std::mutex &mu() {
  static std::mutex *m = new std::mutex;
  return *m;
}
std::unordered_map<uint64_t, OpError> &records() {
  static auto *r = new std::unordered_map<uint64_t, OpError>;
  return *r;
}

}  // namespace

void record_op_error(const OpError &e) {
  uint64_t id = hostrt::current_stream_id();
  if (id == 0) return;
  std::lock_guard<std::mutex> lock(mu());
  records().emplace(id, e);  // keeps the first one
}

bool take_op_error(uint64_t stream_id, OpError *out) {
  std::lock_guard<std::mutex> lock(mu());
  auto it = records().find(stream_id);
  if (it == records().end()) return false;
  *out = std::move(it->second);
  records().erase(it);
  return true;
}

}  // namespace hccl
