// CRC32C (Castagnoli), for the TCP transport's end-to-end check of every
// message: TCP's own 16-bit checksum misses corruption that checksum-offload
// bugs or middleboxes let through. Uses SSE4.2's crc32 instruction where the
// CPU has it (three independent streams, so its latency does not limit the
// rate), a table elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace common {

// The CRC of `n` bytes at `p` continued from `crc` (0 for a new message).
uint32_t crc32c(uint32_t crc, const void *p, size_t n);
// The same without SSE4.2 (what other CPUs run), for tests.
uint32_t crc32c_portable(uint32_t crc, const void *p, size_t n);

}  // namespace common
