// Where a group's ranks meet: MASTER_ADDR:MASTER_PORT when set (torch's
// convention), else an abstract unix socket named after the user and group.
#include <netdb.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/env.h"
#include "hccl/launch/rendezvous.h"
#include "hccl/net/addr.h"
#include "common/sha256.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace launch {

namespace {

HcclResult unix_addr(const std::string &group, RendezvousAddr *out) {
  std::string name = "pyhccl-group/" + std::to_string(getuid()) + "/";
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  // sun_path[0] = '\0' makes the name abstract; long names become their hash.
  if (1 + name.size() + group.size() > sizeof(un.sun_path)) {
    uint8_t d[32];
    Sha256 h;
    h.update(group.data(), group.size());
    h.finish(d);
    char hex[65];
    for (int i = 0; i < 32; ++i) std::snprintf(hex + 2 * i, 3, "%02x", d[i]);
    name += std::string("sha256:") + hex;
  } else {
    name += group;
  }
  std::memcpy(un.sun_path + 1, name.data(), name.size());
  out->tcp = false;
  std::memset(&out->ss, 0, sizeof(out->ss));
  std::memcpy(&out->ss, &un, sizeof(un));
  out->len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  out->text = "this host (user " + std::to_string(getuid()) + ")";
  return HCCL_SUCCESS;
}

}  // namespace

HcclResult rendezvous_addr(const char *api, const std::string &group, bool listen, RendezvousAddr *out) {
  const char *host = std::getenv("MASTER_ADDR");
  const char *port_s = std::getenv("MASTER_PORT");
  bool have_host = host != nullptr && *host != '\0', have_port = port_s != nullptr && *port_s != '\0';
  if (!have_host && !have_port) return unix_addr(group, out);
  if (!have_host || !have_port) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: %s is set but %s is not: set both (rank 0's address and port) for ranks on "
                                  "several hosts, or neither for ranks on one host",
                                  api, have_host ? "MASTER_ADDR" : "MASTER_PORT", have_host ? "MASTER_PORT" : "MASTER_ADDR");
  }
  int64_t port = 0;
  if (!common::parse_int64(port_s, &port) || port < 1 || port > 65535) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: MASTER_PORT (\"%s\") is not a port number (1 to 65535)", api, port_s);
  }
  // torchrun's agent keeps its own store on MASTER_PORT (and says so to its
  // workers): the group then meets on the next port.
  const char *agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  bool torchrun = agent != nullptr && (std::strcmp(agent, "True") == 0 || std::strcmp(agent, "1") == 0);
  if (torchrun && ++port > 65535) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: MASTER_PORT (65535) has no next port for pyhccl beside torchrun's store", api);
  }
  // MASTER_ADDR may be a host name, as with torch.
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_family = AF_UNSPEC;
  int gai = ::getaddrinfo(host, nullptr, &hints, &res);
  if (gai != 0 || res == nullptr) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: MASTER_ADDR (\"%s\") does not resolve: %s", api, host, gai_strerror(gai));
  }
  addrinfo *pick = res;  // IPv4 first, as torch's store does
  for (addrinfo *a = res; a != nullptr; a = a->ai_next)
    if (a->ai_family == AF_INET) { pick = a; break; }
  net::SockAddr sa;
  std::memcpy(&sa.ss, pick->ai_addr, pick->ai_addrlen);
  sa.len = pick->ai_addrlen;
  ::freeaddrinfo(res);
  if (listen) {  // rank 0 listens on every address of that family
    int fam = sa.family();
    sa = net::SockAddr();
    sa.ss.ss_family = static_cast<sa_family_t>(fam);
    sa.len = fam == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  }
  sa.set_port(static_cast<uint16_t>(port));
  out->tcp = true;
  out->ss = sa.ss;
  out->len = sa.len;
  out->master = std::string(host) + ":" + std::to_string(port);
  out->text = std::string(torchrun ? "MASTER_ADDR:MASTER_PORT+1 (" : "MASTER_ADDR:MASTER_PORT (") + out->master + ")";
  return HCCL_SUCCESS;
}

}  // namespace launch
}  // namespace hccl
