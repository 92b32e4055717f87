// What an algorithm sees while it runs: the communicator, the operation and
// its signature, and a Batch for posting transfers on named peers:
//   send(peer, src, bytes)                  send
//   recv(peer, dst, bytes)                  recv
//   recv_reduce(peer, src, dst, bytes)      recv-reduce-copy: dst = src op received
//   recv_reduce(.., dep, tail)              dst = src op received op tail (src
//                                           may be null: received op tail)
//   send(peer, dst, bytes, {region, off})   with a dependency: recv-reduce-send,
//                                           the bytes go out as they are produced
// Large transfers are cut into messages of at most tuning.chunk_bytes, so
// they spread over a TCP peer's sockets and pipeline through dependencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "hccl/op/op.h"
#include "hccl/algo/comm_view.h"
#include "hccl/reduce/reduce.h"
#include "hccl/transport/engine.h"

namespace hccl {

// What operation `o` is, as numbered collective `seq` (0 for send/recv).
OpSig op_signature(const OpDesc &o, uint64_t seq);

class Ctx {
 public:
  Ctx(CommView &comm, const OpDesc &op);

  CommView &comm;
  const OpDesc &op;
  Engine &eng;
  const Topology &topo;
  const int me;
  const int n;
  const size_t es;  // element size of op.dtype
  const CollectiveSpec &spec;  // what op.kind is (op/spec.h)
  // The operation's buffers as its spec reads them: `in` is op.send (op.recv
  // for one-buffer collectives), `root` is -1 unless the spec is rooted.
  const char *const in;
  char *const out;
  const uint64_t count;
  const int root;
  OpSig sig;        // what every message of this operation carries
  WaitError err;    // filled by a failing batch / fail()
  const char *algo = "";  // the algorithm that ran, for the flight record and the log

  // Fails the op with a message (read after "HcclXxx: ").
  HcclResult fail(HcclResult code, const std::string &what);
  // After a failed batch: words a mismatch, keeps other errors as they are.
  HcclResult failed(HcclResult rc);
  bool multi_host() const { return topo.nhosts() > 1; }
  // comm.next_queued(), looked at once per operation (the stream's lock).
  bool next_queued();
  bool is_root() const { return root == me; }
  // This rank's send and recv bytes by the spec's byte rules.
  size_t send_bytes() const { return spec.send.mine(count, es, static_cast<uint32_t>(n), is_root()); }
  size_t recv_bytes() const { return spec.recv.mine(count, es, static_cast<uint32_t>(n), is_root()); }

 private:
  int next_queued_ = -1;  // not looked at yet
};

// A dependency: the input of a transfer is `region`'s bytes from `off` on.
struct Dep {
  const Region *region = nullptr;
  size_t off = 0;
  Dep at(size_t more) const { return Dep{region, off + more}; }
};

// Whether [p, p + bytes) is device memory a local peer can map, and how
// (for the single-copy algorithms and Batch::send_stable).
bool describe_device_memory(const void *p, size_t bytes, MemDesc *d);

// Sends from stable device memory of at least this many bytes go by
// reference (Batch::send_stable); smaller ones copy, as before (a reference
// makes the sender wait for the peer; measured only on operations of 4 MiB
// and up).
constexpr size_t kSharedMinBytes = 64 << 10;

// A buffer of this operation as local peers could map it: `mem.fd` < 0 when it
// is not device memory (then sends from it copy).
struct SharedBuffer {
  SharedBuffer() = default;
  SharedBuffer(const void *base, size_t bytes);
  const char *base = nullptr;
  MemDesc mem;
};

class Batch {
 public:
  explicit Batch(Ctx &x);

  // `after`: nothing of src goes before all of that region came in.
  const Region *send(int peer, const void *src, size_t bytes, Dep dep = {}, const Region *after = nullptr);
  // A send from `buf`'s device memory (src within it), which this rank does
  // not write before the operation ends: a peer on this host reads it in
  // place, where `buf` is device memory (Transfer::shared).
  const Region *send_stable(int peer, const SharedBuffer &buf, const void *src, size_t bytes, Dep dep = {});
  const Region *recv(int peer, void *dst, size_t bytes);
  const Region *recv_reduce(int peer, const void *src, void *dst, size_t bytes, Dep dep = {},
                            const void *tail = nullptr);
  // A header-only receive the batch does not wait for: it completes during
  // later batches, or when the operation ends and the next one on its
  // stream is not of this communicator (comm/exec.cc, Engine::drain).
  void recv_header_later(int peer);
  // The header-only send a recv_header_later takes: held back, to go out
  // with the next ones, while this communicator's next operation is queued
  // behind this one (Transfer::lazy).
  void send_header(int peer);
  // Runs everything posted so far to completion; then the batch is empty.
  // While this communicator's next operation is queued behind this one, its
  // data sends may be held back (Transfer::lazy) when one_way.
  HcclResult run();

  OpSig sig;  // stamped on what is posted next (the op's, unless changed)
  HcclDataType dtype;
  size_t elem;
  // Only the sends of HcclSend (or a group of sends): Engine::run's blocking_send.
  bool blocking_send = false;
  // Data flows one way through this rank (a tree, rooted_exchange): its
  // sends, not only its headers, may be held back (run()). Where a rank
  // also waits for its peers' data (an exchange) a held send would only go
  // out later, once the wait found nothing yet.
  bool one_way = false;

 private:
  const Region *add(Transfer::Kind kind, int peer, const char *src, char *dst, size_t bytes, Dep dep,
                    const Region *after = nullptr, const char *tail = nullptr,
                    const MemDesc *shared = nullptr);

  Ctx &x_;
  size_t chunk_;
  std::deque<Transfer> xfers_;
  std::deque<Region> regions_;
  std::vector<Transfer *> ptrs_;
};

// [lo, hi) of part `i` when `count` elements are split over `parts`, each part
// a multiple of 64 bytes (except the last) so kernels see aligned runs.
struct Span {
  size_t lo, hi;
  size_t size() const { return hi - lo; }
};
Span split(size_t count, int parts, int i, size_t elem_bytes);

inline size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

// Every rank sends `bytes` of `mine` to every other; out[r * bytes] receives
// rank r's (out[own] is a copy of mine, unless `copy_mine` is false: a caller
// that reads mine in place spares the copy). On boards when they hold it
// (board.h). Zero bytes make it a barrier that compares signatures.
HcclResult exchange(Ctx &x, const void *mine, size_t bytes, void *out, bool copy_mine = true);

// Flat algorithms (every rank messages every other) up to this many ranks.
constexpr int kFlatRanks = 16;

// Headers only: every rank compares signatures with every other (a barrier;
// what a collective with count 0 still does, so a rank given another count
// or operation is told rather than left waiting).
HcclResult compare_signatures(Ctx &x);

// The signature check of collectives whose data does not bring every pair
// of ranks together (rooted ones). The ranks form a fixed tree, the same
// whatever the operation (Topology::check_parent): within each host a path
// in rank order, between hosts each host's first rank to the next host's,
// where trees and chains across hosts link them too. Each rank hears from its
// parent in the tree in every such operation: through the data it receives
// from it when there is some (`from(p)`: this rank receives data from p in
// the step), else through a header-only message (and it sends each child a
// header unless it sends it data, `to(p)`). Where ranks disagree, a parent
// and a child in the tree differ, and the child meets a message it does not
// expect (or with another signature), fails and tells every rank; so no rank
// waits for data that a rank that disagrees never sends. At most n - 1
// headers (H - 1 between hosts), where a header between every pair took
// n(n-1). The check does not
// hold the step (recv_header_later): a rank whose data messages matched has
// its result (each carries the operation's signature), and a difference
// found later fails the operation running then, before the stream lets
// anything see this one complete (comm/exec.cc).
template <typename From, typename To>
void signature_check(Ctx &x, Batch &b, From from, To to) {
  for (int c : x.topo.check_children(x.me))
    if (c >= 0 && !to(c)) b.send_header(c);
  const int parent = x.topo.check_parent(x.me);
  if (parent >= 0 && !from(parent)) b.recv_header_later(parent);
}

// Rooted collectives in one step: the data between the root and every other
// rank (`root_send(b, peer)` at the root, `from_root(b)` elsewhere), which
// flows from the root when `root_sends`, else to it; and the signature check.
template <typename RootSend, typename FromRoot>
HcclResult rooted_exchange(Ctx &x, int root, bool root_sends, RootSend root_send, FromRoot from_root);

template <typename RootSend, typename FromRoot>
HcclResult rooted_exchange(Ctx &x, int root, bool root_sends, RootSend root_send, FromRoot from_root) {
  const bool data_in = root_sends != (x.me == root);  // this rank receives the data
  auto linked = [&](int p) { return x.me == root || p == root; };  // data between this rank and p
  Batch b(x);
  b.one_way = true;
  signature_check(x, b, [&](int p) { return data_in && linked(p); }, [&](int p) { return !data_in && linked(p); });
  if (x.me == root)
    for (int k = 1; k < x.n; ++k) root_send(b, (x.me + k) % x.n);
  else
    from_root(b);
  return b.run();
}

}  // namespace hccl
