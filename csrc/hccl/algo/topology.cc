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

}  // namespace hccl
