// Levelled logging, CANN's convention (header-only, one state per library):
//   ASCEND_GLOBAL_LOG_LEVEL      0 debug, 1 info, 2 warning, 3 error (default 3)
//   ASCEND_SLOG_PRINT_TO_STDOUT  1: print to stdout (default: stderr)
//   ASCEND_PROCESS_LOG_PATH      a directory: append to <dir>/pyhccl-<pid>.log instead
// A disabled level costs one load and a compare: use PYHCCL_LOG(level, ...).
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

__attribute__((format(printf, 3, 4))) inline void log_write(int level, const char *module,
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
  std::fprintf(f, "[%s] %s(%d) %04d-%02d-%02d-%02d:%02d:%02d.%06ld pyhccl: %s\n",
               kNames[level < 0 ? 0 : level > 3 ? 3 : level], module, static_cast<int>(getpid()),
               t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
               static_cast<long>(tv.tv_usec), msg);
  std::fflush(f);
}

}  // namespace common

// A warning the user must see at the default level (an ignored setting, a refused
// connection): shown unless logging is off (ASCEND_GLOBAL_LOG_LEVEL=4).
#define PYHCCL_NOTICE(module, ...)                                                       \
  do {                                                                                   \
    if (::common::log_level() < 4) ::common::log_write(::common::kWarning, (module), __VA_ARGS__); \
  } while (0)
#define PYHCCL_LOG_ON(level) ((level) >= ::common::log_level())
#define PYHCCL_LOG(level, module, ...)                                       \
  do {                                                                       \
    if ((level) >= ::common::log_level()) ::common::log_write((level), (module), __VA_ARGS__); \
  } while (0)
