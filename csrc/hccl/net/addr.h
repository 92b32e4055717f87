// Socket addresses of either family (IPv4 or IPv6), as the bootstrap and the
// TCP transport exchange them: a numeric host string plus a port.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace hccl {
namespace net {

struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;

  int family() const { return ss.ss_family; }
  const sockaddr *sa() const { return reinterpret_cast<const sockaddr *>(&ss); }
  sockaddr *sa() { return reinterpret_cast<sockaddr *>(&ss); }
  uint16_t port() const;
  void set_port(uint16_t port);
  // Numeric host ("198.18.0.10", "fe80::1%veth0" for link-local) without the port.
  std::string host() const;
  // "host:port", with brackets around IPv6 hosts: "[::1]:60001".
  std::string str() const;
};

// Parses a numeric host (IPv4 or IPv6, an IPv6 scope "%ifname" allowed) and a
// port; false when `host` is not a numeric address.
bool parse_addr(const std::string &host, uint16_t port, SockAddr *out);

}  // namespace net
}  // namespace hccl
