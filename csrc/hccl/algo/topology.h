// Which ranks share a host, as the algorithms see it (built by
// comm/topology.cc from every rank's HostIdentity).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace hccl {

struct Topology {
  std::vector<int> host_of;              // by rank: host index
  std::vector<int> local_index;          // by rank: index among its host's ranks
  std::vector<std::vector<int>> hosts;   // by host: its ranks, ascending; hosts ordered by lowest rank
  std::vector<std::string> host_names;   // by host

  int nhosts() const { return static_cast<int>(hosts.size()); }
  const std::vector<int> &local(int rank) const { return hosts[host_of[rank]]; }
  bool same_host(int a, int b) const { return host_of[a] == host_of[b]; }
  // Every host has the same number of ranks.
  bool even() const;
  // The rank with local index `i` on host `h`.
  int rank_at(int h, int i) const { return hosts[h][i]; }
  // All ranks ordered host by host (a ring that crosses each host boundary once).
  std::vector<int> host_order() const;
  // The signature check's tree (algo/ctx.h): within each host the ranks in
  // order, one after the other; between hosts, each host's first rank to the
  // next host's. check_parent: -1 at rank 0's. check_children: -1 where none.
  int check_parent(int rank) const;
  std::array<int, 2> check_children(int rank) const;
};

}  // namespace hccl
