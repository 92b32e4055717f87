// Ranks started by hand (no MPI, no shared file): rank 0 makes the root info
// and serves it to the other ranks of a named group; they find rank 0 by the
// group name alone (see PyhcclRendezvousOpen in hccl/hccl_host.h and
// docs/LAUNCH.md). Only the root info goes through here; the ranks then meet
// in the bootstrap (csrc/hccl/bootstrap), which checks rank numbers, world
// sizes and missing ranks for the whole job.
//
// Where rank 0 listens (RendezvousAddr):
//   MASTER_ADDR + MASTER_PORT set: TCP, port MASTER_PORT on every address;
//   otherwise: the abstract unix socket "pyhccl-group/<uid>/<group>" (a hash
//   for long names) in this network namespace, which vanishes with rank 0.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "hccl/hccl_host.h"
#include "hccl/hccl_types.h"

namespace hccl {
namespace launch {

constexpr size_t kMaxGroupBytes = 127;  // COMM_NAME_MAX_LENGTH - 1
constexpr size_t kMaxHostBytes = 64;

struct RendezvousAddr {
  bool tcp = false;
  sockaddr_storage ss{};  // unix: the abstract name; tcp: rank 0's listen address
  socklen_t len = 0;
  std::string master;     // tcp: "MASTER_ADDR:MASTER_PORT" as given
  std::string text;       // for messages: "this host (user 1000)" or "10.0.0.1:29500"
};

// Where the group meets, from the environment; E_PARA naming `api` and the
// variable when MASTER_ADDR/MASTER_PORT are unusable. `listen` selects rank
// 0's side (the wildcard address of MASTER_ADDR's family) over the dialling side.
HcclResult rendezvous_addr(const char *api, const std::string &group, bool listen, RendezvousAddr *out);

// Rank 0's server of one group (rendezvous_server.cc).
class GroupServer;

// Binds the group's address, then makes the root info (HcclGetRootInfo's
// root_info_create) into `root_info` (HCCL_ROOT_INFO_BYTES) and serves it to
// the group's other ranks from a thread of its own. E_UNAVAIL when the
// address is taken (*in_use then true, no message set), else an error with a
// message.
HcclResult server_start(const char *api, const RendezvousAddr &addr, const std::string &group,
                        uint32_t nranks, void *root_info, GroupServer **out, bool *in_use);
// Stops the thread and closes the socket (nullptr is fine).
void server_stop(GroupServer *s);

// A rank's side: asks the group's rank 0 for the root info, waiting for it to
// appear until HCCL_CONNECT_TIMEOUT. On success *note may hold a remark of the
// server's for a later error message (e.g. that another process has claimed
// the same rank).
// `once`: a single try of a few seconds, for a rank 0 that found the group
// taken and asks the process that has it.
HcclResult fetch_root_info(const char *api, const RendezvousAddr &addr, const std::string &group,
                           uint32_t nranks, uint32_t rank, bool once, void *root_info, std::string *note);

// The whole of PyhcclRendezvousOpen: checks the arguments, then rank 0 opens
// the group (*server) and the others fetch the root info (*server = nullptr).
HcclResult rendezvous_open(const char *api, const char *group, uint32_t nranks, uint32_t rank,
                           void *root_info, GroupServer **server, std::string *note);

// The PyhcclRendezvous handle of an open group (server: rank 0's, else
// nullptr); when out of memory, stops the server, sets a message and
// returns nullptr.
PyhcclRendezvous make_handle(GroupServer *server);

}  // namespace launch
}  // namespace hccl
