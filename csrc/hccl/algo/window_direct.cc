// Collectives on symmetric windows (comm/window.h): when every rank's buffers
// lie in registered windows that every rank mapped at registration, the
// single-copy algorithms (direct.h) run at any size on those mappings. Each
// rank sends only where its buffers sit in its windows (a few words, which is
// also the entry barrier the single-copy algorithms need); no memory is
// described, located or mapped per operation, and nothing is staged.
#include <cstring>

#include "hccl/algo/direct.h"
#include "hccl/algo/select.h"
#include "hccl/algo/windows.h"

namespace hccl {
namespace {

struct Where {
  uint64_t send_seq, send_off, send_bytes;  // seq 0: no buffer (or none in a window)
  uint64_t recv_seq, recv_off, recv_bytes;
  uint32_t in_windows;                      // every non-empty buffer is in a direct window
  uint32_t pad;
};

bool locate(const WindowSet &set, const void *p, size_t bytes, uint64_t *seq, uint64_t *off) {
  *seq = 0;
  *off = 0;
  if (p == nullptr || bytes == 0) return true;
  const SymWindow *w = set.find(p, bytes, off);
  if (w == nullptr || !w->direct) return false;
  *seq = w->seq;
  return true;
}

}  // namespace

bool window_candidate(const Ctx &x) {
  if (!x.spec.has(Algo::kWindow) || !x.op.windows || !x.op.windows->any_direct() || x.multi_host() ||
      !x.comm.single_copy_ok)
    return false;
  Algo forced = x.comm.tuning.forced_for(x.spec.kind, false);
  return forced == Algo::kAuto || forced == Algo::kDirect;
}

HcclResult window_open(Ctx &x, const void *send, size_t send_bytes, void *recv, size_t recv_bytes,
                       bool *ok, PeerViews *views) {
  const WindowSet &set = *x.op.windows;
  Where mine{};
  mine.in_windows = locate(set, send, send_bytes, &mine.send_seq, &mine.send_off) &&
                    locate(set, recv, recv_bytes, &mine.recv_seq, &mine.recv_off);
  mine.send_bytes = send_bytes;
  mine.recv_bytes = recv_bytes;
  std::vector<Where> all(x.n);
  HcclResult rc = exchange(x, &mine, sizeof(mine), all.data());
  if (rc != HCCL_SUCCESS) return rc;
  *ok = true;
  for (const Where &w : all) *ok = *ok && w.in_windows;
  if (!*ok) return HCCL_SUCCESS;
  x.algo = "window";
  views->send.assign(x.n, nullptr);
  views->recv.assign(x.n, nullptr);
  for (int p = 0; p < x.n; ++p) {
    const Where &w = all[p];
    // Windows are numbered alike on every rank (registration is collective).
    const SymWindow *s = w.send_seq ? set.by_seq(w.send_seq) : nullptr;
    const SymWindow *r = w.recv_seq ? set.by_seq(w.recv_seq) : nullptr;
    if ((w.send_seq && s == nullptr) || (w.recv_seq && r == nullptr))
      return x.fail(HCCL_E_INTERNAL, "rank " + std::to_string(p) +
                                         " uses a symmetric window this rank does not know");
    if (s) views->send[p] = s->peers[p] + w.send_off;
    if (r) views->recv[p] = r->peers[p] + w.recv_off;
  }
  views->send[x.me] = static_cast<const char *>(send);
  views->recv[x.me] = static_cast<char *>(recv);
  return HCCL_SUCCESS;
}

}  // namespace hccl
