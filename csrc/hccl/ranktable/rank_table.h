// CANN's rank table: a JSON file describing a job's servers and devices
// (docs/C_API.md, "Rank table files"). Versions 1.0 and 1.2:
//   {"status": "completed", "version": "1.0", "server_count": "2",
//    "server_list": [{"server_id": "node0", "host_ip": "10.0.0.1",
//                     "device": [{"device_id": "0", "device_ip": "192.168.1.8",
//                                 "rank_id": "0"}, ...]}, ...]}
// 1.2 adds per device super_device_id, device_port, backup_device_ip,
// backup_device_port, host_port, and a super_pod_list. Numbers are written
// as strings (JSON numbers are accepted too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hccl/hccl_types.h"

namespace hccl {

struct RankTable {
  struct Device {
    uint32_t device_id = 0;
    uint32_t rank = 0;
    std::string device_ip;  // "" when absent
    int host_port = -1;     // 1.2: the port of the host NIC for this rank (-1: absent)
  };
  struct Server {
    std::string id;
    std::string host_ip;  // "" when absent
    std::vector<Device> devices;
  };
  std::string version;
  std::vector<Server> servers;
  uint32_t nranks = 0;
  // rank -> (server index, device index)
  std::vector<std::pair<uint32_t, uint32_t>> where;
};

// Reads and validates the file at `path`. E_OPEN_FILE_FAILURE when it cannot
// be read, E_PARA when it is not a valid rank table; the message names `api`,
// the file, the field (server_list[1].device[0].rank_id), the rank when known
// and the line and column. *contents receives the file's bytes.
HcclResult load_rank_table(const char *path, const char *api, RankTable *out,
                           std::string *contents);

}  // namespace hccl
