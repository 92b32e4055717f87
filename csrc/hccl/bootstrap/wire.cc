// Socket helpers and the frame header codec shared by the bootstrap client
// and server; the HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT readers.
#include "hccl/bootstrap/wire.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/cancel.h"
#include "common/hmac.h"
#include "hccl/bootstrap/bootstrap.h"
#include "common/log.h"

namespace hccl {
namespace bsnet {

void encode_header(uint8_t out[kHeaderBytes], uint32_t type, uint64_t len) {
  uint32_t tag_be = htobe32(kFrameTag);
  uint32_t type_be = htobe32(type);
  uint64_t len_be = htobe64(len);
  std::memcpy(out, &tag_be, 4);
  std::memcpy(out + 4, &type_be, 4);
  std::memcpy(out + 8, &len_be, 8);
}

bool decode_header(const uint8_t in[kHeaderBytes], uint32_t *type, uint64_t *len) {
  uint32_t tag_be, type_be;
  uint64_t len_be;
  std::memcpy(&tag_be, in, 4);
  std::memcpy(&type_be, in + 4, 4);
  std::memcpy(&len_be, in + 8, 8);
  *type = be32toh(type_be);
  *len = be64toh(len_be);
  return be32toh(tag_be) == kFrameTag;
}

// Both MACs bind the two nonces (in a different order), the label and the
// join request, so neither can stand in for the other or for another rank's.
static void join_mac(const char *label, size_t label_bytes, const uint8_t secret[32], const uint8_t *first,
                     const uint8_t *second, const HelloPayload &h, uint8_t mac[32]) {
  HmacSha256 m(secret, 32);
  m.update(label, label_bytes).update(first, kNonceBytes).update(second, kNonceBytes);
  m.u32(ntohl(h.nranks)).u32(ntohl(h.rank)).finish(mac);
}

void hello_mac(const uint8_t secret[32], const uint8_t challenge[kNonceBytes], const HelloPayload &h,
               uint8_t mac[32]) {
  static const char label[] = "pyhccl bootstrap hello";
  join_mac(label, sizeof(label), secret, challenge, h.nonce, h, mac);
}

void proof_mac(const uint8_t secret[32], const uint8_t challenge[kNonceBytes], const HelloPayload &h,
               uint8_t mac[32]) {
  static const char label[] = "pyhccl bootstrap proof";
  join_mac(label, sizeof(label), secret, h.nonce, challenge, h, mac);
}

// Waits until fd is ready for `events` or the deadline passes.
static Io wait_fd(int fd, short events, Clock::time_point deadline, int *err) {
  for (;;) {
    if (common::setup_cancelled()) {
      *err = ECANCELED;
      return Io::kError;
    }
    if (Clock::now() >= deadline) return Io::kTimeout;
    struct pollfd p = {fd, events, 0};
    int n = ::poll(&p, 1, poll_ms(deadline, 100));
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return Io::kError;
    }
    // POLLERR/POLLHUP: let the following send/recv report what happened.
    if (n > 0) return Io::kOk;
  }
}

Io send_all(int fd, const void *buf, size_t len, Clock::time_point deadline, int *err) {
  const char *p = static_cast<const char *>(buf);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      Io w = wait_fd(fd, POLLOUT, deadline, err);
      if (w != Io::kOk) return w;
      continue;
    }
    *err = n < 0 ? errno : EPIPE;
    return (*err == EPIPE || *err == ECONNRESET) ? Io::kClosed : Io::kError;
  }
  return Io::kOk;
}

Io recv_all(int fd, void *buf, size_t len, Clock::time_point deadline, int *err) {
  char *p = static_cast<char *>(buf);
  while (len > 0) {
    ssize_t n = ::recv(fd, p, len, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Io::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      Io w = wait_fd(fd, POLLIN, deadline, err);
      if (w != Io::kOk) return w;
      continue;
    }
    *err = errno;
    return errno == ECONNRESET ? Io::kClosed : Io::kError;
  }
  return Io::kOk;
}

}  // namespace bsnet

// Reads a positive integer number of seconds; warns once per variable.
static int env_seconds(const char *name, int def, std::atomic<bool> *warned) {
  const char *v = std::getenv(name);
  if (v == nullptr || *v == '\0') return def;
  char *end = nullptr;
  errno = 0;
  long s = std::strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || s <= 0 || s > 0x7fffffff) {
    if (!warned->exchange(true))
      PYHCCL_NOTICE(common::kBootstrap, "ignoring %s=\"%s\" (need a whole number of seconds > 0); using %d",
                   name, v, def);
    return def;
  }
  return static_cast<int>(s);
}

int connect_timeout_s() {
  static std::atomic<bool> warned{false};
  return env_seconds("HCCL_CONNECT_TIMEOUT", 120, &warned);
}

int exec_timeout_s() {
  static std::atomic<bool> warned{false};
  return env_seconds("HCCL_EXEC_TIMEOUT", 1836, &warned);
}

}  // namespace hccl
