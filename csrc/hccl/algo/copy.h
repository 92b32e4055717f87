// Copies out of the staging slots into the user's buffer. For large results
// (which cannot stay in cache anyway) non-temporal stores skip reading the
// destination lines first, which nearly doubles the copy rate to memory.
#pragma once

#include <cstddef>

namespace hccl {

// Results at least this big are written with non-temporal stores
// (PYHCCL_NT_BYTES overrides; read once).
size_t stream_threshold();

// memcpy, with non-temporal stores when `stream` (dst must not overlap src).
void copy_out(void *dst, const void *src, size_t bytes, bool stream);

}  // namespace hccl
