// The profiling API (aclprof*; CANN ships it in libmsprofiler.so, an alias of
// libascendcl.so here). The session state machine as CANN documents it:
// aclprofInit(dir) -> aclprofCreateConfig(devices) -> aclprofStart(config)
// ... aclprofStop(config) -> aclprofDestroyConfig -> aclprofFinalize. What
// is recorded (stream tasks, collectives) and the file are trace.cc's.
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl_prof.h"
#include "runtime/internal.h"
#include "runtime/trace.h"

// The opaque type of acl_prof.h.
struct aclprofConfig {
  std::vector<uint32_t> devices;
  uint64_t data_types = 0;  // accepted, not used: the trace has one kind of data
};

using namespace hostrt;

namespace {

struct ProfState {
  std::mutex mu;
  bool inited = false;
  std::string dir;
  std::set<const aclprofConfig *> configs;  // live configs: others are rejected, not read
  std::set<uint32_t> started;               // devices between Start and Stop
};
ProfState &prof() {
  static ProfState *s = new ProfState;
  return *s;
}

aclError check_config(const ProfState &s, const aclprofConfig *c, const char *api) {
  if (c == nullptr) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: profilerConfig is NULL", api);
  if (s.configs.count(c) == 0) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: profilerConfig (%p) is not a config from aclprofCreateConfig", api,
                static_cast<const void *>(c));
  }
  return ACL_SUCCESS;
}

aclError not_inited(const char *api) {
  return ACL_FAIL(ACL_ERROR_PROF_NOT_RUN, "%s: profiling is not initialized (call aclprofInit first)",
              api);
}

}  // namespace

extern "C" {

ACL_FUNC_VISIBILITY aclError aclprofInit(const char *profilerResultPath, size_t length) {
  const char *api = "aclprofInit";
  if (profilerResultPath == nullptr) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: profilerResultPath is NULL", api);
  }
  // length is the path's strlen (a count that includes the NUL is taken too).
  const size_t n = strnlen(profilerResultPath, length + 1);
  if (length == 0 || n == 0 || (n != length && n + 1 != length)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM,
                "%s: length (%zu) does not match profilerResultPath \"%.*s\" (%zu bytes)", api,
                length, static_cast<int>(n), profilerResultPath, n);
  }
  if (n >= 4096) return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: length (%zu) exceeds PATH_MAX", api, n);
  ProfState &s = prof();
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.inited) {
    return ACL_FAIL(ACL_ERROR_REPEAT_INITIALIZE, "%s: profiling is already initialized (to \"%s\")",
                api, s.dir.c_str());
  }
  std::string dir(profilerResultPath, n);
  std::string err;
  if (!trace_make_dir(dir, &err)) {
    return ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: profilerResultPath: %s", api, err.c_str());
  }
  s.inited = true;
  s.dir = dir;
  trace_prof_dir(dir);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclprofFinalize(void) {
  const char *api = "aclprofFinalize";
  ProfState &s = prof();
  std::lock_guard<std::mutex> lk(s.mu);
  if (!s.inited) return not_inited(api);
  // Devices still started are stopped here (CANN wants aclprofStop first;
  // finishing the trace is friendlier than losing it).
  if (!s.started.empty()) {
    trace_devices(std::vector<uint32_t>(s.started.begin(), s.started.end()), -1);
    s.started.clear();
  }
  std::string err;
  const bool ok = trace_write(s.dir, &err);
  trace_prof_dir("");
  s.inited = false;
  s.dir.clear();
  if (!ok) return ACL_FAIL(ACL_ERROR_WRITE_FILE, "%s: %s", api, err.c_str());
  return ACL_SUCCESS;
}

// Returns NULL (CANN's failure value) with the message set.
ACL_FUNC_VISIBILITY aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                       aclprofAicoreMetrics aicoreMetrics,
                                                       const aclprofAicoreEvents *aicoreEvents,
                                                       uint64_t dataTypeConfig) {
  const char *api = "aclprofCreateConfig";
  if (deviceIdList == nullptr) {
    ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: deviceIdList is NULL", api);
    return nullptr;
  }
  const int32_t count = device_count();
  if (deviceNums == 0 || deviceNums > static_cast<uint32_t>(count)) {
    ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: deviceNums (%u) must be 1..%d", api, deviceNums, count);
    return nullptr;
  }
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < deviceNums; ++i) {
    const uint32_t d = deviceIdList[i];
    if (d >= static_cast<uint32_t>(count)) {
      ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: deviceIdList[%u] (%u) is not a device (0..%d)", api, i, d,
           count - 1);
      return nullptr;
    }
    if (!seen.insert(d).second) {
      ACL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: deviceIdList[%u] (%u) is listed twice", api, i, d);
      return nullptr;
    }
  }
  // aicoreMetrics and aicoreEvents select AI Core counters, which a CPU does
  // not have: accepted and ignored (aicoreEvents is reserved, NULL in CANN).
  auto *c = new aclprofConfig;
  c->devices.assign(seen.begin(), seen.end());
  c->data_types = dataTypeConfig;
  ProfState &s = prof();
  std::lock_guard<std::mutex> lk(s.mu);
  s.configs.insert(c);
  return c;
}

ACL_FUNC_VISIBILITY aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig) {
  ProfState &s = prof();
  std::lock_guard<std::mutex> lk(s.mu);
  aclError rc = check_config(s, profilerConfig, "aclprofDestroyConfig");
  if (rc != ACL_SUCCESS) return rc;
  s.configs.erase(profilerConfig);
  delete profilerConfig;
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclprofStart(const aclprofConfig *profilerConfig) {
  const char *api = "aclprofStart";
  ProfState &s = prof();
  std::lock_guard<std::mutex> lk(s.mu);
  aclError rc = check_config(s, profilerConfig, api);
  if (rc != ACL_SUCCESS) return rc;
  if (!s.inited) return not_inited(api);
  for (uint32_t d : profilerConfig->devices) {
    if (s.started.count(d) != 0) {
      return ACL_FAIL(ACL_ERROR_PROF_ALREADY_RUN, "%s: device %u is already being profiled", api, d);
    }
  }
  s.started.insert(profilerConfig->devices.begin(), profilerConfig->devices.end());
  trace_devices(profilerConfig->devices, +1);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclprofStop(const aclprofConfig *profilerConfig) {
  const char *api = "aclprofStop";
  ProfState &s = prof();
  std::lock_guard<std::mutex> lk(s.mu);
  aclError rc = check_config(s, profilerConfig, api);
  if (rc != ACL_SUCCESS) return rc;
  if (!s.inited) return not_inited(api);
  for (uint32_t d : profilerConfig->devices) {
    if (s.started.count(d) == 0) {
      return ACL_FAIL(ACL_ERROR_PROF_NOT_RUN, "%s: device %u is not being profiled (no aclprofStart)",
                  api, d);
    }
  }
  for (uint32_t d : profilerConfig->devices) s.started.erase(d);
  trace_devices(profilerConfig->devices, -1);
  std::string err;
  if (!trace_write(s.dir, &err)) return ACL_FAIL(ACL_ERROR_WRITE_FILE, "%s: %s", api, err.c_str());
  return ACL_SUCCESS;
}

}  // extern "C"
