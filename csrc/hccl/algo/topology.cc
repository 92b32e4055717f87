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

int Topology::check_parent(int rank) const {
  const int h = host_of[rank], i = local_index[rank];
  if (i > 0) return hosts[h][i - 1];
  return h > 0 ? hosts[h - 1][0] : -1;
}

std::array<int, 2> Topology::check_children(int rank) const {
  const int h = host_of[rank], i = local_index[rank];
  const int in_host = i + 1 < static_cast<int>(hosts[h].size()) ? hosts[h][i + 1] : -1;
  const int next_host = i == 0 && h + 1 < nhosts() ? hosts[h + 1][0] : -1;
  return {in_host, next_host};
}

}  // namespace hccl
