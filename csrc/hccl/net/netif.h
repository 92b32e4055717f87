// Which local address the bootstrap and the TCP transport listen on, chosen
// as CANN's HCCL does from the environment:
//   HCCL_IF_IP          a numeric address (IPv4 or IPv6): use it;
//   HCCL_SOCKET_IFNAME  comma list of interface names: prefixes by default,
//                       "=a,b" exact names, "^a,b" every interface but these;
//   HCCL_SOCKET_FAMILY  AF_INET or AF_INET6: only addresses of that family;
// otherwise the first non-loopback interface that is up (IPv4 before IPv6),
// else the loopback address.
#pragma once

#include <string>

#include "hccl/hccl_types.h"
#include "hccl/net/addr.h"

namespace hccl {
namespace net {

struct LocalAddr {
  SockAddr addr;       // port 0
  std::string ifname;  // "" when HCCL_IF_IP chose the address
  std::string why;     // which rule chose it, for log lines and errors
};

// E_PARA with a message naming `api` and the variable when the environment
// asks for something that does not exist here.
HcclResult choose_local_addr(const char *api, LocalAddr *out);

// Whether an interface name matches an HCCL_SOCKET_IFNAME-style list.
bool ifname_matches(const std::string &spec, const std::string &name);

}  // namespace net
}  // namespace hccl
