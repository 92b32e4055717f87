// SHA-256 (FIPS 180-4): a job's secret derived from its rank table, and the
// HMAC (common/hmac.h) that proves a peer holds the job secret.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hccl {

class Sha256 {
 public:
  Sha256();
  void update(const void *data, size_t bytes);
  void finish(uint8_t digest[32]);

 private:
  void block(const uint8_t *p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t used_ = 0;
  uint64_t total_ = 0;  // bytes
};

}  // namespace hccl
