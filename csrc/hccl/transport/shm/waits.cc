// The process-wide registry of hubs and blocked waits (waits.h), which
// rewrites the process's Blocked record in every hub's segment.
#include "hccl/transport/shm/waits.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "hccl/transport/shm/hub.h"

namespace hccl {
namespace shm {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<Hub *> hubs;
  std::vector<BlockedWait *> waits;  // the first is the record
  uint64_t gen = 0;                  // even; +2 per record
};

// Never destroyed: hubs may be released by exit handlers after statics are.
Registry &reg() {
  static Registry *r = new Registry;
  return *r;
}

BlockedAt current(const Registry &r) {
  BlockedAt b;
  b.gen = r.gen;
  if (r.waits.empty()) return b;
  const BlockedWait &w = *r.waits.front();
  b.comm = w.comm;
  b.seq = w.seq;
  b.pid = w.pid;
  b.flags = w.flags;
  b.waits = static_cast<uint32_t>(r.waits.size());
  return b;
}

void publish(Registry &r) {
  r.gen += 2;
  const BlockedAt b = current(r);
  for (Hub *h : r.hubs) h->write_blocked(b);
}

}  // namespace

void waits_add_hub(Hub *hub) {
  Registry &r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.hubs.push_back(hub);
  hub->write_blocked(current(r));
}

void waits_remove_hub(Hub *hub) {
  Registry &r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.hubs.erase(std::remove(r.hubs.begin(), r.hubs.end(), hub), r.hubs.end());
}

void BlockedWait::begin(uint64_t c, uint64_t s, uint32_t p, uint32_t f) {
  Registry &r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  comm = c;
  seq = s;
  pid = p;
  flags = f;
  if (!active_) r.waits.push_back(this);
  active_ = true;
  publish(r);
}

void BlockedWait::set_flags(uint32_t f) {
  if (!active_ || f == flags) return;
  Registry &r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  flags = f;
  if (r.waits.front() == this) publish(r);
}

void BlockedWait::end() {
  if (!active_) return;
  Registry &r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.waits.erase(std::remove(r.waits.begin(), r.waits.end(), this), r.waits.end());
  active_ = false;
  publish(r);
}

int waits_blocked() {
  Registry &r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  return static_cast<int>(r.waits.size());
}

bool waits_member(uint64_t comm, uint64_t *begun, std::string *name) {
  Registry &r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  for (Hub *h : r.hubs) {
    if (h->uid() != comm) continue;
    *begun = h->arrived(h->rank());
    *name = h->comm_name();
    return true;
  }
  return false;
}

}  // namespace shm
}  // namespace hccl
