// Bytes from the kernel's CSPRNG (getrandom), for secrets and nonces.
#pragma once

#include <errno.h>
#include <sys/random.h>

#include <cstddef>
#include <cstdint>

namespace hccl {

// False (errno set) if the kernel could not supply them.
inline bool fill_random(void *buf, size_t len) {
  auto *p = static_cast<uint8_t *>(buf);
  while (len > 0) {
    ssize_t n = ::getrandom(p, len, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace hccl
