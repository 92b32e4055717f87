// HMAC-SHA256 (RFC 2104, FIPS 198-1) and a constant-time compare: the
// challenge-response that proves a peer holds the job secret without the
// secret ever crossing the network (bootstrap and TCP transport hellos).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/sha256.h"

namespace hccl {

class HmacSha256 {
 public:
  HmacSha256(const void *key, size_t key_bytes);
  HmacSha256 &update(const void *data, size_t bytes);
  // A 32-bit field in network byte order, so both ends hash the same bytes.
  HmacSha256 &u32(uint32_t v);
  void finish(uint8_t mac[32]);

 private:
  Sha256 inner_, outer_;
};

// True when the n bytes at a and b are equal; takes the same time wherever
// they differ, so a peer cannot learn a MAC byte by byte.
bool equal_ct(const void *a, const void *b, size_t n);

}  // namespace hccl
