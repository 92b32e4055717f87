#include "hccl/algo/windows.h"

namespace hccl {

const SymWindow *WindowSet::find(const void *p, uint64_t bytes, uint64_t *off) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (const auto &w : list) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(w->base);
    if (a >= b && a - b <= w->size && bytes <= w->size - (a - b)) {
      *off = a - b;
      return w.get();
    }
  }
  return nullptr;
}

const SymWindow *WindowSet::by_seq(uint64_t seq) const {
  for (const auto &w : list)
    if (w->seq == seq) return w.get();
  return nullptr;
}

bool WindowSet::any_direct() const {
  for (const auto &w : list)
    if (w->direct) return true;
  return false;
}

}  // namespace hccl
