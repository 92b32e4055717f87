// acltdtCreateComm / acltdtDestroyComm and the getters: the communicator is
// HcclCommInitRootInfo's, with the root info from the group rendezvous.
#include <mutex>
#include <new>
#include <set>

#include "hccl/codes.h"
#include "hccl/launch/rendezvous.h"
#include "hccl/tdt/tdt.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace tdt {

namespace {

// Live handles, so that a stale or garbage handle is an error, not a crash.
std::mutex *g_mu = new std::mutex;
std::set<acltdtComm> *g_live = new std::set<acltdtComm>;

const char *code_name(HcclResult r) {
  switch (r) {
    case HCCL_E_PARA: return "HCCL_E_PARA";
    case HCCL_E_PTR: return "HCCL_E_PTR";
    case HCCL_E_MEMORY: return "HCCL_E_MEMORY";
    case HCCL_E_INTERNAL: return "HCCL_E_INTERNAL";
    case HCCL_E_NOT_SUPPORT: return "HCCL_E_NOT_SUPPORT";
    case HCCL_E_NOT_FOUND: return "HCCL_E_NOT_FOUND";
    case HCCL_E_UNAVAIL: return "HCCL_E_UNAVAIL";
    case HCCL_E_SYSCALL: return "HCCL_E_SYSCALL";
    case HCCL_E_TIMEOUT: return "HCCL_E_TIMEOUT";
    case HCCL_E_TCP_CONNECT: return "HCCL_E_TCP_CONNECT";
    case HCCL_E_TCP_TRANSFER: return "HCCL_E_TCP_TRANSFER";
    case HCCL_E_RUNTIME: return "HCCL_E_RUNTIME";
    case HCCL_E_REMOTE: return "HCCL_E_REMOTE";
    case HCCL_E_OOM: return "HCCL_E_OOM";
    default: return "HCCL error";
  }
}

}  // namespace

aclError fail(const char *api, HcclResult r) {
  std::string msg = hostrt::last_error();
  return HCCL_FAIL(acl_code(r, AclUse::kApi), "%s: %s (%s %d)", api, msg.empty() ? "failed" : msg.c_str(), code_name(r), static_cast<int>(r));
}

aclError check_comm(acltdtComm comm, const char *api) {
  if (comm == nullptr) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: comm is a null pointer", api);
  }
  std::lock_guard<std::mutex> lock(*g_mu);
  if (g_live->count(comm) == 0) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: comm (%p) is not a live acltdtComm (destroyed already?)", api, static_cast<void *>(comm));
  }
  return ACL_SUCCESS;
}

}  // namespace tdt
}  // namespace hccl

using hccl::tdt::check_comm;
using hccl::tdt::fail;

extern "C" {

aclError acltdtCreateComm(acltdtComm *comm, int32_t worldSize, int32_t rankId, const char *group,
                          aclrtStream stream) {
  const char *api = "acltdtCreateComm";
  if (comm == nullptr) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: comm is a null pointer", api);
  }
  *comm = nullptr;
  if (worldSize < 1 || worldSize > 65536) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: worldSize (%d) must be between 1 and 65536", api, worldSize);
  }
  if (rankId < 0 || rankId >= worldSize) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: rankId (%d) must be in [0, worldSize) = [0, %d)", api, rankId, worldSize);
  }
  if (stream != nullptr) {  // a live stream of the current context, checked now rather than at first use
    aclError e = ACL_SUCCESS;
    if (hostrt::resolve_stream(stream, api, &e) == nullptr) return e;
  }
  auto *c = new (std::nothrow) acltdtCommImpl;
  if (c == nullptr) {
    return HCCL_FAIL(ACL_ERROR_BAD_ALLOC, "%s: out of memory", api);
  }
  HcclRootInfo root;
  std::string note;
  hccl::launch::GroupServer *server = nullptr;
  HcclResult r = hccl::launch::rendezvous_open(api, group, static_cast<uint32_t>(worldSize),
                                               static_cast<uint32_t>(rankId), &root, &server, &note);
  if (r != HCCL_SUCCESS) {
    delete c;
    return hccl::acl_code(r, hccl::AclUse::kApi);
  }
  // Same handle as PyhcclRendezvousOpen's: one way to close it.
  PyhcclRendezvous rdv = hccl::launch::make_handle(server);
  HcclResult hr = rdv == nullptr ? HCCL_E_MEMORY
                                 : HcclCommInitRootInfo(static_cast<uint32_t>(worldSize), &root,
                                                        static_cast<uint32_t>(rankId), &c->hccl);
  if (hr != HCCL_SUCCESS) {
    std::string msg = hostrt::last_error();
    if (!note.empty()) msg += " [" + note + "]";
    hostrt::set_error("group '%s', rank %d of %d: %s", group, rankId, worldSize, msg.c_str());
    PyhcclRendezvousClose(rdv);
    delete c;
    return fail(api, hr);
  }
  c->rendezvous = rdv;
  c->stream = stream;
  c->rank = rankId;
  c->size = worldSize;
  c->group = group;
  {
    std::lock_guard<std::mutex> lock(*hccl::tdt::g_mu);
    hccl::tdt::g_live->insert(c);
  }
  *comm = c;
  return ACL_SUCCESS;
}

aclError acltdtDestroyComm(acltdtComm comm) {
  const char *api = "acltdtDestroyComm";
  {
    // Unregistered first: a second destroy (or a racing one) is an error, not a double free.
    if (comm == nullptr) {
      return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: comm is a null pointer", api);
    }
    std::lock_guard<std::mutex> lock(*hccl::tdt::g_mu);
    if (hccl::tdt::g_live->erase(comm) == 0) {
      return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: comm (%p) is not a live acltdtComm (destroyed already?)", api,
                                                static_cast<void *>(comm));
    }
  }
  HcclResult r = HcclCommDestroy(comm->hccl);
  PyhcclRendezvousClose(comm->rendezvous);  // rank 0: the group's name is free again
  delete comm;
  return r == HCCL_SUCCESS ? ACL_SUCCESS : fail(api, r);
}

aclError acltdtCommGetRankId(acltdtComm comm, int32_t *rankId) {
  const char *api = "acltdtCommGetRankId";
  aclError e = check_comm(comm, api);
  if (e != ACL_SUCCESS) return e;
  if (rankId == nullptr) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: rankId is a null pointer", api);
  }
  *rankId = comm->rank;
  return ACL_SUCCESS;
}

aclError acltdtCommGetWorldSize(acltdtComm comm, int32_t *worldSize) {
  const char *api = "acltdtCommGetWorldSize";
  aclError e = check_comm(comm, api);
  if (e != ACL_SUCCESS) return e;
  if (worldSize == nullptr) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: worldSize is a null pointer", api);
  }
  *worldSize = comm->size;
  return ACL_SUCCESS;
}

aclError acltdtCommGetHcclComm(acltdtComm comm, void **hcclComm) {
  const char *api = "acltdtCommGetHcclComm";
  aclError e = check_comm(comm, api);
  if (e != ACL_SUCCESS) return e;
  if (hcclComm == nullptr) {
    return HCCL_FAIL(ACL_ERROR_INVALID_PARAM, "%s: hcclComm is a null pointer", api);
  }
  *hcclComm = comm->hccl;
  return ACL_SUCCESS;
}

}  // extern "C"
