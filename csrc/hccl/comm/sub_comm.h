// Communicators built from other communicators or from files:
//   sub_comm.cc   HcclCreateSubCommConfig (a group of an existing communicator)
//   init_all.cc   HcclCommInitAll (one process, one rank per device)
//   rank_table.cc HcclCommInitClusterInfo[Config] (CANN's JSON rank table)
#pragma once

#include <cstdint>
#include <memory>

#include "hccl/comm/comm.h"

namespace hccl {

// Collective over the whole parent; see sub_comm.cc. *out is NULL on ranks
// that are not members (rank_ids == NULL).
HcclResult sub_comm_create(const std::shared_ptr<Comm> &parent, uint32_t rank_num,
                           const uint32_t *rank_ids, uint64_t sub_id, uint32_t sub_rank,
                           const HcclCommConfig *config, HcclComm *out, const char *api);

// ndev communicators of one job in this process, rank i on devices[i], each
// set up on its own thread.
HcclResult comm_init_all(uint32_t ndev, const int32_t *devices, HcclComm *comms, const char *api);

// This process's rank of the job the rank table file at `path` describes.
HcclResult comm_init_rank_table(const char *path, uint32_t rank, const HcclCommConfig *config,
                                HcclComm *out, const char *api);

}  // namespace hccl
