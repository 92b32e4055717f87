// Internal interface of the host runtime (libascendcl.so) used by libhccl.so.
// Not installed, not part of the CANN ABI: CANN's libhccl talks to its runtime
// through private channels too. Everything here is exported from
// libascendcl.so under the C++ namespace hostrt.
#pragma once

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

// Appends a task to the stream; returns at once.
HOSTRT_API aclError enqueue(Stream *stream, Task task);

// The device the stream belongs to.
HOSTRT_API int32_t stream_device(const Stream *stream);

// The calling thread's current device, or -1 when none is set.
HOSTRT_API int32_t current_device();

// ---- memory arena ------------------------------------------------------
// aclrtMalloc memory is carved from one per-process memfd arena mapped
// MAP_SHARED, so peers on the same host can map it through
// /proc/<pid>/fd/<fd> and read/write it directly.
struct ArenaInfo {
  int fd;            // memfd of the arena in this process (-1 before first use)
  size_t reserved;   // bytes of the arena's address reservation (= file size)
  const void *base;  // where it is mapped in this process
};
HOSTRT_API ArenaInfo arena_info();

// If [p, p+bytes) lies inside one live aclrtMalloc allocation, sets *offset to
// p's offset from the arena base and returns true.
HOSTRT_API bool arena_contains(const void *p, size_t bytes, uint64_t *offset);

}  // namespace hostrt
