// A connection to a peer on another host: nsock data sockets and a control
// socket. Messages take the data sockets in turn (message i of a direction
// on socket i % nsock, counted the same way on both sides), so several large
// messages in flight use every socket while each message stays in order on
// one stream. A receive that reduces stages what arrives and reduces it in
// whole elements while the kernel keeps receiving the rest (the reduction of
// one piece overlaps the transfer of the next). Everything is non-blocking;
// the engine polls the fds when nothing moves.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hccl/transport/transport.h"

namespace hccl {
namespace tcp {

class TcpConnection final : public Connection {
 public:
  // Takes ownership of the connected sockets (ctrl_fd and data_fds).
  TcpConnection(int peer, const std::string &where, int ctrl_fd, const std::vector<int> &data_fds,
                size_t stage_bytes);
  ~TcpConnection() override;

  const char *kind() const override { return "tcp"; }
  void post(Transfer *t) override;
  HcclResult progress(bool *moved, WaitError *err) override;
  bool peer_failed(bool probe, WaitError *err) override;  // thread-safe (ctrl_mu_)
  void notify_failure(HcclResult code, const std::string &why, uint64_t seq, int culprit) override;
  bool peer_reported_failure(WaitError *err) override { return peer_failed(true, err); }
  bool unreceived() const override;
  void leave() override;
  void clear() override;
  bool holds() const override;
  bool holds_data() const override;
  void flush_held() override;
  void flush() override;
  void poll_fds(std::vector<pollfd> *fds) override;
  // Polled until the peer said goodbye or went away (its EOF would stay readable).
  int notice_fd() const override { return left_ || closed_ || eof_ ? -1 : ctrl_fd_; }

  // What a socket holds at most (hold(), below). Payloads up to 4 KiB: with 1
  // KiB, queued 2 KiB Broadcasts sent one message each and ran at half the
  // link's rate in some runs (docs/TRANSPORT.md).
  static constexpr int kHeldMsgs = 16;
  static constexpr size_t kHeldPayload = 4096, kHeldBytes = 8192;

 private:
  struct Sock {
    int fd = -1;
    std::deque<Transfer *> sends, recvs;
    MsgHeader tx_hdr{};
    size_t tx_hdr_sent = 0;
    MsgHeader rx_hdr{};
    size_t rx_hdr_got = 0;
    std::vector<char> stage;  // recv-reduce: bytes received, not reduced yet
    size_t staged = 0;
    // The CRC32C trailer (kMsgCrc) of the message going out / coming in.
    uint32_t tx_crc = 0, rx_crc = 0;
    size_t tx_crc_at = 0;  // payload bytes the CRC covers so far
    size_t tx_trailer_sent = 0, rx_trailer_got = 0;
    uint32_t rx_trailer = 0;
    // Read ahead: what one recv() brought beyond the small read that asked
    // for it (the rest of a message, the next messages), taken from here first.
    std::unique_ptr<char[]> ahead;  // kAheadBytes, from the first small read
    size_t ahead_at = 0, ahead_end = 0;
    // Held lazy messages (Transfer::lazy), each with its payload and
    // trailer, in order; they go before anything posted after them
    // (flushing: now). held_data: how many of them carry data.
    std::vector<char> held;
    size_t held_sent = 0;
    int held_msgs = 0, held_data = 0;
    bool flushing = false;
    bool holds() const { return held_sent < held.size(); }
    // The front send's header may go before any of its payload is ready
    // (set before the engine sleeps; see header_waits).
    bool bare = false;
  };
  // A message's header waits for the first of its payload: sent alone, it
  // costs a system call here and a wake-up and a read at the receiver, who
  // can do nothing with it (as on shared memory, which never sends a header
  // alone). Before the engine sleeps, flush() lets such headers go, so that a
  // peer still learns of a mismatched operation (its signature) without
  // waiting for data that may never come.
  static bool header_waits(const Sock &s, const Transfer &t);
  // Every message costs a system call here, and the receiver a wake-up and
  // a read, whatever its size: while operations are queued, lazy sends
  // (Transfer::lazy) are held and go out together, at most kHeldMsgs or
  // kHeldBytes to a socket at once (the receiver reads them in one recv(),
  // kAheadBytes): header-only ones posted on an idle socket (behind a message
  // they go with it, as before), and those with at most kHeldPayload bytes
  // once all of them are ready at the front of their socket's queue (also
  // behind a message; headers held there seemed to slow queued 2-8 KiB
  // Broadcasts on 8x2 hosts, docs/TRANSPORT.md). The engine flushes them before it
  // sleeps, after Engine::kHoldNs, and when the stream has no next operation
  // of this communicator; data as soon as a wait is not done at once
  // (Engine::flush_data): holding pays where operations complete without
  // waiting, as a Broadcast's root's or a Reduce's leaves' do. The limits are
  // public, above (tests/c/tcp_hold_check.cc tests them).
  // A send's header as it goes out, held or not (with kMsgCrc when summed).
  MsgHeader wire_header(const Transfer &t) const;
  // Whether the front send `t` may be held: it is lazy and small, and its
  // data (all of it ready) fits what s holds.
  static bool small_lazy(const Transfer &t);
  static bool holdable(const Sock &s, const Transfer &t);
  // A lazy small send whose data is not ready yet: it waits for it, then is held.
  static bool waits_to_hold(const Sock &s, const Transfer &t);
  void hold(Sock &s, Transfer &t);  // copies t's message into s.held and completes t
  void take_along();         // a message is going out: the held ones go first
  void flush_sock(Sock &s);  // sends s's held messages now, what the socket takes
  HcclResult send_held(Sock &s, bool *moved, WaitError *err);
  // A read shorter than this (a header, a trailer, a small payload) asks the
  // kernel for this much, so that a small message takes one recv(), not one
  // for each of its parts, and several queued ones take one between them.
  // Reading no further than the posted receives where the collective also
  // sends to the peer would spare the ACK Linux sends when a read empties a
  // socket that got two small segments (0.2-0.3 per message in small AlltoAll
  // and AllReduce on 4x1 hosts; none then), but the recv() calls it adds cost
  // more: paired, small collectives on 2x2 took 2-10% longer (2026-12-07).
  static constexpr size_t kAheadBytes = 4096;
  // Two ranks that take turns sending on a socket look interactive to Linux,
  // which then holds its ACKs to ride on this rank's next message (pingpong
  // mode), and a read no longer sends them. A peer in the middle of a message
  // larger than its congestion window then waits for them: 40 ms or more (on
  // simulated 4x2 hosts, queued 64 KiB AllReduces stalled 6-11 times in 120).
  // So the socket leaves that mode (TCP_QUICKACK, which also sends what ACK is
  // due) when a message this large starts to come in, and after this rank's
  // message goes out while one is expected.
  static constexpr size_t kQuickAckBytes = 16 << 10;
  // A large message goes out, and a checked one comes in, at most this much
  // at a time, and the CRC sums each piece right after the kernel copied it,
  // when it is likeliest still in this core's cache (summing after a copy ran
  // at 46-51 GB/s here for pieces up to 256 KiB, 13-16 for 4 MiB and more).
  // Summing all of a message's ready bytes before sending read them from
  // memory twice.
  static constexpr size_t kCrcWindow = 256 << 10;
  void sum_sent(Sock &s, const Transfer &t, size_t upto);  // tx_crc over [tx_crc_at, upto)
  static bool expects_large(const Sock &s);

  HcclResult send_some(Sock &s, bool *moved, WaitError *err);
  HcclResult recv_some(Sock &s, bool *moved, WaitError *err);
  HcclResult broken(int e, const char *what, WaitError *err);
  // One non-blocking read from s into dst: the bytes read (> 0), 0 when none
  // are there now, -1 when the connection broke (*err). Payload bytes go
  // through the message's CRC (and PYHCCL_FAULT=corrupt_tcp first).
  ssize_t read(Sock &s, char *dst, size_t len, bool payload, WaitError *err);
  ssize_t take_ahead(Sock &s, char *dst, size_t len);  // from s.ahead, > 0 bytes
  ssize_t read_ahead(Sock &s, char *dst, size_t len, WaitError *err);  // a recv() into s.ahead
  ssize_t recv_now(Sock &s, char *dst, size_t len, WaitError *err);  // a recv() into dst
  // Reads the trailer of the message coming in on s and checks it.
  HcclResult check_trailer(Sock &s, bool *moved, WaitError *err);
  // Reads what the control socket holds and takes in its notices (under
  // ctrl_mu_); true when it reached end of file.
  bool drain_notices();

  const std::string where_;  // "rank k at host:port", for messages
  int ctrl_fd_;
  std::vector<Sock> socks_;
  size_t stage_bytes_;
  const bool crc_;  // PYHCCL_TCP_CRC: send a CRC32C trailer with every message
  // PYHCCL_FAULT=corrupt_tcp: what a faulty network does that TCP misses: a
  // bit of about one received chunk in 64 flips (tests of the CRC check).
  // slow_tcp_recv: a slow reader, at most 256 KiB per 10 ms (tests of exits).
  bool fault_corrupt_ = false, fault_slow_ = false;
  uint64_t fault_rng_ = 0;
  void fault_flip(char *p, size_t n);
  uint64_t tx_msgs_ = 0, rx_msgs_ = 0;
  std::mutex ctrl_mu_;        // guards the control socket's state below
  std::vector<char> notice_;  // control bytes received so far
  // The peer closed or broke a socket: set under ctrl_mu_ (with close_err_),
  // read without it where nothing broke (every idle turn of a wait looks).
  std::atomic<bool> closed_{false};
  bool left_ = false;         // the peer said goodbye (destroyed its communicator)
  bool eof_ = false;          // its control socket reached end of file
  bool gone_ = false;         // this rank said goodbye (leave())
  int eof_err_ = 0;
  WaitError close_err_;
};

}  // namespace tcp
}  // namespace hccl
