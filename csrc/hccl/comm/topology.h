// Which ranks share a host. "One host" means ranks that can share memory:
// the same host name, boot id and network namespace (so namespaces that
// simulate hosts on one machine count as different hosts). PYHCCL_HOST_TAG
// adds a string to a rank's identity, for tests that split one machine
// into hosts without namespaces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hccl/algo/topology.h"

namespace hccl {

// What a rank says about where it runs (part of its set-up record).
struct HostIdentity {
  char name[64];     // gethostname
  char boot_id[40];  // /proc/sys/kernel/random/boot_id
  uint64_t net_ns;   // inode of /proc/self/ns/net
  char tag[32];      // PYHCCL_HOST_TAG

  static HostIdentity of_this_process();
  bool same_host(const HostIdentity &o) const;
  // One kernel (the same boot id), so the same cores: simulated hosts (network
  // namespaces) and containers on one machine count apart as hosts, not here.
  bool same_machine(const HostIdentity &o) const;
};

// How many of `ids` run on the machine of ids[rank] (same_machine).
int ranks_on_machine(const std::vector<HostIdentity> &ids, int rank);

// Groups ranks by identity (ids[r] is rank r's).
Topology build_topology(const std::vector<HostIdentity> &ids);

}  // namespace hccl
