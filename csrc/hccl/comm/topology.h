// Which ranks share a host. "One host" means ranks that can share memory:
// the same host name, boot id and network namespace (so namespaces that
// simulate hosts on one machine count as different hosts). PYHCCL_HOST_TAG
// adds a string to a rank's identity, for tests that split one machine
// into hosts without namespaces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hccl {

// What a rank says about where it runs (part of its set-up record).
struct HostIdentity {
  char name[64];     // gethostname
  char boot_id[40];  // /proc/sys/kernel/random/boot_id
  uint64_t net_ns;   // inode of /proc/self/ns/net
  char tag[32];      // PYHCCL_HOST_TAG

  static HostIdentity of_this_process();
  bool same_host(const HostIdentity &o) const;
};

struct Topology {
  std::vector<int> host_of;              // by rank: host index
  std::vector<int> local_index;          // by rank: index among its host's ranks
  std::vector<std::vector<int>> hosts;   // by host: its ranks, ascending; hosts ordered by lowest rank
  std::vector<std::string> host_names;   // by host

  // Groups ranks by identity (ids[r] is rank r's).
  static Topology build(const std::vector<HostIdentity> &ids);

  int nhosts() const { return static_cast<int>(hosts.size()); }
  const std::vector<int> &local(int rank) const { return hosts[host_of[rank]]; }
  bool same_host(int a, int b) const { return host_of[a] == host_of[b]; }
  // Every host has the same number of ranks.
  bool even() const;
  // The rank with local index `i` on host `h`.
  int rank_at(int h, int i) const { return hosts[h][i]; }
  // All ranks ordered host by host (a ring that crosses each host boundary once).
  std::vector<int> host_order() const;
};

}  // namespace hccl
