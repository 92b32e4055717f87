#include "hccl/net/addr.h"

#include <arpa/inet.h>
#include <net/if.h>

#include <cstring>

namespace hccl {
namespace net {

uint16_t SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in *>(&ss)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6 *>(&ss)->sin6_port);
  return 0;
}

void SockAddr::set_port(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in *>(&ss)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port = htons(port);
}

std::string SockAddr::host() const {
  char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(&ss)->sin_addr, buf, sizeof(buf));
    return buf;
  }
  if (family() == AF_INET6) {
    const auto *s6 = reinterpret_cast<const sockaddr_in6 *>(&ss);
    inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof(buf));
    std::string h = buf;
    char ifname[IF_NAMESIZE] = {};
    if (s6->sin6_scope_id != 0 && if_indextoname(s6->sin6_scope_id, ifname) != nullptr)
      h += std::string("%") + ifname;
    return h;
  }
  return "?";
}

std::string SockAddr::str() const {
  if (family() == AF_INET6) return "[" + host() + "]:" + std::to_string(port());
  return host() + ":" + std::to_string(port());
}

bool parse_addr(const std::string &host, uint16_t port, SockAddr *out) {
  SockAddr a;
  auto *s4 = reinterpret_cast<sockaddr_in *>(&a.ss);
  if (inet_pton(AF_INET, host.c_str(), &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons(port);
    a.len = sizeof(sockaddr_in);
    *out = a;
    return true;
  }
  std::string h = host, scope;
  size_t pct = h.find('%');
  if (pct != std::string::npos) {
    scope = h.substr(pct + 1);
    h.resize(pct);
  }
  auto *s6 = reinterpret_cast<sockaddr_in6 *>(&a.ss);
  if (inet_pton(AF_INET6, h.c_str(), &s6->sin6_addr) != 1) return false;
  s6->sin6_family = AF_INET6;
  s6->sin6_port = htons(port);
  if (!scope.empty()) {
    s6->sin6_scope_id = if_nametoindex(scope.c_str());
    if (s6->sin6_scope_id == 0) return false;
  }
  a.len = sizeof(sockaddr_in6);
  *out = a;
  return true;
}

}  // namespace net
}  // namespace hccl
