// Internal interface of the host runtime (libascendcl.so) used by libhccl.so.
// Not installed, not part of the CANN ABI: CANN's libhccl talks to its runtime
// through private channels too. Everything here is exported from
// libascendcl.so under the C++ namespace hostrt.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "acl/acl.h"

#if defined(HOSTRT_BUILDING_RUNTIME)
#define HOSTRT_API __attribute__((visibility("default")))
#else
#define HOSTRT_API
#endif

namespace hostrt {

// ---- errors -------------------------------------------------------------
// Sets this thread's "recent error message" (returned by aclGetRecentErrMsg).
// Every failing API call sets one that names the call and the argument, e.g.
// "aclrtMemcpy: count (64) exceeds destMax (32)".
HOSTRT_API void set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// The message as last set on this thread ("" if none).
HOSTRT_API const char *last_error();

// ---- devices and streams -----------------------------------------------
struct Stream;

// A unit of work run on a stream's worker thread, in order. It returns
// ACL_SUCCESS or an aclError; the first failure is kept by the stream (with the
// message the task set through set_error on the worker thread) and returned by
// the next aclrtSynchronizeStream, which then clears it. Tasks after a failed one
// still run (ACL's default "continue on failure" mode).
using Task = std::function<aclError()>;

// Resolves a user stream handle: NULL = the default stream of the calling
// thread's current context. Returns nullptr (and sets the error message, naming
// `api`) if the handle is not a live stream or no device is set; *err receives
// the aclError to report.
// The pointer stays valid only until the stream is destroyed: use it at once.
HOSTRT_API Stream *resolve_stream(aclrtStream stream, const char *api, aclError *err);
// As resolve_stream, but the caller shares ownership: the Stream object outlives
// an aclrtDestroyStream on another thread (enqueue then fails cleanly).
HOSTRT_API std::shared_ptr<Stream> acquire_stream(aclrtStream stream, const char *api,
                                                  aclError *err);

// Appends a task to the stream; returns at once. `tag` (may be null) names
// what the task belongs to, for next_task_tag().
HOSTRT_API aclError enqueue(Stream *stream, Task task, const void *tag = nullptr);
// From a running task: the tag of the task queued right after it on its
// stream, or null when none is queued (yet) or it has none. HCCL defers a
// check to the communicator's next operation only when that one follows at
// once (comm/exec.cc).
HOSTRT_API const void *next_task_tag();
// A task the caller may run itself (see Stream::claim_idle): claim_stream is
// true when the stream is idle, and the caller then ends the claim with
// run_claimed (now, on this thread) or hand_over (queued first, as enqueue).
HOSTRT_API bool claim_stream(Stream *stream);
HOSTRT_API void run_claimed(Stream *stream, Task task);
HOSTRT_API void hand_over(Stream *stream, Task task);

// The device the stream belongs to.
HOSTRT_API int32_t stream_device(const Stream *stream);

// Waits until every task pushed before the call has finished (true), or
// deadline_ns passes (common::now_ns units; INT64_MAX: no limit). The stream's
// error stays for its next synchronize.
HOSTRT_API bool stream_wait_idle(Stream *stream, int64_t deadline_ns);

// A stream's id (the one current_stream_id returns on its worker).
HOSTRT_API uint64_t stream_id(const Stream *stream);

// Interrupts (SIGINT) noted so far by hostrtNoteInterrupt: long waits that
// run on behalf of a caller (an HCCL operation run by a synchronize) give up
// when the count changes.
HOSTRT_API uint64_t interrupts();

// The id of the stream whose worker runs the calling thread (0 if none), for log lines.
HOSTRT_API uint64_t current_stream_id();

// Whether the program cannot go on while the calling thread waits: it is not
// a stream's worker (a caller running a task itself, or no task at all), or
// a thread synchronizes with the stream whose task runs here. HCCL's check
// of communicators used in opposite orders needs it (transport/order.cc).
HOSTRT_API bool task_holds_caller();

// The calling thread's current device, or -1 when none is set.
HOSTRT_API int32_t current_device();

// ---- device memory -----------------------------------------------------
// Device memory (aclrtMalloc, and physical memory mapped through the virtual
// memory API) is host memory backed by memfds mapped MAP_SHARED, so a peer on
// the same host can map it through /proc/<pid>/fd/<fd> (file_size bytes from
// offset 0) and read or write it directly.
struct MemRegion {
  int fd;              // backing memfd in this process
  uint64_t file_size;  // bytes a peer maps from that file (from offset 0)
  uint64_t offset;     // where the located range starts in the file
  // Names the backing file: unique in this process and never reused, even
  // after the file is closed and its fd number handed out again (a physical
  // handle freed, another allocated). Key caches of peers' mappings on it
  // (with the peer), not on fd and file_size.
  uint64_t file_id;
};
enum class MemKind {
  kHost,         // not device memory: a numpy array, a stack buffer, ...
  kDevice,       // inside one live allocation or one mapping; *region says where
  kOutOfBounds,  // device address space the range cannot use: it runs past its
                 // allocation or mapping (into padding, unmapped space or the
                 // next mapping), or starts in a reserved range
                 // (aclrtReserveMemAddress) where nothing is mapped. Never
                 // dereference it: unmapped reserved space faults.
};
// Classifies [p, p + bytes). *avail (may be null) receives the bytes from p to
// the end of its allocation or mapping when p is device memory (the size
// asked for, not the padded one; 0 in unmapped reserved space).
HOSTRT_API MemKind locate_memory(const void *p, size_t bytes, MemRegion *region, uint64_t *avail);

// Checks a range that a call is about to read or write (the ACL memory calls
// and the collectives alike): host memory passes (it cannot be checked);
// device memory must lie inside one live allocation or mapping, within the
// size asked for: freed aclrtMalloc memory, a run past the end and unmapped
// reserved space are refused with a message naming `api` and `what`. On
// success *pin (may be null) keeps a mapped range mapped until it is released.
HOSTRT_API aclError check_device_range(const void *p, size_t bytes, const char *api,
                                       const char *what, std::shared_ptr<const void> *pin);

// Keeps the mapping (aclrtMapMem) under [p, p + bytes) mapped while the
// returned token lives: aclrtUnmapMem then fails with "in use" instead of
// pulling the memory from under a task that will touch it. Capture the token
// in the task. Empty for memory that is not mapped through aclrtMapMem
// (aclrtMalloc memory, host memory) and for ranges locate_memory does not
// call kDevice; taking it costs one lock.
HOSTRT_API std::shared_ptr<const void> pin_memory(const void *p, size_t bytes);

// What the virtual-memory API knows about address p (HCCL's memory ranges
// and activated memory check their arguments with it).
struct VmmInfo {
  bool reserved = false;    // p lies in an aclrtReserveMemAddress range ...
  void *res_base = nullptr; // ... starting here,
  uint64_t res_size = 0;    // ... of this size (as asked for)
  bool mapped = false;      // p lies in an aclrtMapMem mapping ...
  void *map_base = nullptr;
  uint64_t map_size = 0;
  aclrtDrvMemHandle handle = nullptr;  // ... of this physical memory
};
// False (and *out untouched) when p is not in reserved address space.
HOSTRT_API bool vmm_describe(const void *p, VmmInfo *out);

// ---- tracing (runtime/trace.cc) ------------------------------------------
// What aclprofStart and PYHCCL_TRACE record: one Chrome-trace "complete"
// event per stream task or collective that ran. Off, the only cost is
// trace_on() (one relaxed load); on, trace_record takes a lock.
struct TraceEvent {
  const char *name = "";  // a static string: "aclrtMemcpyAsync", "HcclAllReduce"
  int32_t device = -1;    // only devices being profiled are kept
  uint64_t stream = 0;    // stream id: the trace's tid
  int64_t start_ns = 0, end_ns = 0;  // common::now_ns
  uint64_t bytes = 0;
  bool ok = true;
  // Collectives (libhccl) only: hccl true, the rest copied as given.
  bool hccl = false;
  uint64_t count = 0, seq = 0;
  const char *dtype = "", *algo = "", *comm = "";
  uint32_t rank = 0, nranks = 0;
};
HOSTRT_API extern std::atomic<bool> g_trace_on;
inline bool trace_on() { return g_trace_on.load(std::memory_order_relaxed); }
HOSTRT_API void trace_record(const TraceEvent &ev);

}  // namespace hostrt

// Fails the stream task running on the calling thread (a host function of
// aclrtLaunchHostFunc): when the function returns, its task ends with `code`
// and `message` as if it had returned them, so the stream reports them at
// its next synchronize (and skips what follows in stop-on-failure mode).
// Returns ACL_ERROR_INVALID_PARAM outside a stream task or for ACL_SUCCESS.
// C linkage for bindings written in C (pyhccl's extension); not part of CANN.
extern "C" HOSTRT_API aclError hostrtFailCurrentTask(aclError code, const char *message);

// The Python binding's keep-alive, with no stream task per call (an event
// record per call would cost a queue item, a worker step and a query each):
// hostrtStreamMark gives the stream's id, the number of tasks pushed onto it
// so far (the mark) and, in the same snapshot, the number finished (NULL: not
// wanted); the work enqueued before a mark is done once the finished count
// (also hostrtStreamFinished, by id) reaches it. A stream that is no longer
// live reports UINT64_MAX finished (destroying a stream drains it). Errors
// name the function. C linkage, as above; not part of CANN.
extern "C" HOSTRT_API aclError hostrtStreamMark(aclrtStream stream, uint64_t *streamId,
                                                uint64_t *mark, uint64_t *finished);
extern "C" HOSTRT_API aclError hostrtStreamFinished(uint64_t streamId, uint64_t *finished);
