// Levelled logging, CANN's convention (header-only, one state per library):
//   ASCEND_GLOBAL_LOG_LEVEL      0 debug, 1 info, 2 warning, 3 error (default 3)
//   ASCEND_SLOG_PRINT_TO_STDOUT  1: print to stdout (default: stderr)
//   ASCEND_PROCESS_LOG_PATH      a directory: append to <dir>/pyhccl-<pid>.log instead
//   PYHCCL_LOG_SUBSYS            which subsystems' debug and info lines show, as NCCL's
//                                NCCL_DEBUG_SUBSYS: INIT,NET or ^COLL (all but); default ALL.
//                                Warnings and errors always show.
// Every line names its subsystem: PYHCCL_LOG(common::kInfo, common::kNet, "...").
// A disabled level costs one load and a compare.
#pragma once

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

namespace common {

enum LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Subsystems (bits, for PYHCCL_LOG_SUBSYS).
enum Subsys : unsigned {
  kInit = 1,        // communicator set-up, configuration, callbacks
  kColl = 2,        // collectives as they run: a line each, failures with the flight record
  kNet = 4,         // sockets and the TCP transport
  kBootstrap = 8,   // the bootstrap and the rendezvous without MPI
  kTune = 16,       // algorithm choice (PYHCCL_ALGO, HCCL_ALGO)
  kEnv = 32,        // environment variables read
  kRuntime = 64,    // the ACL runtime: memory arena, tracing
};
constexpr unsigned kAllSubsys = 127;
constexpr const char *kSubsysNames[] = {"INIT", "COLL", "NET", "BOOTSTRAP", "TUNE", "ENV", "RUNTIME"};

inline const char *subsys_name(Subsys s) {
  for (int i = 0; i < 7; ++i)
    if (s == (1u << i)) return kSubsysNames[i];
  return "?";
}

// The module CANN's log lines name: ACL for the runtime, PYHCCL for what both
// libraries share, HCCL otherwise.
inline const char *subsys_module(Subsys s) {
  return s == kRuntime ? "ACL" : s == kEnv ? "PYHCCL" : "HCCL";
}

// PYHCCL_LOG_SUBSYS parsed: "INIT,NET", "^COLL", "ALL"; unknown names are ignored.
inline unsigned parse_subsys(const char *s) {
  if (s == nullptr || *s == '\0') return kAllSubsys;
  const bool invert = *s == '^';
  unsigned bits = 0;
  std::string v(s + (invert ? 1 : 0));
  size_t i = 0;
  while (i <= v.size()) {
    size_t j = v.find(',', i);
    if (j == std::string::npos) j = v.size();
    std::string name = v.substr(i, j - i);
    if (name == "ALL") bits = kAllSubsys;
    for (int k = 0; k < 7; ++k)
      if (name == kSubsysNames[k]) bits |= 1u << k;
    i = j + 1;
  }
  return invert ? kAllSubsys & ~bits : bits;
}

inline unsigned log_subsys() {
  static const unsigned bits = parse_subsys(std::getenv("PYHCCL_LOG_SUBSYS"));
  return bits;
}

inline int log_level() {
  static const int level = [] {
    const char *s = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
    if (s == nullptr || s[0] < '0' || s[0] > '4' || s[1] != '\0') return static_cast<int>(kError);
    return s[0] - '0';  // 4 (CANN's "null") turns everything off
  }();
  return level;
}

inline std::FILE *log_stream() {
  static std::FILE *const f = [] {
    const char *dir = std::getenv("ASCEND_PROCESS_LOG_PATH");
    if (dir != nullptr && *dir != '\0') {
      mkdir(dir, 0755);
      std::string path = std::string(dir) + "/pyhccl-" + std::to_string(getpid()) + ".log";
      if (std::FILE *file = std::fopen(path.c_str(), "a")) return file;
    }
    const char *out = std::getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    return out != nullptr && out[0] == '1' ? stdout : stderr;
  }();
  return f;
}

__attribute__((format(printf, 3, 4))) inline void log_write(int level, Subsys subsys,
                                                              const char *fmt, ...) {
  static const char *const kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
  static std::mutex mu;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm t;
  localtime_r(&tv.tv_sec, &t);
  std::lock_guard<std::mutex> lock(mu);
  std::FILE *f = log_stream();
  std::fprintf(f, "[%s] %s(%d) %04d-%02d-%02d-%02d:%02d:%02d.%06ld pyhccl %s: %s\n",
               kNames[level < 0 ? 0 : level > 3 ? 3 : level], subsys_module(subsys),
               static_cast<int>(getpid()), t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
               t.tm_min, t.tm_sec, static_cast<long>(tv.tv_usec), subsys_name(subsys), msg);
  std::fflush(f);
}

}  // namespace common

// A warning the user must see at the default level (an ignored setting, a refused
// connection): shown unless logging is off (ASCEND_GLOBAL_LOG_LEVEL=4).
#define PYHCCL_NOTICE(subsys, ...)                                                       \
  do {                                                                                   \
    if (::common::log_level() < 4) ::common::log_write(::common::kWarning, (subsys), __VA_ARGS__); \
  } while (0)
// Whether a line of `level` from `subsys` would show (to skip preparing it).
#define PYHCCL_LOG_ON(level, subsys)                                                     \
  ((level) >= ::common::log_level() &&                                                   \
   ((level) >= ::common::kWarning || (::common::log_subsys() & (subsys)) != 0))
#define PYHCCL_LOG(level, subsys, ...)                                                   \
  do {                                                                                   \
    if (PYHCCL_LOG_ON(level, subsys)) ::common::log_write((level), (subsys), __VA_ARGS__); \
  } while (0)
