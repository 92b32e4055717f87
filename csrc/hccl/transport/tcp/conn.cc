// The TCP connection (conn.h): messages over the data sockets (header,
// payload, CRC trailer), failure and leave notices over the control socket.
#include "hccl/transport/tcp/conn.h"

#include <errno.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/crc32c.h"
#include "common/env.h"
#include "hccl/net/socket.h"
#include "hccl/reduce/reduce.h"
#include "hccl/transport/tcp/wire.h"

namespace hccl {
namespace tcp {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "message headers travel in host order");

TcpConnection::TcpConnection(int peer, const std::string &where, int ctrl_fd,
                             const std::vector<int> &data_fds, size_t stage_bytes)
    : Connection(peer), where_(where), ctrl_fd_(ctrl_fd), socks_(data_fds.size()),
      stage_bytes_(stage_bytes), crc_(common::env_int("PYHCCL_TCP_CRC", 1, 0, 1) != 0) {
  for (size_t i = 0; i < data_fds.size(); ++i) socks_[i].fd = data_fds[i];
  fault_corrupt_ = std::strcmp(common::env_str("PYHCCL_FAULT", ""), "corrupt_tcp") == 0;
  fault_slow_ = std::strcmp(common::env_str("PYHCCL_FAULT", ""), "slow_tcp_recv") == 0;
  fault_rng_ = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(peer + 1);
}

void TcpConnection::fault_flip(char *p, size_t n) {
  fault_rng_ = fault_rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
  const uint64_t r = fault_rng_ >> 17;
  if (n > 0 && r % 64 == 0) p[(r >> 6) % n] ^= static_cast<char>(1 << ((r >> 3) & 7));
}

TcpConnection::~TcpConnection() {
  if (!closed_) leave();
  net::close_fd(ctrl_fd_);
  for (Sock &s : socks_) net::close_fd(s.fd);
}

void TcpConnection::post(Transfer *t) {
  if (t->kind == Transfer::kSend) {
    Sock &s = socks_[tx_msgs_++ % socks_.size()];
    if (s.sends.empty() && holdable(s, *t)) {
      hold(s, *t);
      return;
    }
    // A small lazy send with data decides when it reaches the front (send_some).
    if (!small_lazy(*t) || t->bytes == 0) take_along();
    s.sends.push_back(t);
  } else {
    Sock &s = socks_[rx_msgs_++ % socks_.size()];
    if (t->kind == Transfer::kRecvReduce && s.stage.size() < stage_bytes_) s.stage.resize(stage_bytes_);
    s.recvs.push_back(t);
  }
}

bool TcpConnection::unreceived() const {
  // Bytes in a send queue that the peer's host has not acknowledged (the
  // peer's process reading them is not visible from here), or held here.
  if (holds()) return true;
  for (const Sock &s : socks_) {
    int queued = 0;
    if (s.fd >= 0 && ioctl(s.fd, SIOCOUTQ, &queued) == 0 && queued > 0) return true;
  }
  return false;
}

void TcpConnection::leave() {
  // Goodbye (a notice with code 0): the peer tells a rank that left from one that died.
  if (!gone_) notify_failure(HCCL_SUCCESS, "", 0, -1);
  gone_ = true;
}

void TcpConnection::clear() {
  for (Sock &s : socks_) {
    s.sends.clear();
    s.recvs.clear();
    s.held.clear();
    s.held_sent = 0;
    s.held_msgs = s.held_data = 0;
    s.flushing = false;
  }
}

MsgHeader TcpConnection::wire_header(const Transfer &t) const {
  MsgHeader h = make_header(t);
  if (crc_) h.flags |= kMsgCrc;
  return h;
}

bool TcpConnection::small_lazy(const Transfer &t) { return t.lazy && t.bytes <= kHeldPayload; }

bool TcpConnection::holdable(const Sock &s, const Transfer &t) {
  return !s.bare && !t.started && small_lazy(t) && t.input_ready() == t.bytes;
}

bool TcpConnection::waits_to_hold(const Sock &s, const Transfer &t) {
  return !s.bare && !t.started && small_lazy(t) && t.input_ready() < t.bytes;
}

void TcpConnection::hold(Sock &s, Transfer &t) {
  const MsgHeader h = wire_header(t);
  const char *p = reinterpret_cast<const char *>(&h);
  s.held.insert(s.held.end(), p, p + sizeof(h));
  s.held.insert(s.held.end(), t.src, t.src + t.bytes);
  if (crc_) {
    const uint32_t crc = common::crc32c(common::crc32c(0, &h, sizeof(h)), t.src, t.bytes);
    p = reinterpret_cast<const char *>(&crc);
    s.held.insert(s.held.end(), p, p + sizeof(crc));
  }
  t.started = t.complete = true;
  if (t.bytes > 0) ++s.held_data;
  if (++s.held_msgs >= kHeldMsgs || s.held.size() - s.held_sent >= kHeldBytes) flush_sock(s);
}

void TcpConnection::take_along() {
  for (Sock &o : socks_)
    if (o.holds()) o.flushing = true;
}

bool TcpConnection::holds() const {
  for (const Sock &s : socks_)
    if (s.holds()) return true;
  return false;
}

bool TcpConnection::holds_data() const {
  for (const Sock &s : socks_)
    if (s.held_data > 0 && s.holds()) return true;
  return false;
}

void TcpConnection::flush_held() {
  for (Sock &s : socks_)
    if (s.holds()) flush_sock(s);
}

void TcpConnection::flush() {
  flush_held();
  for (Sock &s : socks_)
    if (!s.sends.empty()) s.bare = true;
}

void TcpConnection::flush_sock(Sock &s) {
  s.flushing = true;
  bool moved = false;
  WaitError err;  // a broken socket is closed_ now: the next progress() reports it
  send_held(s, &moved, &err);
}

HcclResult TcpConnection::send_held(Sock &s, bool *moved, WaitError *err) {
  while (s.holds()) {
    ssize_t w = send(s.fd, s.held.data() + s.held_sent, s.held.size() - s.held_sent,
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return HCCL_SUCCESS;
      return broken(errno, "sending", err);
    }
    s.held_sent += static_cast<size_t>(w);
    *moved = true;
  }
  s.held.clear();
  s.held_sent = 0;
  s.held_msgs = s.held_data = 0;
  s.flushing = false;
  return HCCL_SUCCESS;
}

HcclResult TcpConnection::broken(int e, const char *what, WaitError *err) {
  std::lock_guard<std::mutex> lock(ctrl_mu_);
  // A peer that failed told us why before its sockets closed: say that.
  drain_notices();
  if (!closed_) {
    closed_ = true;
    close_err_ = WaitError::closed(
        peer_, e == 0 || e == ECONNRESET || e == EPIPE
                   ? where_ + " closed the connection while " + what +
                         " (it exited, was killed or destroyed its communicator)"
                   : "the connection to " + where_ + " broke while " + what + ": " + net::errno_text(e));
  }
  *err = close_err_;
  return err->code;
}

bool TcpConnection::drain_notices() {
  char buf[512];
  bool eof = false;
  for (;;) {
    ssize_t r = recv(ctrl_fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (r > 0) {
      notice_.insert(notice_.end(), buf, buf + r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    eof = eof_ = true;
    eof_err_ = r == 0 ? 0 : errno;
    break;
  }
  while (!closed_ && notice_.size() >= sizeof(Notice)) {
    Notice n;
    std::memcpy(&n, notice_.data(), sizeof(n));
    size_t len = std::min<size_t>(n.len, kMaxNoticeText);
    if (n.magic != kNoticeMagic) {
      closed_ = true;
      close_err_ = WaitError::corrupt(peer_, "garbled control message from " + where_);
      break;
    }
    if (notice_.size() < sizeof(n) + len) break;
    std::string why(notice_.data() + sizeof(n), len);
    notice_.erase(notice_.begin(), notice_.begin() + sizeof(n) + len);
    if (n.code == 0) {
      left_ = true;
      continue;
    }
    closed_ = true;
    close_err_ = WaitError::peer_failed(static_cast<HcclResult>(n.code), peer_, n.culprit, n.seq,
                                        "rank " + std::to_string(peer_) + " failed (" + why + ")");
  }
  return eof;
}

HcclResult TcpConnection::progress(bool *moved, WaitError *err) {
  *moved = false;
  if (closed_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(ctrl_mu_);
    *err = close_err_;
    return err->code;
  }
  for (Sock &s : socks_) {
    HcclResult rc = send_some(s, moved, err);
    if (rc == HCCL_SUCCESS) rc = recv_some(s, moved, err);
    if (rc != HCCL_SUCCESS) return rc;
  }
  return HCCL_SUCCESS;
}

HcclResult TcpConnection::send_some(Sock &s, bool *moved, WaitError *err) {
  const size_t trailer = crc_ ? sizeof(uint32_t) : 0;
  if (s.holds() && s.flushing) {
    HcclResult rc = send_held(s, moved, err);
    if (rc != HCCL_SUCCESS || s.holds()) return rc;
  }
  while (!s.sends.empty()) {
    Transfer *t = s.sends.front();
    if (waits_to_hold(s, *t)) return HCCL_SUCCESS;  // held once its data is ready
    if (t->bytes > 0 && holdable(s, *t)) {
      hold(s, *t);
      s.sends.pop_front();
      *moved = true;
      continue;
    }
    if (!t->started) {
      take_along();
      if (s.holds()) {  // they go first
        HcclResult rc = send_held(s, moved, err);
        if (rc != HCCL_SUCCESS || s.holds()) return rc;
      }
      s.tx_hdr = wire_header(*t);
      s.tx_hdr_sent = 0;
      s.tx_crc = crc_ ? common::crc32c(0, &s.tx_hdr, sizeof(MsgHeader)) : 0;
      s.tx_crc_at = 0;
      s.tx_trailer_sent = 0;
      t->started = true;
    }
    size_t ready = t->input_ready();
    if (crc_) {  // ready bytes do not change, so a sum after they went is theirs
      // What went last is in cache now: the kernel just copied it.
      sum_sent(s, *t, t->done);
      // A message of one window is summed first, so one call carries it and
      // its trailer. A larger one's last window is summed after it went too,
      // and the trailer follows on its own: summed before, in a 64 MiB
      // AllReduce between two hosts, those windows took 5.5 GB/s (20 after).
      if (ready == t->bytes && t->bytes <= kCrcWindow) sum_sent(s, *t, t->bytes);
      if (s.tx_crc_at < t->bytes) ready = std::min(ready, t->done + kCrcWindow);
    }
    if (header_waits(s, *t)) return HCCL_SUCCESS;
    iovec iov[3];
    int n = 0;
    if (s.tx_hdr_sent < sizeof(MsgHeader))
      iov[n++] = {reinterpret_cast<char *>(&s.tx_hdr) + s.tx_hdr_sent, sizeof(MsgHeader) - s.tx_hdr_sent};
    if (ready > t->done) iov[n++] = {const_cast<char *>(t->src) + t->done, ready - t->done};
    if (crc_ && s.tx_crc_at == t->bytes && s.tx_trailer_sent < trailer)
      iov[n++] = {reinterpret_cast<char *>(&s.tx_crc) + s.tx_trailer_sent, trailer - s.tx_trailer_sent};
    if (n == 0) {
      if (t->done < t->bytes) return HCCL_SUCCESS;  // waiting for the data to be produced
    } else {
      msghdr mh{};
      mh.msg_iov = iov;
      mh.msg_iovlen = n;
      int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
      // The trailer follows once the last bytes are summed: the kernel holds
      // the last part-filled segment for it rather than send it alone.
      if (crc_ && ready == t->bytes && s.tx_crc_at < t->bytes) flags |= MSG_MORE;
      ssize_t w = sendmsg(s.fd, &mh, flags);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return HCCL_SUCCESS;
        return broken(errno, "sending", err);
      }
      size_t left = static_cast<size_t>(w);
      size_t h = std::min(left, sizeof(MsgHeader) - s.tx_hdr_sent);
      s.tx_hdr_sent += h;
      left -= h;
      size_t p = std::min(left, ready - t->done);
      t->done += p;
      s.tx_trailer_sent += left - p;
      *moved = true;
    }
    if (s.tx_hdr_sent < sizeof(MsgHeader) || t->done < t->bytes || s.tx_trailer_sent < trailer)
      continue;
    t->complete = true;
    s.sends.pop_front();
    s.bare = false;
    if (expects_large(s)) net::quick_ack(s.fd);
  }
  return HCCL_SUCCESS;
}

bool TcpConnection::header_waits(const Sock &s, const Transfer &t) {
  return !s.bare && s.tx_hdr_sent == 0 && t.bytes > 0 && t.input_ready() == 0;
}

void TcpConnection::sum_sent(Sock &s, const Transfer &t, size_t upto) {
  if (upto <= s.tx_crc_at) return;
  s.tx_crc = common::crc32c(s.tx_crc, t.src + s.tx_crc_at, upto - s.tx_crc_at);
  s.tx_crc_at = upto;
}

bool TcpConnection::expects_large(const Sock &s) {
  for (const Transfer *t : s.recvs)
    if (t->bytes >= kQuickAckBytes) return true;
  return false;
}

ssize_t TcpConnection::read(Sock &s, char *dst, size_t len, bool payload, WaitError *err) {
  const bool summed = payload && (s.rx_hdr.flags & kMsgCrc);
  if (summed) len = std::min(len, kCrcWindow);
  ssize_t r = s.ahead_at < s.ahead_end ? take_ahead(s, dst, len) : 0;
  if (r == 0) r = len < kAheadBytes ? read_ahead(s, dst, len, err) : recv_now(s, dst, len, err);
  if (r <= 0) return r;
  if (payload && fault_corrupt_) fault_flip(dst, static_cast<size_t>(r));
  if (summed) s.rx_crc = common::crc32c(s.rx_crc, dst, static_cast<size_t>(r));
  return r;
}

ssize_t TcpConnection::take_ahead(Sock &s, char *dst, size_t len) {
  const size_t n = std::min(len, s.ahead_end - s.ahead_at);
  std::memcpy(dst, s.ahead.get() + s.ahead_at, n);
  s.ahead_at += n;
  return static_cast<ssize_t>(n);
}

ssize_t TcpConnection::read_ahead(Sock &s, char *dst, size_t len, WaitError *err) {
  if (!s.ahead) s.ahead.reset(new char[kAheadBytes]);
  ssize_t r = recv_now(s, s.ahead.get(), kAheadBytes, err);
  s.ahead_at = 0;
  s.ahead_end = r > 0 ? static_cast<size_t>(r) : 0;
  return r > 0 ? take_ahead(s, dst, len) : r;
}

ssize_t TcpConnection::recv_now(Sock &s, char *dst, size_t len, WaitError *err) {
  for (;;) {
    ssize_t r = recv(s.fd, dst, len, MSG_DONTWAIT);
    if (r > 0) return r;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    broken(r == 0 ? 0 : errno, "receiving", err);
    return -1;
  }
}

HcclResult TcpConnection::check_trailer(Sock &s, bool *moved, WaitError *err) {
  while (s.rx_trailer_got < sizeof(uint32_t)) {
    ssize_t r = read(s, reinterpret_cast<char *>(&s.rx_trailer) + s.rx_trailer_got,
                     sizeof(uint32_t) - s.rx_trailer_got, false, err);
    if (r < 0) return err->code;
    if (r == 0) return HCCL_SUCCESS;
    s.rx_trailer_got += static_cast<size_t>(r);
    *moved = true;
  }
  if (s.rx_trailer == s.rx_crc) return HCCL_SUCCESS;
  char sums[64];
  snprintf(sums, sizeof(sums), "CRC32C %08x, computed %08x", s.rx_trailer, s.rx_crc);
  return WaitError::corrupt(peer_,
                           "a message of " + std::to_string(s.rx_hdr.bytes) + " bytes from " + where_ +
                               " arrived corrupted (" + sums + "): the network changed it and TCP's "
                               "checksum did not notice (a NIC's checksum offload, a middlebox); "
                               "PYHCCL_TCP_CRC=0 turns this check off",
                           HCCL_E_TCP_TRANSFER)
      .into(err);
}

HcclResult TcpConnection::recv_some(Sock &s, bool *moved, WaitError *err) {
  while (!s.recvs.empty()) {
    Transfer *t = s.recvs.front();
    if (s.rx_hdr_got < sizeof(MsgHeader)) {
      ssize_t r = read(s, reinterpret_cast<char *>(&s.rx_hdr) + s.rx_hdr_got,
                       sizeof(MsgHeader) - s.rx_hdr_got, false, err);
      if (r < 0) return err->code;
      if (r == 0) return HCCL_SUCCESS;
      s.rx_hdr_got += static_cast<size_t>(r);
      *moved = true;
      if (s.rx_hdr_got < sizeof(MsgHeader)) continue;
      last_seen_ = s.rx_hdr.sig;
      HcclResult rc = check_header(s.rx_hdr, *t, err);
      if (rc != HCCL_SUCCESS) return rc;
      if (t->bytes >= kQuickAckBytes) net::quick_ack(s.fd);  // see kQuickAckBytes
      s.rx_crc = s.rx_hdr.flags & kMsgCrc ? common::crc32c(0, &s.rx_hdr, sizeof(MsgHeader)) : 0;
      s.rx_trailer_got = 0;
      t->started = true;
    }
    if (t->kind == Transfer::kRecv) {
      while (t->done < t->bytes) {
        size_t want = t->bytes - t->done;
        if (fault_slow_) {
          want = std::min<size_t>(want, 256 << 10);
          usleep(10000);
        }
        ssize_t r = read(s, t->dst + t->done, want, true, err);
        if (r < 0) return err->code;
        if (r == 0) return HCCL_SUCCESS;
        t->done += static_cast<size_t>(r);
        *moved = true;
      }
    } else {
      // Staged: reduce whole elements once the local operand is ready for them.
      while (t->done < t->bytes) {
        size_t whole = s.staged / t->elem * t->elem;
        size_t can = std::min(whole, (t->input_ready() - t->done) / t->elem * t->elem);
        if (can > 0) {
          const void *srcs[3];
          const int n = t->operands(t->done, s.stage.data(), srcs);
          reduce(t->dtype, t->op, t->dst + t->done, srcs, n, can / t->elem);
          std::memmove(s.stage.data(), s.stage.data() + can, s.staged - can);
          s.staged -= can;
          t->done += can;
          *moved = true;
          continue;
        }
        size_t room = std::min(s.stage.size() - s.staged, t->bytes - t->done - s.staged);
        if (room == 0) return HCCL_SUCCESS;  // waiting for the local operand
        ssize_t r = read(s, s.stage.data() + s.staged, room, true, err);
        if (r < 0) return err->code;
        if (r == 0) return HCCL_SUCCESS;
        s.staged += static_cast<size_t>(r);
        *moved = true;
      }
    }
    if (s.rx_hdr.flags & kMsgCrc) {
      HcclResult rc = check_trailer(s, moved, err);
      if (rc != HCCL_SUCCESS) return rc;
      if (s.rx_trailer_got < sizeof(uint32_t)) return HCCL_SUCCESS;
    }
    t->complete = true;
    s.recvs.pop_front();
    s.rx_hdr_got = 0;
  }
  return HCCL_SUCCESS;
}

void TcpConnection::poll_fds(std::vector<pollfd> *fds) {
  for (const Sock &s : socks_) {
    short ev = 0;
    if (!s.recvs.empty()) ev |= POLLIN;
    if (s.holds() && s.flushing) {
      ev |= POLLOUT;
    } else if (!s.sends.empty() && !waits_to_hold(s, *s.sends.front())) {
      const Transfer *t = s.sends.front();
      const bool header_due = !t->started || s.tx_hdr_sent < sizeof(MsgHeader);
      if ((header_due && !(t->started && header_waits(s, *t))) || t->input_ready() > t->done ||
          (crc_ && t->done == t->bytes))  // the trailer is still to go
        ev |= POLLOUT;
    }
    if (ev != 0) fds->push_back({s.fd, ev, 0});
  }
}

bool TcpConnection::peer_failed(bool probe, WaitError *err) {
  if (!probe && !closed_.load(std::memory_order_acquire)) return false;  // no lock: asked at every idle turn
  std::unique_lock<std::mutex> lock(ctrl_mu_);
  // Notices (and the peer going away) arrive on the control socket; read it
  // when poll() saw it readable (probe) or on the periodic probe.
  const bool eof = !closed_ && probe && drain_notices();
  if (!closed_ && eof && !left_) {
    // Gone without a goodbye: it died. (After a goodbye, what it sent before
    // is still read from the data sockets, whose end of file fails a
    // receive that waits for more.)
    lock.unlock();
    broken(eof_err_, "waiting", err);
    lock.lock();
  }
  if (!closed_) return false;
  *err = close_err_;
  return true;
}

void TcpConnection::notify_failure(HcclResult code, const std::string &why, uint64_t seq,
                                   int culprit) {
  Notice n{kNoticeMagic, static_cast<uint32_t>(code),
           static_cast<uint32_t>(std::min<size_t>(why.size(), kMaxNoticeText)), culprit, seq};
  std::vector<char> frame(sizeof(n) + n.len);
  std::memcpy(frame.data(), &n, sizeof(n));
  std::memcpy(frame.data() + sizeof(n), why.data(), n.len);
  // Small and sent once: the socket buffer takes it whole unless the peer is gone.
  send(ctrl_fd_, frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

}  // namespace tcp
}  // namespace hccl
