#include "hccl/algo/selector.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "hccl/algo/ctx.h"

namespace hccl {
namespace {

constexpr const char *kColls[] = {"allreduce", "reduce", "broadcast", "allgather", "reducescatter"};
constexpr const char *kPaths[] = {"latency", "chunked", "staged", "single"};

bool is_one_of(const char *s, size_t len, const char *const *names, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (std::strlen(names[i]) == len && std::strncmp(s, names[i], len) == 0) return true;
  return false;
}

// Whether "coll:path" (not NUL-terminated, `len` bytes) is an entry we honour.
bool valid_entry(const char *s, size_t len) {
  const char *colon = static_cast<const char *>(std::memchr(s, ':', len));
  if (colon == nullptr) return false;
  size_t cl = static_cast<size_t>(colon - s), pl = len - cl - 1;
  if (!is_one_of(s, cl, kColls, sizeof(kColls) / sizeof(kColls[0]))) return false;
  if (!is_one_of(colon + 1, pl, kPaths, sizeof(kPaths) / sizeof(kPaths[0]))) return false;
  bool has_latency = (cl == 9 && std::strncmp(s, "allreduce", 9) == 0) ||
                     (cl == 6 && std::strncmp(s, "reduce", 6) == 0);
  return has_latency || !(pl == 7 && std::strncmp(colon + 1, "latency", 7) == 0);
}

// One stderr line per process for a PYHCCL_ALGO value with entries we cannot
// honour (unknown collective or path, or latency where there is none).
void warn_bad_spec_once(const char *spec) {
  static std::once_flag once;
  std::call_once(once, [spec] {
    std::string bad;
    const char *s = spec;
    while (*s != '\0') {
      while (*s == ',' || *s == ';' || *s == ' ') ++s;
      const char *end = s;
      while (*end != '\0' && *end != ',' && *end != ';' && *end != ' ') ++end;
      if (end > s && !valid_entry(s, static_cast<size_t>(end - s))) {
        if (!bad.empty()) bad += ", ";
        bad.append(s, end);
      }
      s = end;
    }
    if (bad.empty()) return;
    std::fprintf(stderr,
                 "pyhccl: PYHCCL_ALGO=%s: cannot honour %s (expected coll:path, coll one of "
                 "allreduce reduce broadcast allgather reducescatter, path one of latency "
                 "(allreduce/reduce only) chunked staged single); a collective given such a path "
                 "uses the staged path, an unknown collective is ignored\n",
                 spec, bad.c_str());
  });
}

}  // namespace

Path select_path(const Ctx &x, const char *coll, size_t bytes, bool latency_ok) {
  if (x.comm.tuning.force[0] != '\0') {
    warn_bad_spec_once(x.comm.tuning.force);
    bool forced_any = false;
    bool latency = x.forced(coll, "latency", &forced_any);  // sets forced_any for any path
    if (forced_any) {
      if (latency && latency_ok) return Path::kLatency;
      if (x.forced(coll, "chunked") || x.forced(coll, "staged")) return Path::kStaged;
      if (x.forced(coll, "single")) return x.comm.single_copy_ok ? Path::kSingle : Path::kStaged;
      return Path::kStaged;  // an unknown path name: the safe default
    }
  }
  if (latency_ok && bytes <= x.comm.tuning.latency_bytes && bytes <= x.slot_bytes)
    return Path::kLatency;
  if (x.comm.single_copy_ok && bytes >= x.comm.tuning.single_copy_min) return Path::kSingle;
  return Path::kStaged;
}

}  // namespace hccl
