#include "hccl/algo/topology.h"

namespace hccl {

bool Topology::even() const {
  for (const auto &h : hosts)
    if (h.size() != hosts[0].size()) return false;
  return true;
}

std::vector<int> Topology::host_order() const {
  std::vector<int> order;
  for (const auto &h : hosts) order.insert(order.end(), h.begin(), h.end());
  return order;
}

int Topology::before_in_host_order(int rank) const {
  const int h = host_of[rank], i = local_index[rank];
  if (i > 0) return hosts[h][i - 1];
  return h > 0 ? hosts[h - 1].back() : -1;
}

int Topology::after_in_host_order(int rank) const {
  const int h = host_of[rank], i = local_index[rank];
  if (i + 1 < static_cast<int>(hosts[h].size())) return hosts[h][i + 1];
  return h + 1 < nhosts() ? hosts[h + 1][0] : -1;
}

}  // namespace hccl
