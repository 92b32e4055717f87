#include "hccl/net/netif.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstring>
#include <vector>

#include "common/env.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace net {
namespace {

std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
    i = j + 1;
  }
  return out;
}

// -1: no restriction; else AF_INET or AF_INET6.
HcclResult read_family(const char *api, int *family) {
  const char *f = common::env_str("HCCL_SOCKET_FAMILY", "");
  if (*f == '\0') {
    *family = -1;
  } else if (std::strcmp(f, "AF_INET") == 0) {
    *family = AF_INET;
  } else if (std::strcmp(f, "AF_INET6") == 0) {
    *family = AF_INET6;
  } else {
    return HCCL_FAIL(HCCL_E_PARA, "%s: HCCL_SOCKET_FAMILY=\"%s\" must be AF_INET or AF_INET6", api, f);
  }
  return HCCL_SUCCESS;
}

bool is_link_local6(const sockaddr_in6 *s6) { return IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr); }

}  // namespace

bool ifname_matches(const std::string &spec, const std::string &name) {
  std::string s = spec;
  bool exclude = false, exact = false;
  if (!s.empty() && s[0] == '^') {
    exclude = true;
    s.erase(0, 1);
  }
  if (!s.empty() && s[0] == '=') {
    exact = true;
    s.erase(0, 1);
  }
  bool hit = false;
  for (const std::string &item : split_list(s))
    if (exact ? name == item : name.compare(0, item.size(), item) == 0) hit = true;
  return exclude ? !hit : hit;
}

HcclResult choose_local_addr(const char *api, LocalAddr *out) {
  int family = -1;
  HcclResult r = read_family(api, &family);
  if (r != HCCL_SUCCESS) return r;

  const char *ip = common::env_str("HCCL_IF_IP", "");
  if (*ip != '\0') {
    SockAddr a;
    if (!parse_addr(ip, 0, &a)) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: HCCL_IF_IP=\"%s\" is not a numeric IPv4 or IPv6 address", api, ip);
    }
    if (family != -1 && a.family() != family) {
      return HCCL_FAIL(HCCL_E_PARA, "%s: HCCL_IF_IP=\"%s\" is not of HCCL_SOCKET_FAMILY %s", api, ip,
                                    family == AF_INET ? "AF_INET" : "AF_INET6");
    }
    out->addr = a;
    out->ifname.clear();
    out->why = std::string("HCCL_IF_IP=") + ip;
    return HCCL_SUCCESS;
  }

  const std::string spec = common::env_str("HCCL_SOCKET_IFNAME", "");
  struct ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0) list = nullptr;
  // Candidates in interface order; rank: 0 = IPv4, 1 = global IPv6, 2 = link-local IPv6.
  const ifaddrs *best = nullptr;
  int best_rank = 3;
  for (const ifaddrs *it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || (it->ifa_flags & IFF_UP) == 0) continue;
    int fam = it->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (family != -1 && fam != family) continue;
    if (spec.empty()) {
      if ((it->ifa_flags & IFF_LOOPBACK) != 0) continue;
    } else if (!ifname_matches(spec, it->ifa_name)) {
      continue;
    }
    int rank = fam == AF_INET ? 0
               : is_link_local6(reinterpret_cast<const sockaddr_in6 *>(it->ifa_addr)) ? 2 : 1;
    if (rank < best_rank) {
      best = it;
      best_rank = rank;
    }
  }
  bool found = best != nullptr;
  if (found) {
    SockAddr a;
    size_t len = best->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&a.ss, best->ifa_addr, len);
    a.len = static_cast<socklen_t>(len);
    if (a.family() == AF_INET6 && !is_link_local6(reinterpret_cast<sockaddr_in6 *>(&a.ss)))
      reinterpret_cast<sockaddr_in6 *>(&a.ss)->sin6_scope_id = 0;
    a.set_port(0);
    out->addr = a;
    out->ifname = best->ifa_name;
    out->why = spec.empty() ? "first interface that is up" : "HCCL_SOCKET_IFNAME=" + spec;
  }
  if (list != nullptr) freeifaddrs(list);
  if (found) return HCCL_SUCCESS;
  if (!spec.empty()) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: no interface that is up matches HCCL_SOCKET_IFNAME=\"%s\"%s", api,
                                  spec.c_str(),
                                  family == -1 ? "" : family == AF_INET ? " with an AF_INET address"
                                                                        : " with an AF_INET6 address");
  }
  // Nothing but loopback: a single-host job still works.
  parse_addr(family == AF_INET6 ? "::1" : "127.0.0.1", 0, &out->addr);
  out->ifname = "lo";
  out->why = "loopback (no other interface is up)";
  return HCCL_SUCCESS;
}

}  // namespace net
}  // namespace hccl
