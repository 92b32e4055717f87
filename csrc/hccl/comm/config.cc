#include "hccl/comm/config.h"

#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "common/env.h"
#include "hccl/bootstrap/bootstrap.h"
#include "runtime/hostrt.h"
#include "common/log.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

constexpr uint32_t kMaxBufferMb = 1u << 20;  // 1 TiB, the bound of HCCL_BUFFSIZE too

// Offsets of HcclCommConfig fields and the version that added each (docs/ABI.md 3.1).
constexpr size_t kOffBufferSize = 24, kOffDeterministic = 28, kOffCommName = 32;
constexpr size_t kOffOpExpansion = 288, kOffExecTimeOut = 316, kOffAlgo = 320;
constexpr size_t kOffSymWinMax = 2232;
constexpr uint32_t kSinceName = 2, kSinceOpExpansion = 5, kSinceExecTimeOut = 9;
constexpr uint32_t kSinceSymWinMax = 11;
// Versions up to 8 are read only through hcclJobID (later layouts moved).
constexpr size_t kOldLayoutEnd = 312;

class ConfigReader {
 public:
  ConfigReader(const void *base, size_t size, uint32_t version)
      : base_(static_cast<const char *>(base)), size_(size), version_(version) {
    if (version_ <= 8 && size_ > kOldLayoutEnd) size_ = kOldLayoutEnd;
  }
  bool has(size_t off, size_t bytes, uint32_t since) const {
    return version_ >= since && off + bytes <= size_;
  }
  template <typename T>
  bool get(size_t off, uint32_t since, T *out) const {
    if (!has(off, sizeof(T), since)) return false;
    std::memcpy(out, base_ + off, sizeof(T));
    return true;
  }
  // 0 = absent, 1 = read, -1 = not NUL-terminated.
  int get_string(size_t off, size_t cap, uint32_t since, std::string *out) const {
    if (!has(off, cap, since)) return 0;
    const char *s = base_ + off;
    const void *nul = std::memchr(s, '\0', cap);
    if (nul == nullptr) return -1;
    *out = std::string(s, static_cast<const char *>(nul) - s);
    return 1;
  }

 private:
  const char *base_;
  size_t size_;
  uint32_t version_;
};

// HCCL_DETERMINISTIC, read once.
int32_t env_deterministic() {
  static const int32_t value = [] {
    const char *s = common::env_str("HCCL_DETERMINISTIC", "");
    if (*s == '\0' || std::strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0) return 0;
    if (std::strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0) return 1;
    if (std::strcmp(s, "2") == 0) return 2;
    PYHCCL_NOTICE(common::kInit, "ignoring HCCL_DETERMINISTIC=%s (expected 0, 1, 2, true or "
                 "false); using 0", s);
    return 0;
  }();
  return value;
}

constexpr int32_t kNotSet = -1;
std::atomic<int32_t> g_set_deterministic{kNotSet};  // from HcclSetConfig

}  // namespace

int32_t global_deterministic() {
  int32_t v = g_set_deterministic.load();
  return v == kNotSet ? env_deterministic() : v;
}

void set_global_deterministic(int32_t value) { g_set_deterministic.store(value); }

HcclResult read_comm_config(const HcclCommConfig *config, const char *api, CommSettings *out) {
  *out = CommSettings();
  out->buffer_mb = static_cast<uint32_t>(
      common::env_int("HCCL_BUFFSIZE", HCCL_COMM_DEFAULT_BUFFSIZE, 1, kMaxBufferMb));
  out->deterministic = static_cast<uint32_t>(global_deterministic());
  out->exec_timeout_s = exec_timeout_s();
  if (config == nullptr) return HCCL_SUCCESS;

  size_t size;
  uint32_t magic, version;
  std::memcpy(&size, config->reserved + 0, sizeof(size));
  std::memcpy(&magic, config->reserved + 8, sizeof(magic));
  std::memcpy(&version, config->reserved + 12, sizeof(version));
  if (magic != HCCL_COMM_CONFIG_MAGIC_WORD) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: config has magic word 0x%08x, expected 0x%08x (initialise it with "
                                  "HcclCommConfigInit)", api, magic, HCCL_COMM_CONFIG_MAGIC_WORD);
  }
  if (size < HCCL_COMM_CONFIG_INFO_BYTES + 8 || version == 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: config header is invalid (size %zu, version %u)", api, size, version);
  }
  ConfigReader rd(config, size, version);

  uint32_t buffer_mb = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
  if (rd.get(kOffBufferSize, 1, &buffer_mb) && buffer_mb != HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET) {
    if (buffer_mb == 0 || buffer_mb > kMaxBufferMb) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: config hcclBufferSize is %u (MB); it must be between 1 and %u "
                                    "(1 TiB), as HCCL_BUFFSIZE",
                                    api, buffer_mb, kMaxBufferMb);
    }
    out->buffer_mb = buffer_mb;
  }
  uint32_t det_cfg = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
  if (rd.get(kOffDeterministic, 1, &det_cfg) && det_cfg != HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET) {
    if (det_cfg > 2) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: config hcclDeterministic is %u; expected 0, 1 or 2", api, det_cfg);
    }
    out->deterministic = det_cfg;
  }
  if (rd.get_string(kOffCommName, COMM_NAME_MAX_LENGTH, kSinceName, &out->name) < 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: config hcclCommName is not NUL-terminated within %u bytes", api,
                                  COMM_NAME_MAX_LENGTH);
  }
  uint32_t mode = 0;
  if (rd.get(kOffOpExpansion, kSinceOpExpansion, &mode)) out->op_expansion_mode = mode;
  int32_t timeout = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
  // Only a positive value overrides HCCL_EXEC_TIMEOUT: waits always end.
  if (rd.get(kOffExecTimeOut, kSinceExecTimeOut, &timeout) && timeout > 0)
    out->exec_timeout_s = timeout;
  if (rd.get_string(kOffAlgo, HCCL_COMM_ALGO_MAX_LENGTH, kSinceExecTimeOut, &out->algo) < 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: config hcclAlgo is not NUL-terminated within %u bytes", api,
                                  HCCL_COMM_ALGO_MAX_LENGTH);
  }
  uint64_t symwin_gb = 0;
  if (rd.get(kOffSymWinMax, kSinceSymWinMax, &symwin_gb)) {
    if (symwin_gb == 0 || symwin_gb > (1ull << 20)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: config hcclSymWinMaxMemSizePerRank is %llu (GB); it must be "
                                    "between 1 and 1048576", api, static_cast<unsigned long long>(symwin_gb));
    }
    out->symwin_max_gb = symwin_gb;
  }
  return HCCL_SUCCESS;
}

}  // namespace hccl
