#include "common/hmac.h"

#include <cstring>

namespace hccl {

HmacSha256::HmacSha256(const void *key, size_t key_bytes) {
  // Keys longer than a block are hashed first; shorter ones are zero-padded.
  uint8_t k[64] = {};
  if (key_bytes > sizeof(k)) {
    Sha256 h;
    h.update(key, key_bytes);
    h.finish(k);
  } else if (key_bytes > 0) {
    std::memcpy(k, key, key_bytes);
  }
  uint8_t pad[64];
  for (int i = 0; i < 64; ++i) pad[i] = static_cast<uint8_t>(k[i] ^ 0x36);
  inner_.update(pad, sizeof(pad));
  for (int i = 0; i < 64; ++i) pad[i] = static_cast<uint8_t>(k[i] ^ 0x5c);
  outer_.update(pad, sizeof(pad));
}

HmacSha256 &HmacSha256::update(const void *data, size_t bytes) {
  inner_.update(data, bytes);
  return *this;
}

HmacSha256 &HmacSha256::u32(uint32_t v) {
  const uint8_t be[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                         static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  return update(be, sizeof(be));
}

void HmacSha256::finish(uint8_t mac[32]) {
  uint8_t inner[32];
  inner_.finish(inner);
  outer_.update(inner, sizeof(inner));
  outer_.finish(mac);
}

bool equal_ct(const void *a, const void *b, size_t n) {
  const volatile uint8_t *x = static_cast<const uint8_t *>(a);
  const volatile uint8_t *y = static_cast<const uint8_t *>(b);
  uint8_t diff = 0;  // no early exit on the first differing byte
  for (size_t i = 0; i < n; ++i) diff = static_cast<uint8_t>(diff | (x[i] ^ y[i]));
  return diff == 0;
}

}  // namespace hccl
