// Checks the internal interface libhccl uses (csrc/runtime/hostrt.h): task
// errors and their messages reach the synchronizing thread, stop-on-failure
// mode, resolve_stream messages, the arena and mapped virtual memory seen
// through /proc/self/fd, pins of mapped memory.
// Prints "hostrt ok".
//   g++ -std=c++17 -Iinclude -Icsrc tests/c/hostrt_check.cc -Lbuild/lib -lascendcl
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "runtime/hostrt.h"

#define CHECK(cond)                                                                       \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      const char *m_ = aclGetRecentErrMsg();                                              \
      std::fprintf(stderr, "hostrt_check.cc:%d: CHECK(%s) failed (recent error: %s)\n",   \
                   __LINE__, #cond, m_ ? m_ : "(none)");                                  \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)
#define OK(call) CHECK((call) == ACL_SUCCESS)

static bool msg_has(const char *needle) {
  const char *m = aclGetRecentErrMsg();
  return m != nullptr && std::strstr(m, needle) != nullptr;
}

static int g_local;
static const void *local_ptr() { return &g_local; }

// A peer's view of a located range, mapped the way libhccl does: file_size
// bytes from offset 0 of /proc/<pid>/fd/<fd>, then offset.
struct PeerView {
  unsigned char *base = nullptr;
  uint64_t size = 0;
  explicit PeerView(const hostrt::MemRegion &r) : size(r.file_size) {
    std::string path = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(r.fd);
    int fd = open(path.c_str(), O_RDWR);
    CHECK(fd >= 0);
    void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    CHECK(m != MAP_FAILED);
    base = static_cast<unsigned char *>(m);
  }
  ~PeerView() { munmap(base, size); }
};

// Memory mapped through the virtual memory API is located like aclrtMalloc
// memory, one mapping at a time; unmapped reserved space is never "host".
static void check_mapped_memory(uint64_t arena_file_id) {
  const size_t mib = 1u << 20;
  aclrtPhysicalMemProp prop{};
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  void *v = nullptr;
  aclrtDrvMemHandle h1 = nullptr, h2 = nullptr;
  OK(aclrtReserveMemAddress(&v, 8 * mib, 0, nullptr, 0));
  OK(aclrtMallocPhysical(&h1, 2 * mib, &prop, 0));
  OK(aclrtMallocPhysical(&h2, 4 * mib, &prop, 0));
  char *b = static_cast<char *>(v);
  OK(aclrtMapMem(b + 2 * mib, 2 * mib, 0, h1, 0));
  OK(aclrtMapMem(b + 4 * mib, 4 * mib, 0, h2, 0));

  hostrt::MemRegion r1{}, r2{};
  uint64_t avail = 0;
  CHECK(hostrt::locate_memory(b + 2 * mib + 100, 1000, &r1, &avail) == hostrt::MemKind::kDevice);
  CHECK(r1.fd >= 0 && r1.file_size == 2 * mib && r1.offset == 100 && avail == 2 * mib - 100);
  CHECK(hostrt::locate_memory(b + 5 * mib, 3 * mib, &r2, &avail) == hostrt::MemKind::kDevice);
  CHECK(r2.fd != r1.fd && r2.file_size == 4 * mib && r2.offset == mib && avail == 3 * mib);
  CHECK(r1.file_id != r2.file_id && r1.file_id != arena_file_id && r2.file_id != arena_file_id);
  // Up to the end of a mapping, not one byte further, not across two mappings.
  CHECK(hostrt::locate_memory(b + 4 * mib - 8, 8, nullptr, nullptr) == hostrt::MemKind::kDevice);
  CHECK(hostrt::locate_memory(b + 4 * mib - 8, 9, nullptr, &avail) == hostrt::MemKind::kOutOfBounds);
  CHECK(avail == 8);
  CHECK(hostrt::locate_memory(b + 8 * mib - 1, 2, nullptr, nullptr) == hostrt::MemKind::kOutOfBounds);
  // Unmapped reserved space: out of bounds, nothing available.
  avail = 99;
  CHECK(hostrt::locate_memory(b, 1, nullptr, &avail) == hostrt::MemKind::kOutOfBounds && avail == 0);
  CHECK(hostrt::locate_memory(b + mib, 2 * mib, nullptr, nullptr) == hostrt::MemKind::kOutOfBounds);

  // A peer's mapping shows (and changes) the same bytes.
  OK(aclrtMemset(b + 5 * mib, mib, 0x6b, mib));
  {
    PeerView peer(r2);
    CHECK(peer.base[r2.offset] == 0x6b && peer.base[r2.offset + mib - 1] == 0x6b);
    peer.base[r2.offset + 7] = 0x01;
    CHECK(static_cast<unsigned char>(b[5 * mib + 7]) == 0x01);
  }

  // A pin keeps the mapping mapped: unmap fails until the pin is dropped.
  std::shared_ptr<const void> pin = hostrt::pin_memory(b + 2 * mib, 64);
  CHECK(pin != nullptr);
  CHECK(!hostrt::pin_memory(b, 64));                  // unmapped: nothing to pin
  CHECK(!hostrt::pin_memory(b + 4 * mib - 8, 64));    // runs past the mapping
  CHECK(aclrtUnmapMem(b + 2 * mib) == ACL_ERROR_INVALID_PARAM && msg_has("in use"));
  pin.reset();
  OK(aclrtUnmapMem(b + 2 * mib));
  CHECK(hostrt::locate_memory(b + 2 * mib, 1, nullptr, nullptr) == hostrt::MemKind::kOutOfBounds);

  // A freed handle's fd number may come back for the next handle, its file_id never.
  const uint64_t old_id = r1.file_id;
  OK(aclrtFreePhysical(h1));
  OK(aclrtMallocPhysical(&h1, 2 * mib, &prop, 0));
  OK(aclrtMapMem(b + 2 * mib, 2 * mib, 0, h1, 0));
  CHECK(hostrt::locate_memory(b + 2 * mib, 1, &r1, nullptr) == hostrt::MemKind::kDevice);
  CHECK(r1.file_id != old_id);

  OK(aclrtUnmapMem(b + 2 * mib));
  OK(aclrtUnmapMem(b + 4 * mib));
  OK(aclrtFreePhysical(h1));
  OK(aclrtFreePhysical(h2));
  OK(aclrtReleaseMemAddress(v));
  CHECK(hostrt::locate_memory(b + 4 * mib, 1, nullptr, nullptr) == hostrt::MemKind::kHost);
}

int main() {
  aclError err = ACL_SUCCESS;
  // No device yet: the default stream cannot be resolved.
  CHECK(hostrt::current_device() == -1);
  CHECK(hostrt::resolve_stream(nullptr, "HcclAllReduce", &err) == nullptr);
  CHECK(err == ACL_ERROR_RT_CONTEXT_NULL && msg_has("HcclAllReduce"));

  OK(aclInit(nullptr));
  OK(aclrtSetDevice(3));
  CHECK(hostrt::current_device() == 3);
  hostrt::Stream *def = hostrt::resolve_stream(nullptr, "HcclBroadcast", &err);
  CHECK(def != nullptr && hostrt::stream_device(def) == 3);
  CHECK(hostrt::resolve_stream(reinterpret_cast<aclrtStream>(0x99), "HcclReduce", &err) == nullptr);
  CHECK(err == ACL_ERROR_RT_INVALID_HANDLE && msg_has("HcclReduce"));

  aclrtStream h = nullptr;
  OK(aclrtCreateStream(&h));
  hostrt::Stream *s = hostrt::resolve_stream(h, "test", &err);
  CHECK(s != nullptr && s != def);

  // The first failure is kept with its message; later tasks still run.
  std::atomic<int> ran{0};
  OK(hostrt::enqueue(s, [&] { ++ran; return ACL_SUCCESS; }));
  OK(hostrt::enqueue(s, [&] {
    ++ran;
    hostrt::set_error("HcclAllReduce: peer %d went away", 2);
    return ACL_ERROR_RT_INTERNAL_ERROR;
  }));
  OK(hostrt::enqueue(s, [&] {
    ++ran;
    hostrt::set_error("second failure");
    return ACL_ERROR_INVALID_PARAM;
  }));
  OK(hostrt::enqueue(s, [&] { ++ran; return ACL_SUCCESS; }));
  hostrt::set_error("stale message of the main thread");
  CHECK(aclrtSynchronizeStream(h) == ACL_ERROR_RT_INTERNAL_ERROR);
  CHECK(std::strcmp(aclGetRecentErrMsg(), "HcclAllReduce: peer 2 went away") == 0);
  CHECK(ran == 4);
  OK(aclrtSynchronizeStream(h));  // cleared

  // next_task_tag() names the task queued after the running one; an event
  // record is a task like any other.
  static const int tag_a = 0, tag_b = 0;
  aclrtEvent rec = nullptr;
  OK(aclrtCreateEvent(&rec));
  std::atomic<bool> go{false};
  std::atomic<const void *> next_a{&ran}, next_b{&ran}, next_c{&ran};
  auto first = [&](std::atomic<const void *> *out) {
    return [&go, out] {
      while (!go.load()) std::this_thread::yield();  // until the rest is queued
      *out = hostrt::next_task_tag();
      return ACL_SUCCESS;
    };
  };
  OK(hostrt::enqueue(s, first(&next_a), &tag_a));
  OK(hostrt::enqueue(s, [&] { next_b = hostrt::next_task_tag(); return ACL_SUCCESS; }, &tag_b));
  go = true;
  OK(aclrtSynchronizeStream(h));
  CHECK(next_a.load() == &tag_b && next_b.load() == nullptr);
  go = false;
  OK(hostrt::enqueue(s, first(&next_c), &tag_a));
  OK(aclrtRecordEvent(rec, h));
  OK(hostrt::enqueue(s, [] { return ACL_SUCCESS; }, &tag_b));
  go = true;
  OK(aclrtSynchronizeStream(h));
  CHECK(next_c.load() == nullptr);
  OK(aclrtDestroyEvent(rec));

  // The binding's keep-alive marks: the work before a mark is done once the
  // stream's finished count reaches it; a destroyed stream counts as done.
  uint64_t sid = 0, mark = 0, fin = 0, sid2 = 0, mark2 = 0;
  go = false;
  OK(hostrt::enqueue(s, [&] { while (!go.load()) std::this_thread::yield(); return ACL_SUCCESS; }));
  OK(hostrtStreamMark(h, &sid, &mark, &fin));
  CHECK(sid == hostrt::stream_id(s) && fin < mark);
  OK(hostrtStreamFinished(sid, &fin));
  CHECK(fin < mark);
  go = true;
  OK(aclrtSynchronizeStream(h));
  OK(hostrtStreamFinished(sid, &fin));
  CHECK(fin >= mark);
  OK(hostrtStreamMark(h, &sid2, &mark2, nullptr));
  CHECK(sid2 == sid && mark2 == mark);  // nothing pushed since
  OK(hostrtStreamMark(nullptr, &sid2, &mark2, nullptr));  // the default stream
  CHECK(sid2 != sid);
  CHECK(hostrtStreamMark(h, nullptr, &mark, nullptr) == ACL_ERROR_INVALID_PARAM &&
        msg_has("streamId"));
  CHECK(hostrtStreamMark(reinterpret_cast<aclrtStream>(0x77), &sid, &mark, &fin) ==
            ACL_ERROR_RT_INVALID_HANDLE && msg_has("hostrtStreamMark"));
  CHECK(hostrtStreamFinished(sid, nullptr) == ACL_ERROR_INVALID_PARAM);

  // A failing task without a message, and one that throws, still report.
  OK(hostrt::enqueue(s, [] { return ACL_ERROR_RT_FAILURE; }));
  CHECK(aclrtSynchronizeStream(h) == ACL_ERROR_RT_FAILURE && msg_has("500003"));
  OK(hostrt::enqueue(s, []() -> aclError { throw std::runtime_error("kaboom"); }));
  CHECK(aclrtSynchronizeStream(h) == ACL_ERROR_RT_INTERNAL_ERROR && msg_has("kaboom"));

  // A host function fails its task through hostrtFailCurrentTask; the first
  // call counts, and the stream reports it like any task error.
  CHECK(hostrtFailCurrentTask(ACL_ERROR_RT_FAILURE, "x") == ACL_ERROR_INVALID_PARAM &&
        msg_has("not called from a stream task"));
  OK(aclrtLaunchHostFunc(h, [](void *) {
    hostrtFailCurrentTask(ACL_ERROR_RT_FAILURE, "host function #1 raised ValueError: bad");
    hostrtFailCurrentTask(ACL_ERROR_INVALID_PARAM, "second");
    hostrt::set_error("unrelated message left behind");
  }, nullptr));
  CHECK(aclrtSynchronizeStream(h) == ACL_ERROR_RT_FAILURE && msg_has("#1 raised ValueError: bad"));
  OK(aclrtLaunchHostFunc(h, [](void *) {
    CHECK(hostrtFailCurrentTask(ACL_SUCCESS, "no") == ACL_ERROR_INVALID_PARAM);
  }, nullptr));
  OK(aclrtSynchronizeStream(h));

  // Stop on failure: normal tasks after the error are skipped, event records
  // still complete so other streams waiting on them go on.
  OK(aclrtSetStreamFailureMode(h, 1));
  aclrtEvent ev = nullptr;
  OK(aclrtCreateEvent(&ev));
  ran = 0;
  OK(hostrt::enqueue(s, [] { return ACL_ERROR_RT_FAILURE; }));
  OK(hostrt::enqueue(s, [&] { ++ran; return ACL_SUCCESS; }));
  OK(aclrtLaunchHostFunc(h, [](void *arg) { ++*static_cast<std::atomic<int> *>(arg); }, &ran));
  OK(aclrtRecordEvent(ev, h));
  OK(aclrtStreamWaitEvent(nullptr, ev));
  OK(aclrtSynchronizeStream(nullptr));
  OK(aclrtSynchronizeEvent(ev));
  CHECK(aclrtSynchronizeStream(h) == ACL_ERROR_RT_FAILURE);
  CHECK(ran == 0);
  OK(hostrt::enqueue(s, [&] { ++ran; return ACL_SUCCESS; }));  // error cleared: runs again
  OK(aclrtSynchronizeStream(h));
  CHECK(ran == 1);
  OK(aclrtSetStreamFailureMode(h, 0));
  OK(aclrtDestroyEvent(ev));

  // aclrtSynchronizeDevice reports task errors too.
  OK(hostrt::enqueue(def, [] {
    hostrt::set_error("device-level failure");
    return ACL_ERROR_RT_FAILURE;
  }));
  CHECK(aclrtSynchronizeDevice() == ACL_ERROR_RT_FAILURE && msg_has("device-level failure"));

  // Several threads enqueue concurrently; each thread's tasks stay in order.
  std::vector<std::vector<int>> seen(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        if (hostrt::enqueue(s, [&seen, t, i] { seen[t].push_back(i); return ACL_SUCCESS; }) != 0) {
          std::abort();
        }
      }
    });
  }
  for (auto &th : threads) th.join();
  OK(aclrtSynchronizeStream(h));
  for (int t = 0; t < 4; ++t) {
    CHECK(seen[t].size() == 500);
    for (int i = 0; i < 500; ++i) CHECK(seen[t][i] == i);
  }

  // Arena: a peer's view through /proc/<pid>/fd/<fd> shows the same bytes.
  void *p = nullptr;
  OK(aclrtMalloc(&p, 1 << 20, ACL_MEM_MALLOC_HUGE_ONLY));
  hostrt::MemRegion info{};
  uint64_t avail = 0;
  CHECK(hostrt::locate_memory(p, 1 << 20, &info, &avail) == hostrt::MemKind::kDevice);
  CHECK(info.fd >= 0 && info.file_size > 0 && avail == (1u << 20));
  const uint64_t off = info.offset;
  hostrt::MemRegion inner{};
  CHECK(hostrt::locate_memory(static_cast<char *>(p) + 100, 200, &inner, &avail) ==
        hostrt::MemKind::kDevice);
  CHECK(inner.offset == off + 100 && avail == (1u << 20) - 100);
  // Past the size asked for (even inside the padding): out of bounds.
  CHECK(hostrt::locate_memory(p, (1 << 20) + 1, nullptr, nullptr) == hostrt::MemKind::kOutOfBounds);
  CHECK(hostrt::locate_memory(p, (1 << 20) + 4096, nullptr, nullptr) ==
        hostrt::MemKind::kOutOfBounds);
  int local = 0;
  CHECK(hostrt::locate_memory(&local, sizeof local, nullptr, nullptr) == hostrt::MemKind::kHost);
  CHECK(hostrt::locate_memory(p, 1, nullptr, nullptr) == hostrt::MemKind::kDevice);
  std::memset(p, 0x3c, 1 << 20);
  std::string path = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(info.fd);
  int fd = open(path.c_str(), O_RDWR);
  CHECK(fd >= 0);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  uint64_t map_off = off & ~(page - 1);
  size_t map_len = (off - map_off) + (1 << 20);
  auto *peer = static_cast<unsigned char *>(
      mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(map_off)));
  CHECK(peer != MAP_FAILED);
  CHECK(peer[off - map_off] == 0x3c && peer[off - map_off + (1 << 20) - 1] == 0x3c);
  peer[off - map_off + 5] = 0x11;  // a peer's write is seen locally
  CHECK(static_cast<unsigned char *>(p)[5] == 0x11);
  munmap(peer, map_len);
  close(fd);
  OK(aclrtFree(p));
  CHECK(hostrt::locate_memory(p, 1, nullptr, nullptr) == hostrt::MemKind::kHost);
  CHECK(!hostrt::pin_memory(local_ptr(), 4));  // host memory: no pin

  check_mapped_memory(info.file_id);

  // Enqueue on a destroyed stream's pointer is not possible through handles.
  OK(aclrtDestroyStream(h));
  CHECK(hostrt::resolve_stream(h, "HcclSend", &err) == nullptr && msg_has("HcclSend"));
  CHECK(!hostrt::acquire_stream(h, "HcclRecv", &err) && msg_has("HcclRecv"));
  CHECK(err == ACL_ERROR_RT_INVALID_HANDLE);
  OK(hostrtStreamFinished(sid, &fin));
  CHECK(fin == UINT64_MAX);  // destroyed, so drained

  // A stream acquired before another thread destroys it stays valid memory:
  // enqueue then fails cleanly instead of touching a freed Stream.
  aclrtStream h2 = nullptr;
  OK(aclrtCreateStream(&h2));
  std::shared_ptr<hostrt::Stream> held = hostrt::acquire_stream(h2, "HcclAllReduce", &err);
  CHECK(held != nullptr && hostrt::stream_device(held.get()) == 3);
  OK(aclrtDestroyStream(h2));
  CHECK(hostrt::enqueue(held.get(), [] { return ACL_SUCCESS; }) != ACL_SUCCESS);
  held.reset();

  OK(aclrtResetDevice(3));
  OK(aclFinalize());
  std::puts("hostrt ok");
  return 0;
}
