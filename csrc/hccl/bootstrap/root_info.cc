// Root info: opens the rendezvous listen socket, starts its server and writes
// the blob ranks use to find it; parses a blob received from the root.
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hccl/bootstrap/bootstrap.h"
#include "hccl/bootstrap/server.h"
#include "hccl/bootstrap/wire.h"
#include "runtime/hostrt.h"

namespace hccl {

namespace {

constexpr char kMagic[8] = {'P', 'Y', 'H', 'C', 'C', 'L', '1', '\0'};
constexpr uint32_t kVersion = 1;
constexpr int kBasePortSpan = 64;  // ports tried from HCCL_IF_BASE_PORT on

static_assert(sizeof(RootInfoView) <= HCCL_ROOT_INFO_BYTES, "root info view must fit the blob");

bool fill_random(void *buf, size_t len) {
  auto *p = static_cast<uint8_t *>(buf);
  while (len > 0) {
    ssize_t n = ::getrandom(p, len, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// The address to listen on: HCCL_IF_IP, else the first non-loopback IPv4
// address of an interface that is up, else 127.0.0.1.
HcclResult pick_address(in_addr *addr) {
  const char *env = std::getenv("HCCL_IF_IP");
  if (env != nullptr && *env != '\0') {
    if (::inet_pton(AF_INET, env, addr) != 1 || addr->s_addr == htonl(INADDR_ANY)) {
      hostrt::set_error("HcclGetRootInfo: HCCL_IF_IP=\"%s\" is not a usable IPv4 address", env);
      return HCCL_E_PARA;
    }
    return HCCL_SUCCESS;
  }
  addr->s_addr = htonl(INADDR_LOOPBACK);
  struct ifaddrs *list = nullptr;
  if (::getifaddrs(&list) != 0) return HCCL_SUCCESS;
  for (struct ifaddrs *it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    if ((it->ifa_flags & IFF_UP) == 0 || (it->ifa_flags & IFF_LOOPBACK) != 0) continue;
    in_addr a = reinterpret_cast<const sockaddr_in *>(it->ifa_addr)->sin_addr;
    if ((ntohl(a.s_addr) >> 24) == 127) continue;
    *addr = a;
    break;
  }
  ::freeifaddrs(list);
  return HCCL_SUCCESS;
}

// Port range to try: HCCL_IF_BASE_PORT and the next few, else ephemeral (0).
HcclResult pick_ports(int *first, int *count) {
  const char *env = std::getenv("HCCL_IF_BASE_PORT");
  if (env == nullptr || *env == '\0') {
    *first = 0;
    *count = 1;
    return HCCL_SUCCESS;
  }
  char *end = nullptr;
  long p = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || p < 1 || p > 65535) {
    hostrt::set_error("HcclGetRootInfo: HCCL_IF_BASE_PORT=\"%s\" is not a port number (1-65535)", env);
    return HCCL_E_PARA;
  }
  *first = static_cast<int>(p);
  *count = static_cast<int>(std::min<long>(kBasePortSpan, 65536 - p));
  return HCCL_SUCCESS;
}

// Opens the listening socket; *port receives the port actually bound.
HcclResult open_listener(in_addr addr, const char *host, int *fd_out, uint16_t *port) {
  int first, count;
  HcclResult r = pick_ports(&first, &count);
  if (r != HCCL_SUCCESS) return r;
  int last_err = 0;
  for (int i = 0; i < count; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      hostrt::set_error("HcclGetRootInfo: socket() failed: %s", bsnet::errno_text(errno).c_str());
      return HCCL_E_TCP_CONNECT;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    sa.sin_port = htons(static_cast<uint16_t>(first == 0 ? 0 : first + i));
    if (::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      socklen_t len = sizeof(sa);
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
      *port = ntohs(sa.sin_port);
      *fd_out = fd;
      return HCCL_SUCCESS;
    }
    last_err = errno;
    bsnet::close_fd(fd);
    if (last_err != EADDRINUSE) break;
  }
  if (first == 0)
    hostrt::set_error("HcclGetRootInfo: cannot listen on %s: %s", host, bsnet::errno_text(last_err).c_str());
  else
    hostrt::set_error("HcclGetRootInfo: cannot listen on %s port %d-%d (HCCL_IF_BASE_PORT): %s", host, first,
                      first + count - 1, bsnet::errno_text(last_err).c_str());
  return HCCL_E_TCP_CONNECT;
}

}  // namespace

HcclResult root_info_create(void *out_blob, size_t blob_bytes) {
  if (out_blob == nullptr) {
    hostrt::set_error("HcclGetRootInfo: rootInfo is a null pointer");
    return HCCL_E_PTR;
  }
  if (blob_bytes < sizeof(RootInfoView)) {
    hostrt::set_error("HcclGetRootInfo: root info buffer of %zu bytes is too small (need %zu)", blob_bytes,
                      sizeof(RootInfoView));
    return HCCL_E_PARA;
  }
  in_addr addr{};
  HcclResult r = pick_address(&addr);
  if (r != HCCL_SUCCESS) return r;
  char host[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr, host, sizeof(host));

  RootInfoView view{};
  std::memcpy(view.magic, kMagic, sizeof(kMagic));
  if (!fill_random(view.secret, sizeof(view.secret)) || !fill_random(view.job_id, sizeof(view.job_id))) {
    hostrt::set_error("HcclGetRootInfo: getrandom() failed: %s", bsnet::errno_text(errno).c_str());
    return HCCL_E_SYSCALL;
  }
  int fd = -1;
  uint16_t port = 0;
  r = open_listener(addr, host, &fd, &port);
  if (r != HCCL_SUCCESS) return r;

  bsnet::ServerConfig cfg;
  cfg.listen_fd = fd;
  std::memcpy(cfg.secret, view.secret, sizeof(cfg.secret));
  cfg.where = std::string(host) + ":" + std::to_string(port);
  cfg.join_timeout_s = connect_timeout_s();
  cfg.idle_timeout_s = std::max(connect_timeout_s(), exec_timeout_s());
  r = bsnet::start_server(cfg);
  if (r != HCCL_SUCCESS) return r;

  // The blob is the view in little-endian byte order, then zeros.
  std::snprintf(view.host, sizeof(view.host), "%s", host);
  view.version = htole32(kVersion);
  view.port = htole16(port);
  std::memset(out_blob, 0, blob_bytes);
  std::memcpy(out_blob, &view, sizeof(view));
  return HCCL_SUCCESS;
}

HcclResult root_info_parse(const void *blob, RootInfoView *view, const char *api) {
  if (api == nullptr) api = "HcclCommInitRootInfo";
  if (blob == nullptr || view == nullptr) {
    hostrt::set_error("%s: rootInfo is a null pointer", api);
    return HCCL_E_PTR;
  }
  RootInfoView v;
  std::memcpy(&v, blob, sizeof(v));
  if (std::memcmp(v.magic, kMagic, sizeof(kMagic)) != 0) {
    hostrt::set_error("%s: rootInfo is not a root info made by HcclGetRootInfo (bad magic)", api);
    return HCCL_E_PARA;
  }
  v.version = le32toh(v.version);
  v.port = le16toh(v.port);
  if (v.version != kVersion) {
    hostrt::set_error("%s: rootInfo has version %u, this library reads version %u",
                      api, v.version, kVersion);
    return HCCL_E_PARA;
  }
  in_addr a;
  if (std::memchr(v.host, '\0', sizeof(v.host)) == nullptr || ::inet_pton(AF_INET, v.host, &a) != 1 ||
      v.port == 0) {
    hostrt::set_error("%s: rootInfo holds no valid root address (corrupted?)", api);
    return HCCL_E_PARA;
  }
  *view = v;
  return HCCL_SUCCESS;
}

HcclResult root_info_parse(const void *blob, RootInfoView *view) {
  return root_info_parse(blob, view, nullptr);
}

std::string job_id_hex(const RootInfoView &view) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * sizeof(view.job_id));
  for (uint8_t b : view.job_id) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

}  // namespace hccl
