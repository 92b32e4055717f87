// Environment-variable parsing shared by libascendcl and libhccl.
// Header-only; a bad value keeps the default and prints a warning, once per
// process for each variable and value (some are read per communicator).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include "common/log.h"

namespace common {

// Parses a whole decimal (or 0x hex) integer; false on empty/garbage/overflow.
inline bool parse_int64(const char *s, int64_t *out) {
  if (s == nullptr || *s == '\0') return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s, &end, 0);
  if (errno != 0 || end == s) return false;
  while (*end == ' ' || *end == '\t') ++end;
  if (*end != '\0') return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// True the first time this process warns about `name`=`value`.
inline bool first_warning(const char *name, const char *value) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  return warned.insert(std::string(name) + "=" + value).second;
}

// Integer variable `name` clamped to [lo, hi]; `def` when unset or invalid.
inline int64_t env_int(const char *name, int64_t def, int64_t lo, int64_t hi) {
  const char *s = std::getenv(name);
  if (s == nullptr || *s == '\0') return def;
  int64_t v = 0;
  if (!parse_int64(s, &v) || v < lo || v > hi) {
    if (first_warning(name, s))
      PYHCCL_NOTICE(common::kEnv, "ignoring %s=%s (expected an integer in [%lld, %lld]); using %lld",
                   name, s, static_cast<long long>(lo), static_cast<long long>(hi),
                   static_cast<long long>(def));
    return def;
  }
  return v;
}

// Byte count with an optional K/M/G/T suffix (powers of 1024), e.g. "64G"; 0 only when zero_ok.
inline uint64_t env_bytes(const char *name, uint64_t def, bool zero_ok = false) {
  const char *s = std::getenv(name);
  if (s == nullptr || *s == '\0') return def;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 0);
  bool ok = errno == 0 && end != s && s[0] != '-';
  uint64_t mul = 1;
  if (ok && *end != '\0') {
    switch (*end) {
      case 'k': case 'K': mul = 1ull << 10; break;
      case 'm': case 'M': mul = 1ull << 20; break;
      case 'g': case 'G': mul = 1ull << 30; break;
      case 't': case 'T': mul = 1ull << 40; break;
      default: ok = false;
    }
    if (ok) {
      ++end;
      if (*end == 'i' || *end == 'I') ++end;
      if (*end == 'b' || *end == 'B') ++end;
      ok = *end == '\0';
    }
  }
  if (!ok || (v == 0 && !zero_ok) || v > (~0ull) / mul) {
    if (first_warning(name, s))
      PYHCCL_NOTICE(common::kEnv, "ignoring %s=%s (expected a byte count such as 64G); using %llu",
                   name, s, static_cast<unsigned long long>(def));
    return def;
  }
  return v * mul;
}

// String variable, or `def` when unset or empty.
inline const char *env_str(const char *name, const char *def) {
  const char *s = std::getenv(name);
  return (s == nullptr || *s == '\0') ? def : s;
}

}  // namespace common
