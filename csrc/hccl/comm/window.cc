// Registration and deregistration of symmetric windows (see window.h).
//
// Registration is a host call (host_call.h): every rank checks its own
// arguments first, then all exchange {ok, size, where the memory lives}, so
// a rank whose arguments are bad makes the call fail on every rank with its
// message instead of leaving the others waiting. On one host every rank then
// maps every peer's window, and a second exchange agrees whether all could.
#include "hccl/comm/window.h"

#include <sys/stat.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "hccl/algo/ctx.h"
#include "hccl/comm/host_call.h"
#include "hccl/transport/engine.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

constexpr uint64_t kHandleBase = 0x7ad000000000ull;  // handles look like pointers, are ids

std::mutex &handles_mu() {
  static std::mutex *mu = new std::mutex;
  return *mu;
}
std::unordered_map<uint64_t, std::shared_ptr<SymWindow>> &handles() {
  static auto *map = new std::unordered_map<uint64_t, std::shared_ptr<SymWindow>>;
  return *map;
}
std::atomic<uint64_t> g_next_handle{1};

// What every rank tells the others at registration.
struct RegInfo {
  uint32_t ok;
  uint32_t pad;
  uint64_t size;
  MemDesc mem;
  char why[208];  // !ok: this rank's reason
};

void set_why(RegInfo *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void set_why(RegInfo *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(r->why, sizeof(r->why), fmt, ap);
  va_end(ap);
  r->ok = 0;
}

// Checks this rank's arguments; fills *info (ok or why) and *pin.
void check_local(const Comm &c, const WindowSet &set, void *addr, uint64_t size, uint32_t flag,
                 bool have_out, RegInfo *info, std::shared_ptr<const void> *pin) {
  std::memset(static_cast<void *>(info), 0, sizeof(*info));  // padding too: it travels
  info->ok = 1;
  info->size = size;
  const uint64_t max_bytes = c.settings.symwin_max_gb << 30;
  if (!have_out) return set_why(info, "winHandle is NULL");
  if (addr == nullptr) return set_why(info, "addr is NULL");
  if (flag != 1) return set_why(info, "flag (%u) must be 1 (as on CANN)", flag);
  if (size == 0 || size > max_bytes)
    return set_why(info, "size (%llu) must be between 1 and hcclSymWinMaxMemSizePerRank (%llu GB)",
                   static_cast<unsigned long long>(size),
                   static_cast<unsigned long long>(c.settings.symwin_max_gb));
  hostrt::MemRegion region{};
  uint64_t avail = 0;
  hostrt::MemKind kind = hostrt::locate_memory(addr, size, &region, &avail);
  if (kind == hostrt::MemKind::kHost)
    return set_why(info, "addr %p is not device memory (map it with aclrtMapMem)", addr);
  if (kind == hostrt::MemKind::kOutOfBounds)
    return set_why(info, "[addr %p, +%llu) is not inside one aclrtMapMem mapping (%llu bytes "
                   "mapped from addr)", addr, static_cast<unsigned long long>(size),
                   static_cast<unsigned long long>(avail));
  *pin = hostrt::pin_memory(addr, size);
  if (!*pin)
    return set_why(info, "addr %p is aclrtMalloc memory; a symmetric window must be memory "
                   "mapped with aclrtMapMem (aclrtReserveMemAddress + aclrtMallocPhysical), as "
                   "on CANN", addr);
  for (const auto &w : set.list) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr), b = reinterpret_cast<uintptr_t>(w->base);
    if (a < b + w->size && b < a + size)
      return set_why(info, "[addr %p, +%llu) overlaps the window registered at [%p, +%llu)", addr,
                     static_cast<unsigned long long>(size), static_cast<void *>(w->base),
                     static_cast<unsigned long long>(w->size));
  }
  struct stat st;
  if (region.fd < 0 || fstat(region.fd, &st) != 0)
    return set_why(info, "cannot describe the memory at %p", addr);
  info->mem.fd = region.fd;
  info->mem.ino = static_cast<uint64_t>(st.st_ino);
  info->mem.file_size = region.file_size;
  info->mem.offset = region.offset;
  info->mem.bytes = size;
}

// The agreed verdict of round 1: "" when every rank may register.
std::string verdict(const std::vector<RegInfo> &all) {
  for (size_t r = 0; r < all.size(); ++r)
    if (!all[r].ok) return "rank " + std::to_string(r) + ": " + std::string(all[r].why, strnlen(all[r].why, sizeof(all[r].why)));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r].size != all[0].size)
      return "window sizes differ between ranks: rank 0 registers " + std::to_string(all[0].size) +
             " bytes, rank " + std::to_string(r) + " " + std::to_string(all[r].size) +
             " (a symmetric window has the same size on every rank)";
  return "";
}

void publish(Comm &c, std::shared_ptr<const WindowSet> set) {
  std::lock_guard<std::mutex> lock(c.mu);
  c.windows = std::move(set);
}

}  // namespace


std::shared_ptr<const WindowSet> comm_windows(const Comm &c) {
  std::lock_guard<std::mutex> lock(const_cast<Comm &>(c).mu);
  if (c.windows) return c.windows;
  static const std::shared_ptr<const WindowSet> empty = std::make_shared<WindowSet>();
  return empty;
}

HcclResult window_register(const std::shared_ptr<Comm> &c, void *addr, uint64_t size,
                           uint32_t flag, HcclCommSymWindow *out, const char *api) {
  std::shared_ptr<const WindowSet> before = comm_windows(*c);
  RegInfo mine;
  std::shared_ptr<const void> pin;
  check_local(*c, *before, addr, size, flag, out != nullptr, &mine, &pin);
  std::string refused;
  auto win = std::make_shared<SymWindow>();
  HcclResult r = comm_host_call(c, OpKind::kSymWinRegister, api, 0, [&](Ctx &x) -> HcclResult {
    std::vector<RegInfo> all(x.n);
    HcclResult rc = exchange(x, &mine, sizeof(mine), all.data());
    if (rc != HCCL_SUCCESS) return rc;
    refused = verdict(all);
    if (!refused.empty()) return HCCL_SUCCESS;  // every rank saw the same: nothing registered
    // One host: map every peer's window now, once.
    uint32_t mapped = !x.multi_host() && x.comm.single_copy_ok;
    std::vector<char *> peers(x.n, nullptr);
    for (int p = 0; p < x.n && mapped; ++p) {
      if (p == x.me) {
        peers[p] = static_cast<char *>(addr);
        continue;
      }
      void *m = x.eng.conn(p).map_peer_memory(all[p].mem);
      if (m == nullptr) mapped = 0;
      peers[p] = static_cast<char *>(m);
    }
    std::vector<uint32_t> maps(x.n);
    rc = exchange(x, &mapped, sizeof(mapped), maps.data());
    if (rc != HCCL_SUCCESS) return rc;
    win->direct = true;
    for (uint32_t m : maps) win->direct = win->direct && m != 0;
    if (win->direct) win->peers = std::move(peers);
    return HCCL_SUCCESS;
  });
  if (r != HCCL_SUCCESS) return r;
  if (!refused.empty()) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: %s", api, refused.c_str());
  }
  // Registered on every rank: number it, publish it.
  std::shared_ptr<const WindowSet> now = comm_windows(*c);
  auto next = std::make_shared<WindowSet>(*now);
  win->id = kHandleBase + 16 * g_next_handle.fetch_add(1);
  win->seq = next->next_seq++;
  win->comm_id = c->id;
  win->base = static_cast<char *>(addr);
  win->size = size;
  win->pin = std::move(pin);
  next->list.push_back(win);
  {
    std::lock_guard<std::mutex> lock(handles_mu());
    handles()[win->id] = win;
  }
  publish(*c, std::move(next));
  *out = reinterpret_cast<HcclCommSymWindow>(win->id);
  return HCCL_SUCCESS;
}

HcclResult window_deregister(HcclCommSymWindow handle, const char *api) {
  if (handle == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: winHandle is NULL", api);
  }
  std::shared_ptr<SymWindow> win;
  {
    std::lock_guard<std::mutex> lock(handles_mu());
    auto it = handles().find(reinterpret_cast<uint64_t>(handle));
    if (it != handles().end()) win = it->second;
  }
  std::shared_ptr<Comm> c = win ? comm_lookup(reinterpret_cast<HcclComm>(win->comm_id)) : nullptr;
  if (!c) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: winHandle %p is not a registered window (deregistered, its "
                                  "communicator destroyed, or never registered)", api, handle);
  }
  // Every rank must name the window registered in the same call.
  uint64_t mine = win->seq;
  std::string refused;
  HcclResult r = comm_host_call(c, OpKind::kSymWinDeregister, api, 0, [&](Ctx &x) -> HcclResult {
    std::vector<uint64_t> all(x.n);
    HcclResult rc = exchange(x, &mine, sizeof(mine), all.data());
    if (rc != HCCL_SUCCESS) return rc;
    for (int p = 0; p < x.n; ++p)
      if (all[p] != mine)
        refused = "rank " + std::to_string(p) + " deregisters the window of registration #" +
                  std::to_string(all[p]) + ", this rank that of registration #" +
                  std::to_string(mine) + " (every rank must deregister the same window)";
    return HCCL_SUCCESS;
  });
  if (r != HCCL_SUCCESS) return r;
  if (!refused.empty()) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: %s", api, refused.c_str());
  }
  std::shared_ptr<const WindowSet> now = comm_windows(*c);
  auto next = std::make_shared<WindowSet>(*now);
  for (size_t i = 0; i < next->list.size(); ++i)
    if (next->list[i] == win) next->list.erase(next->list.begin() + static_cast<long>(i));
  publish(*c, std::move(next));
  {
    std::lock_guard<std::mutex> lock(handles_mu());
    handles().erase(win->id);
  }
  // Every earlier operation has run (the call took its turn after them):
  // the memory may be unmapped now.
  win->pin.reset();
  return HCCL_SUCCESS;
}

void windows_drop(Comm &c) {
  std::shared_ptr<const WindowSet> set;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    set = std::move(c.windows);
    c.windows.reset();
  }
  if (!set) return;
  std::lock_guard<std::mutex> lock(handles_mu());
  for (const auto &w : set->list) {
    handles().erase(w->id);
    w->pin.reset();
  }
}

}  // namespace hccl
