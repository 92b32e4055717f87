// CRC32C (Castagnoli), for the TCP transport's end-to-end check of every
// message: TCP's own 16-bit checksum misses corruption that checksum-offload
// bugs or middleboxes let through. crc32c() picks the fastest path this CPU
// has, once, at run time (function-level `target` attributes, so the library
// still loads on any x86-64; other CPUs build the table path only). One core
// of an AMD EPYC with AVX-512, data in cache:
//   vpclmul  folds 256 bytes a round with VPCLMULQDQ on four 512-bit registers
//            (AVX-512): ~57 GB/s from 4 KiB, ~48 at 1 KiB, ~23 at 256 bytes;
//   mixed    for AVX2 cores with VPCLMULQDQ but no AVX-512: 256-bit folds and
//            three crc32 streams side by side, on different units; on an AMD
//            EPYC of that kind ~39 GB/s at 64 KiB, ~36 at 4 KiB, ~22 at 1 KiB,
//            where the two paths below run 22-24 from 64 KiB, 8-12.5 at 4 KiB;
//   pclmul   folds with 128-bit PCLMULQDQ, 64 bytes a round, below 12 KiB
//            (~14 GB/s), the sse4.2 path's rounds above (~27 GB/s);
//   sse4.2   the crc32 instruction on three interleaved 4 KiB streams, ~27 GB/s
//            from 12 KiB; below, one stream, latency-bound at ~9.5 GB/s;
//   table    a byte at a time, ~0.5 GB/s.
// The folding paths (crc32c_fold.cc) reduce with the crc32 instruction.
#pragma once

#include <cstddef>
#include <cstdint>

namespace common {

// The CRC of `n` bytes at `p` continued from `crc` (0 for a new message).
uint32_t crc32c(uint32_t crc, const void *p, size_t n);

// The paths crc32c() chooses from, fastest first; for tests and benchmarks.
enum class Crc32cPath { kVpclmul, kMixed, kPclmul, kSse42, kTable };
constexpr int kCrc32cPaths = 5;
const char *crc32c_path_name(Crc32cPath path);
// Whether this CPU (and this build) can run `path`.
bool crc32c_path_supported(Crc32cPath path);
// crc32c() on `path` alone; `path` must be supported.
uint32_t crc32c_path(Crc32cPath path, uint32_t crc, const void *p, size_t n);

// Shared by crc32c.cc and crc32c_fold.cc. Each path takes and returns the raw
// register (~crc).
namespace crc32c_detail {
constexpr uint32_t kPoly = 0x82f63b78;  // the Castagnoli polynomial, bit-reflected
constexpr size_t kSse42Round = 3 * 4096;  // three streams of 4 KiB
#if defined(__x86_64__)
// The sse4.2 path's whole rounds over p[0, n), into `reg`; returns the bytes
// done (a multiple of kSse42Round).
size_t sse42_rounds(uint32_t &reg, const unsigned char *p, size_t n);
uint32_t sse42(uint32_t reg, const unsigned char *p, size_t n);
uint32_t pclmul(uint32_t reg, const unsigned char *p, size_t n);
uint32_t vpclmul(uint32_t reg, const unsigned char *p, size_t n);
uint32_t mixed(uint32_t reg, const unsigned char *p, size_t n);
#endif
}  // namespace crc32c_detail

}  // namespace common
