// The seam between the algorithms and how bytes move between ranks.
//
// A communicator holds one Connection per peer, chosen per pair when it is
// built: shared memory when both ranks are on one host (shm/), TCP when they
// are not (tcp/), and a loopback for a rank's messages to itself (self.h).
// Algorithms post Transfers on named peers: a send of a byte range, a receive
// into one, or a receive that reduces what arrives with a local operand
// (recv-reduce-copy; a send that depends on it makes recv-reduce-send). The
// engine (engine.h) progresses every posted transfer until all are complete;
// its waiter (waiter.h) sleeps when none can move, and turns a dead peer, a failed peer, a
// mismatched message or a stall longer than HCCL_EXEC_TIMEOUT into an error.
//
// Messages between a pair match in order, per direction. Every message starts
// with a header carrying the operation's signature (OpSig), so a receiver
// notices when ranks called different operations, whatever the transport.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hccl/hccl_types.h"

namespace hccl {

// What an operation is, as every rank involved must agree: compared between
// sender and receiver of every message.
struct OpSig {
  uint64_t seq = 0;    // collective number on the communicator, from 1; 0 for send/recv
  uint64_t count = 0;  // as compared (a digest for V collectives; 0 where counts differ)
  uint32_t kind = 0;   // OpKind
  uint32_t dtype = 0;
  uint32_t root = 0;
  uint32_t op = 0;

  bool operator==(const OpSig &o) const {
    return seq == o.seq && count == o.count && kind == o.kind && dtype == o.dtype &&
           root == o.root && op == o.op;
  }
  bool operator!=(const OpSig &o) const { return !(*this == o); }
};
static_assert(sizeof(OpSig) == 32, "OpSig travels in message headers");

constexpr uint32_t kMsgMagic = 0x314d4850;  // "PHM1"

// In front of every message (shm: of every slot of it).
struct MsgHeader {
  uint32_t magic;
  uint32_t flags;  // kMsgCrc
  OpSig sig;
  uint64_t bytes;  // payload bytes of the whole message
};
static_assert(sizeof(MsgHeader) == 48, "message header layout");
// MsgHeader.flags: a CRC32C of the header and payload follows the payload (TCP).
constexpr uint32_t kMsgCrc = 1;

// Why a transfer or a wait failed. `what` reads well after "HcclAllReduce: ".
// When a peer's message carried another signature or size, `mismatch` or
// `size_mismatch` is set and the algorithm layer words the message (it knows
// the operations' names).
struct WaitError {
  HcclResult code = HCCL_SUCCESS;
  std::string what;
  bool mismatch = false;       // the peer's message carried another signature
  bool size_mismatch = false;  // same signature, other byte count (V collectives)
  int peer = -1;
  // A failure a peer reported: the rank at fault it named (through relays), or
  // -1 when the peer itself is (or nothing was reported).
  int culprit = -1;
  OpSig mine, theirs;
  uint64_t got_bytes = 0, want_bytes = 0;
  // When the error is a peer's reported failure: the collective it failed in
  // (0 when unknown).
  uint64_t failed_seq = 0;
  // A timeout: the last signature seen from the peer waited for (seq 0: none).
  bool timeout = false;
  OpSig last_seen;
  // Two communicators used in opposite orders (transport/order.cc): the uid of
  // the other one, which fails here too; its peers are told only when
  // (order_notify) the peer did not reach the verdict itself.
  uint64_t order_comm = 0;
  bool order_notify = false;

  // Named constructors (wait_error.cc), one per kind of failure; a failing
  // call writes one and returns its code: `return WaitError::closed(p, w).into(err);`.
  // `peer` is the rank the failure is about (-1: none named).
  static WaitError failure(HcclResult code, int peer, std::string what);
  // No progress for the exec timeout while waiting for `peer`, whose last
  // message carried `last_seen` (seq 0: none).
  static WaitError timed_out(int peer, std::string what, const OpSig &last_seen);
  // `peer` reported a failure (its code and reason, the rank at fault it
  // named, the collective it failed in).
  static WaitError peer_failed(HcclResult code, int peer, int culprit, uint64_t failed_seq,
                               std::string what);
  // `peer` is gone: it died, destroyed its communicator, or its connection closed.
  static WaitError closed(int peer, std::string what);
  // A message or record that cannot be read (HCCL_E_INTERNAL, or the
  // transport's own code, e.g. HCCL_E_TCP_TRANSFER for a bad checksum).
  static WaitError corrupt(int peer, std::string what, HcclResult code = HCCL_E_INTERNAL);
  // Ranks that wait for each other forever; two communicators used in
  // opposite orders also name the other one (order_comm, order_notify).
  static WaitError deadlock(int peer, std::string what, uint64_t order_comm = 0,
                            bool order_notify = false);
  // `peer`'s message carried another signature (the algorithm layer words it).
  static WaitError sig_mismatch(int peer, const OpSig &mine, const OpSig &theirs);
  // Same signature, another byte count: got from `peer`, wanted here.
  static WaitError bytes_mismatch(int peer, const OpSig &mine, uint64_t got, uint64_t want);
  // This rank gave up (abort, SIGINT): the code and reason interrupt() was given.
  static WaitError interrupted(HcclResult code, std::string why);
  // A broken invariant of pyhccl itself.
  static WaitError internal(std::string what);

  // Writes this error to *dst and returns its code.
  HcclResult into(WaitError *dst) && {
    *dst = std::move(*this);
    return dst->code;
  }
};

class Region;

// Device memory of a peer on the same host, as its owner described it.
struct MemDesc {
  int32_t fd = -1;         // memfd in the owner process
  uint64_t ino = 0;        // its inode: a reused fd number is not taken for the old file
  uint64_t file_size = 0;  // bytes to map from offset 0
  uint64_t offset = 0;     // where the buffer starts in the file
  uint64_t bytes = 0;
};

// One posted transfer. The engine owns it until complete; the connection
// moves its bytes and advances `done` (always a prefix of the range).
struct Transfer {
  enum Kind : uint8_t { kSend, kRecv, kRecvReduce };

  Kind kind = kSend;
  int peer = -1;
  const char *src = nullptr;  // send: the bytes; recv-reduce: the local operand (or none)
  char *dst = nullptr;        // recv, recv-reduce: where the result goes (may equal src)
  // recv-reduce: a second local operand, folded in after the received bytes
  // (src op received op tail), readable at once; null: none.
  const char *tail = nullptr;
  size_t bytes = 0;
  OpSig sig;                  // stamped on (send) or expected in (receive) the header
  HcclDataType dtype = HCCL_DATA_TYPE_INT8;  // recv-reduce: element type and op
  HcclReduceOp op = HCCL_REDUCE_SUM;
  size_t elem = 1;            // element size: recv-reduce reduces whole elements
  // src[0, k) may be read only once dep->ready(dep_off) >= k (null: at once).
  const Region *dep = nullptr;
  size_t dep_off = 0;
  // Nor any of src before every byte of `after` came in (null: no such gate).
  const Region *after = nullptr;
  // send: src in this rank's device memory (fd >= 0; offset: src's), which
  // nothing writes before the operation ends: a peer on this host may read it
  // in place, and the send completes once the peer has (shm/conn.h).
  MemDesc shared;

  // A header-only receive that may complete after its batch (Engine::run
  // keeps a copy; a later batch or Engine::drain completes it).
  bool later = false;
  // A send of an operation that this rank's next one is queued behind
  // (algo/ctx.h): the connection may hold it back, to go out with the ones
  // that follow in one system call (TCP), and then completes it at once; the
  // batch does not wait for it (Engine::run). Header-only ones (the signature
  // check's, whose receiver posted them `later`) may stay held while this
  // rank waits; small data messages, which a receiver waits for, go out as
  // soon as this rank waits for anything (Engine::flush_data).
  bool lazy = false;

  size_t done = 0;
  bool started = false;  // the header went out / came in
  bool complete = false;

  // Bytes of src that may be read now.
  size_t input_ready() const;
  // recv-reduce: the operands for bytes from `at`, in fold order (src, the
  // received bytes, tail; src and tail when set); returns how many.
  int operands(size_t at, const void *received, const void *out[3]) const;
};

// A byte range produced by consecutive transfers (a chunked receive), that
// dependent transfers read as it completes.
class Region {
 public:
  void add(const Transfer *t) { parts_.push_back(t); }
  // Bytes from `off` on that are complete (0 when off is past the end).
  size_t ready(size_t off) const;
  size_t bytes() const;
  bool complete() const;

 private:
  std::vector<const Transfer *> parts_;
};

class Connection {
 public:
  explicit Connection(int peer) : peer_(peer) {}
  virtual ~Connection() = default;

  int peer() const { return peer_; }
  // The signature of the last message received from the peer.
  const OpSig &last_seen() const { return last_seen_; }
  virtual const char *kind() const = 0;  // "shm", "tcp", "self"

  // Queues a transfer behind the earlier ones of its direction.
  virtual void post(Transfer *t) = 0;
  // Moves what can move without blocking; *moved tells whether anything did.
  // Errors: the peer's message did not match, its connection broke, ...
  virtual HcclResult progress(bool *moved, WaitError *err) = 0;
  // Whether the peer has failed (told us so), died, or left (destroyed its
  // communicator) while a queued transfer still waits on it. A peer that left
  // normally is no failure otherwise: what it sent before may still be on its
  // way. Cheap enough for every wake-up; slower probes only when `probe` is set.
  virtual bool peer_failed(bool probe, WaitError *err) = 0;
  // Tells the peer, best effort and without blocking, that this rank failed
  // in collective `seq`, because of rank `culprit` (the rank at fault, carried
  // through relays so that every survivor names it; this rank's own when -1).
  virtual void notify_failure(HcclResult code, const std::string &why, uint64_t seq,
                              int culprit) = 0;
  // Whether the peer reported a failure (or died): safe from any thread, for
  // querying a communicator's state while another thread runs an operation.
  virtual bool peer_reported_failure(WaitError *err) {
    (void)err;
    return false;
  }
  // Whether messages this rank sent (completed here: a small send completes
  // eagerly) have not all been taken by the peer yet: shm, slots it has not
  // consumed; TCP, bytes its host has not acknowledged. For destroy's linger.
  virtual bool unreceived() const { return false; }
  // Whether the peer destroyed its communicator (where this can be seen).
  virtual bool peer_left() const { return false; }
  // Tells the peer, once, that this rank leaves normally (what it sent is to
  // be read, not a death): the destructor does it, and an exit without one.
  virtual void leave() {}
  // Forgets queued transfers (the engine gave up on them), and held headers.
  virtual void clear() = 0;
  // Held `lazy` messages (Transfer::lazy): whether some have not gone out
  // yet, and whether some of those carry data; flush_held() sends them now,
  // or (when the socket is full) at the next progress; flush() also lets
  // headers that wait for their payload go alone (TCP).
  virtual bool holds() const { return false; }
  virtual bool holds_data() const { return false; }
  virtual void flush_held() {}
  virtual void flush() {}
  // File descriptors to poll while waiting for this connection (TCP); the
  // connection asks for POLLOUT only when it has bytes waiting to go.
  virtual void poll_fds(std::vector<pollfd> *fds) { (void)fds; }
  // A descriptor that turns readable when the peer sends a failure notice or
  // goes away (TCP), polled during every wait; -1 when there is none.
  virtual int notice_fd() const { return -1; }
  // Direct access to a peer's device memory (shm on one host); nullptr when
  // this connection cannot map it.
  virtual void *map_peer_memory(const MemDesc &d) {
    (void)d;
    return nullptr;
  }

 protected:
  const int peer_;
  OpSig last_seen_;  // connections set it whenever a header comes in
};

// Checks a received header against what the receiver posted; fills *err.
HcclResult check_header(const MsgHeader &h, const Transfer &t, WaitError *err);
// A header for a message of transfer t.
MsgHeader make_header(const Transfer &t);

}  // namespace hccl
