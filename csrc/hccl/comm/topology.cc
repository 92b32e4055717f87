#include "hccl/comm/topology.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "common/env.h"
#include "common/first_line.h"

namespace hccl {
namespace {

void copy_str(char *dst, size_t cap, const std::string &s) { std::snprintf(dst, cap, "%s", s.c_str()); }

}  // namespace

HostIdentity HostIdentity::of_this_process() {
  HostIdentity id;
  std::memset(&id, 0, sizeof(id));
  char host[64] = {};
  gethostname(host, sizeof(host) - 1);
  copy_str(id.name, sizeof(id.name), host);
  copy_str(id.boot_id, sizeof(id.boot_id), common::first_line("/proc/sys/kernel/random/boot_id"));
  struct stat st;
  id.net_ns = stat("/proc/self/ns/net", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
  copy_str(id.tag, sizeof(id.tag), common::env_str("PYHCCL_HOST_TAG", ""));
  return id;
}

bool HostIdentity::same_host(const HostIdentity &o) const {
  return std::strncmp(name, o.name, sizeof(name)) == 0 &&
         std::strncmp(boot_id, o.boot_id, sizeof(boot_id)) == 0 && net_ns == o.net_ns &&
         std::strncmp(tag, o.tag, sizeof(tag)) == 0;
}

bool HostIdentity::same_machine(const HostIdentity &o) const {
  if (boot_id[0] == '\0' || o.boot_id[0] == '\0') return same_host(o);  // no /proc: what we know
  return std::strncmp(boot_id, o.boot_id, sizeof(boot_id)) == 0;
}

int ranks_on_machine(const std::vector<HostIdentity> &ids, int rank) {
  int n = 0;
  for (const HostIdentity &id : ids) n += id.same_machine(ids[rank]);
  return n;
}

Topology build_topology(const std::vector<HostIdentity> &ids) {
  Topology t;
  const int n = static_cast<int>(ids.size());
  t.host_of.assign(n, -1);
  t.local_index.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    int h = 0;
    for (; h < t.nhosts(); ++h)
      if (ids[t.hosts[h][0]].same_host(ids[r])) break;
    if (h == t.nhosts()) {
      t.hosts.emplace_back();
      std::string name(ids[r].name, strnlen(ids[r].name, sizeof(ids[r].name)));
      size_t tl = strnlen(ids[r].tag, sizeof(ids[r].tag));
      if (tl > 0) name += "/" + std::string(ids[r].tag, tl);
      t.host_names.push_back(name);
    }
    t.host_of[r] = h;
    t.local_index[r] = static_cast<int>(t.hosts[h].size());
    t.hosts[h].push_back(r);
  }
  return t;
}

}  // namespace hccl
