#include "hccl/algo/copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "common/env.h"

namespace hccl {

size_t stream_threshold() {
  static const size_t kBytes = common::env_bytes("PYHCCL_NT_BYTES", 8u << 20);
  return kBytes;
}

void copy_out(void *dst_v, const void *src_v, size_t bytes, bool stream) {
#if defined(__x86_64__)
  if (stream && bytes >= 4096) {
    char *dst = static_cast<char *>(dst_v);
    const char *src = static_cast<const char *>(src_v);
    size_t head = (64 - (reinterpret_cast<uintptr_t>(dst) & 63)) & 63;
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    bytes -= head;
    size_t body = bytes & ~static_cast<size_t>(63);
    for (size_t i = 0; i < body; i += 64) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 16));
      __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 32));
      __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + 48), d);
    }
    _mm_sfence();  // streaming stores are weakly ordered: finish before we post
    std::memcpy(dst + body, src + body, bytes - body);
    return;
  }
#endif
  std::memcpy(dst_v, src_v, bytes);
}

}  // namespace hccl
