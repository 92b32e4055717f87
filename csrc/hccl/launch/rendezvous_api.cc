// PyhcclRendezvousOpen / PyhcclRendezvousClose (hccl/hccl_host.h), and the
// same steps for acltdtCreateComm.
#include <cstring>
#include <new>
#include <string>

#include "common/cancel.h"
#include "common/log.h"
#include "hccl/api/checks.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/hccl_host.h"
#include "hccl/launch/rendezvous.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

struct PyhcclRendezvousImpl {
  hccl::launch::GroupServer *server = nullptr;  // rank 0 only
};

namespace hccl {
namespace launch {

HcclResult rendezvous_open(const char *api, const char *group, uint32_t nranks, uint32_t rank, void *root_info,
                           GroupServer **server, std::string *note) {
  HCCL_TRY(check_ptr(group, api, "group"));
  HCCL_TRY(check_ptr(root_info, api, "rootInfo"));
  size_t len = strnlen(group, kMaxGroupBytes + 1);
  if (len == 0 || len > kMaxGroupBytes) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: group must be a name of 1 to %zu bytes (got %s)", api, kMaxGroupBytes,
                                  len == 0 ? "an empty string" : "a longer one");
  }
  if (nranks == 0 || nranks > 65536) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: nRanks (%u) must be between 1 and 65536", api, nranks);
  }
  HCCL_TRY(check_rank(rank, nranks, api, "rank"));
  const std::string name(group, len);
  *server = nullptr;
  note->clear();
  RendezvousAddr addr;
  HCCL_TRY(rendezvous_addr(api, name, rank == 0, &addr));
  if (rank != 0) return fetch_root_info(api, addr, name, nranks, rank, false, root_info, note);

  bool in_use = false;
  HcclResult r = server_start(api, addr, name, nranks, root_info, server, &in_use);
  if (!in_use) return r;
  // Someone has the group: ask it, so the message says who. While its group
  // forms this process gets its root info and the bootstrap fails that job
  // too ("rank 0 joined twice"): two jobs must never share a communicator.
  RendezvousAddr dial;
  HCCL_TRY(rendezvous_addr(api, name, false, &dial));
  r = fetch_root_info(api, dial, name, nranks, 0, true, root_info, note);
  if (r == HCCL_SUCCESS && note->empty())
    *note = "group '" + name + "' was already open in another process";
  return r;
}

PyhcclRendezvous make_handle(GroupServer *server) {
  auto *h = new (std::nothrow) PyhcclRendezvousImpl;
  if (h == nullptr) {
    server_stop(server);
    hostrt::set_error("out of memory");
    return nullptr;
  }
  h->server = server;
  return h;
}

}  // namespace launch
}  // namespace hccl

extern "C" {

HcclResult PyhcclRendezvousOpen(const char *group, uint32_t nRanks, uint32_t rank, HcclRootInfo *rootInfo,
                                PyhcclRendezvous *rendezvous) {
  const char *api = "PyhcclRendezvousOpen";
  HCCL_TRY(hccl::check_ptr(rendezvous, api, "rendezvous"));
  *rendezvous = nullptr;
  auto *h = new (std::nothrow) PyhcclRendezvousImpl;
  if (h == nullptr) {
    return HCCL_FAIL(HCCL_E_MEMORY, "%s: out of memory", api);
  }
  std::string note;
  common::setup_begin();  // PyhcclCancelSetups ends the wait
  HcclResult r = hccl::launch::rendezvous_open(api, group, nRanks, rank, rootInfo, &h->server, &note);
  common::setup_end();
  if (r != HCCL_SUCCESS) {
    delete h;
    return r;
  }
  // The set-up that follows will fail; this says which processes collided.
  if (!note.empty()) PYHCCL_LOG(common::kError, common::kBootstrap, "%s: %s", api, note.c_str());
  *rendezvous = h;
  return HCCL_SUCCESS;
}

HcclResult PyhcclRendezvousClose(PyhcclRendezvous rendezvous) {
  if (rendezvous == nullptr) return HCCL_SUCCESS;
  hccl::launch::server_stop(rendezvous->server);
  delete rendezvous;
  return HCCL_SUCCESS;
}

}  // extern "C"
