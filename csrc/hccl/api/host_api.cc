// pyhccl's own extensions (include/hccl/hccl_host.h).
#include <cstdio>
#include <cstring>
#include <vector>
#include <string>

#include "common/cancel.h"
#include "hccl/api/checks.h"
#include "hccl/comm/op_errors.h"
#include "hccl/hccl_host.h"
#include "hccl/transport/engine.h"
#include "hccl/fail.h"

using hccl::Comm;

namespace {

HcclResult copy_name(const std::string &s, char *name, uint32_t len, const char *api) {
  if (len == 0 || s.size() >= len) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: nameLen (%u) is too small for \"%s\" (%zu bytes and a NUL)", api, len,
                                  s.c_str(), s.size());
  }
  std::memcpy(name, s.c_str(), s.size() + 1);
  return HCCL_SUCCESS;
}

}  // namespace

extern "C" {

HcclResult PyhcclCommGetTopology(HcclComm comm, PyhcclTopology *topo, uint32_t *hostOfRank,
                                 uint32_t rankCount) {
  const char *api = "PyhcclCommGetTopology";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_ptr(topo, api, "topo"));
  if (hostOfRank != nullptr && rankCount != c->nranks) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rankCount (%u) must be the communicator's rank count (%u)", api,
                                  rankCount, c->nranks);
  }
  const hccl::Topology &t = c->topo;
  topo->nHosts = static_cast<uint32_t>(t.nhosts());
  topo->hostId = static_cast<uint32_t>(t.host_of[c->rank]);
  topo->localRank = static_cast<uint32_t>(t.local_index[c->rank]);
  topo->localSize = static_cast<uint32_t>(t.local(c->rank).size());
  if (hostOfRank != nullptr)
    for (uint32_t r = 0; r < c->nranks; ++r) hostOfRank[r] = static_cast<uint32_t>(t.host_of[r]);
  return HCCL_SUCCESS;
}

HcclResult PyhcclCommGetHostName(HcclComm comm, uint32_t hostId, char *name, uint32_t nameLen) {
  const char *api = "PyhcclCommGetHostName";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_ptr(name, api, "name"));
  if (hostId >= static_cast<uint32_t>(c->topo.nhosts())) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: hostId (%u) is out of range for %d hosts", api, hostId, c->topo.nhosts());
  }
  return copy_name(c->topo.host_names[hostId], name, nameLen, api);
}

HcclResult PyhcclCommGetTransport(HcclComm comm, uint32_t peer, char *name, uint32_t nameLen) {
  const char *api = "PyhcclCommGetTransport";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_ptr(name, api, "name"));
  HCCL_TRY(hccl::check_rank(peer, c->nranks, api, "peer"));
  return copy_name(c->engine->conn(static_cast<int>(peer)).kind(), name, nameLen, api);
}

HcclResult PyhcclCommGetFlightRecord(HcclComm comm, PyhcclOpRecord *records, uint32_t capacity,
                                     uint32_t *count) {
  const char *api = "PyhcclCommGetFlightRecord";
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, api, &c));
  HCCL_TRY(hccl::check_ptr(count, api, "count"));
  if (capacity > 0) HCCL_TRY(hccl::check_ptr(records, api, "records"));
  std::vector<hccl::OpRecord> all;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    all = c->flight.snapshot();
  }
  size_t first = all.size() > capacity ? all.size() - capacity : 0;  // the newest fit
  *count = static_cast<uint32_t>(all.size() - first);
  for (size_t i = first; i < all.size(); ++i) {
    const hccl::OpRecord &r = all[i];
    PyhcclOpRecord &o = records[i - first];
    std::memset(&o, 0, sizeof(o));
    o.seq = r.seq;
    std::snprintf(o.opName, sizeof(o.opName), "%s", r.api);
    o.count = r.count;
    o.dataType = r.dtype;
    o.root = r.root;
    o.reduceOp = r.op;
    o.state = static_cast<int32_t>(r.state);
    o.enqueueUs = r.enqueue_ns / 1e3;
    o.startUs = r.start_ns / 1e3;
    o.endUs = r.end_ns / 1e3;
    std::snprintf(o.algorithm, sizeof(o.algorithm), "%s", r.algo);
  }
  return HCCL_SUCCESS;
}

HcclResult PyhcclStreamTakeOpError(aclrtStream stream, PyhcclOpError *info, int32_t *found) {
  const char *api = "PyhcclStreamTakeOpError";
  HCCL_TRY(hccl::check_ptr(info, api, "info"));
  HCCL_TRY(hccl::check_ptr(found, api, "found"));
  aclError aerr = ACL_SUCCESS;
  std::shared_ptr<hostrt::Stream> s = hostrt::acquire_stream(stream, api, &aerr);
  if (!s) return HCCL_E_PARA;
  hccl::OpError e;
  *found = hccl::take_op_error(hostrt::stream_id(s.get()), &e) ? 1 : 0;
  std::memset(info, 0, sizeof(*info));
  if (*found) {
    info->code = static_cast<int32_t>(e.code);
    std::snprintf(info->opName, sizeof(info->opName), "%s", e.api);
    info->seq = e.seq;
    info->rank = e.rank;
    std::snprintf(info->message, sizeof(info->message), "%s", e.message.c_str());
  }
  return HCCL_SUCCESS;
}

HcclResult PyhcclCancelSetups(void) {
  common::cancel_setups();
  return HCCL_SUCCESS;
}

HcclResult PyhcclCommAbort(HcclComm comm) {
  std::shared_ptr<Comm> c;
  HCCL_TRY(hccl::check_comm(comm, "PyhcclCommAbort", &c));
  hccl::comm_abort(*c, "rank " + std::to_string(c->rank) + " aborted the communicator",
                   "the communicator was aborted on this rank (PyhcclCommAbort)");
  return HCCL_SUCCESS;
}

}  // extern "C"
