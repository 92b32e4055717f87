// HcclCreateSubCommConfig: sub-communicators cut from an existing one.
//
// As on CANN, every rank of the parent calls it: members pass their group's
// rankIds (the same array on every member; the index of a rank in it is its
// rank in the sub-communicator), the others rankIds == NULL. Several disjoint
// groups may be cut in one call, each with its own subCommId. The call is a
// host call on the parent (host_call.h), in three rounds:
//   1. every rank publishes {member?, subCommId, rankNum, digest of rankIds,
//      its index, whether its own arguments are good};
//   2. every member checks its group against what the others published and
//      every rank publishes its verdict, so that a bad call fails on every
//      rank with the same message (never a member waiting for a rank that
//      did not join);
//   3. each group's first rank opens a rendezvous (as HcclGetRootInfo does)
//      and sends its root info to the others over the parent's connections.
// Then the members of each group set up their communicator together
// (comm_init), without the rest of the parent.
#include "hccl/comm/sub_comm.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "hccl/algo/ctx.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/comm/config.h"
#include "hccl/comm/host_call.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

struct Record {
  uint32_t member;
  uint32_t ok;  // this rank's own arguments are good
  uint64_t sub_id;
  uint64_t digest;  // of rankIds
  uint32_t rank_num;
  uint32_t sub_rank;
  char why[200];
};

struct Verdict {
  uint32_t ok;
  uint32_t pad;
  char why[224];
};

// What a group's first rank sends the others.
struct Invitation {
  uint32_t ok;
  uint32_t pad;
  char why[224];
  HcclRootInfo root;
};

void copy_why(char *dst, size_t cap, const std::string &s) { std::snprintf(dst, cap, "%s", s.c_str()); }

uint64_t digest(const uint32_t *ids, uint32_t n) {
  uint64_t h = 1469598103934665603ull;
  for (uint32_t i = 0; i < n; ++i)
    for (int b = 0; b < 4; ++b) {
      h ^= (ids[i] >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  return h ^ n;
}

// subCommIds used so far per parent (CANN: unique within a communicator).
std::mutex g_used_mu;
std::map<uint64_t, std::set<uint64_t>> g_used;

std::string local_check(const Comm &c, uint32_t rank_num, const uint32_t *ids, uint64_t sub_id,
                        uint32_t sub_rank, const HcclCommConfig *config, bool have_out,
                        const char *api) {
  if (!have_out) return "subComm is NULL";
  if (ids == nullptr) return "";  // not a member: nothing else to check
  if (rank_num == 0 || rank_num > c.nranks)
    return "rankNum (" + std::to_string(rank_num) + ") must be between 1 and the communicator's " +
           std::to_string(c.nranks) + " ranks";
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < rank_num; ++i) {
    if (ids[i] >= c.nranks)
      return "rankIds[" + std::to_string(i) + "] (" + std::to_string(ids[i]) +
             ") is not a rank of the communicator (" + std::to_string(c.nranks) + " ranks)";
    if (!seen.insert(ids[i]).second)
      return "rankIds lists rank " + std::to_string(ids[i]) + " twice";
  }
  if (sub_rank >= rank_num || ids[sub_rank] != c.rank)
    return "subCommRankId (" + std::to_string(sub_rank) + ") must be this rank's index in rankIds (" +
           "rank " + std::to_string(c.rank) + (seen.count(c.rank) ? "" : " is not listed") + ")";
  CommSettings s;
  if (read_comm_config(config, api, &s) != HCCL_SUCCESS) return hostrt::last_error();
  std::lock_guard<std::mutex> lock(g_used_mu);
  if (g_used[c.id].count(sub_id))
    return "subCommId " + std::to_string(sub_id) + " was already used with this communicator";
  return "";
}

// Round 2, on a member: is my group what everyone published?
std::string check_group(const std::vector<Record> &all, const uint32_t *ids, const Record &me) {
  std::vector<bool> listed(all.size(), false);
  const std::string group = "subCommId " + std::to_string(me.sub_id);
  for (uint32_t k = 0; k < me.rank_num; ++k) {
    const uint32_t q = ids[k];
    listed[q] = true;
    const Record &r = all[q];
    if (!r.member)
      return "rank " + std::to_string(q) + " is listed in the rankIds of " + group +
             " but passed rankIds == NULL (not a member)";
    if (r.sub_id != me.sub_id)
      return "rank " + std::to_string(q) + " is listed in the rankIds of " + group +
             " but passed subCommId " + std::to_string(r.sub_id);
    if (r.rank_num != me.rank_num || r.digest != me.digest)
      return "the members of " + group + " passed different rankNum or rankIds (rank " +
             std::to_string(q) + ")";
    if (r.sub_rank != k)
      return "rank " + std::to_string(q) + " is at index " + std::to_string(k) + " of the rankIds of " +
             group + " but passed subCommRankId " + std::to_string(r.sub_rank);
  }
  for (size_t p = 0; p < all.size(); ++p)
    if (all[p].member && all[p].sub_id == me.sub_id && !listed[p])
      return "rank " + std::to_string(p) + " passed " + group + " but is not in its rankIds";
  return "";
}

}  // namespace

HcclResult sub_comm_create(const std::shared_ptr<Comm> &parent, uint32_t rank_num,
                           const uint32_t *rank_ids, uint64_t sub_id, uint32_t sub_rank,
                           const HcclCommConfig *config, HcclComm *out, const char *api) {
  const bool member = rank_ids != nullptr;
  Record mine;
  std::memset(&mine, 0, sizeof(mine));
  mine.member = member;
  mine.sub_id = member ? sub_id : 0;
  mine.rank_num = member ? rank_num : 0;
  mine.sub_rank = sub_rank;
  std::string why = local_check(*parent, rank_num, rank_ids, sub_id, sub_rank, config,
                                out != nullptr, api);
  mine.ok = why.empty();
  copy_why(mine.why, sizeof(mine.why), why);
  if (member && mine.ok) mine.digest = digest(rank_ids, rank_num);
  if (out != nullptr) *out = nullptr;

  std::string refused;
  Invitation inv;
  std::memset(&inv, 0, sizeof(inv));
  HcclResult r = comm_host_call(parent, OpKind::kCreateSubComm, api, 0, [&](Ctx &x) -> HcclResult {
    std::vector<Record> all(x.n);
    HcclResult rc = exchange(x, &mine, sizeof(mine), all.data());
    if (rc != HCCL_SUCCESS) return rc;
    Verdict v;
    std::memset(&v, 0, sizeof(v));
    v.ok = 1;
    for (int p = 0; p < x.n && v.ok; ++p)
      if (!all[p].ok) {
        v.ok = 0;
        copy_why(v.why, sizeof(v.why),
                 "rank " + std::to_string(p) + ": " +
                     std::string(all[p].why, strnlen(all[p].why, sizeof(all[p].why))));
      }
    if (v.ok && member) {
      std::string bad = check_group(all, rank_ids, mine);
      v.ok = bad.empty();
      copy_why(v.why, sizeof(v.why), bad);
    }
    std::vector<Verdict> verdicts(x.n);
    rc = exchange(x, &v, sizeof(v), verdicts.data());
    if (rc != HCCL_SUCCESS) return rc;
    for (int p = 0; p < x.n; ++p)
      if (!verdicts[p].ok) {
        refused = std::string(verdicts[p].why, strnlen(verdicts[p].why, sizeof(verdicts[p].why)));
        return HCCL_SUCCESS;  // every rank saw the same: nothing is created
      }
    if (!member || rank_num == 1) return HCCL_SUCCESS;
    Batch b(x);
    b.elem = 1;
    if (sub_rank == 0) {
      inv.ok = root_info_create(&inv.root, sizeof(inv.root)) == HCCL_SUCCESS;
      if (!inv.ok) copy_why(inv.why, sizeof(inv.why), hostrt::last_error());
      for (uint32_t k = 1; k < rank_num; ++k) b.send(static_cast<int>(rank_ids[k]), &inv, sizeof(inv));
    } else {
      b.recv(static_cast<int>(rank_ids[0]), &inv, sizeof(inv));
    }
    return b.run();
  });
  if (r != HCCL_SUCCESS) return r;
  if (!refused.empty()) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: %s", api, refused.c_str());
  }
  if (!member) return HCCL_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(g_used_mu);
    g_used[parent->id].insert(sub_id);
  }
  if (rank_num == 1) {
    inv.ok = root_info_create(&inv.root, sizeof(inv.root)) == HCCL_SUCCESS;
    if (!inv.ok) copy_why(inv.why, sizeof(inv.why), hostrt::last_error());
  }
  if (!inv.ok) {
    return HCCL_FAIL(HCCL_E_INTERNAL, "%s: rank %u (the group's first rank) could not open its rendezvous: %s",
                                      api, rank_ids[0], inv.why);
  }
  // Named "{parent}_sub_{subCommId}" unless the config names it (as CANN does).
  HcclCommConfig named;
  HcclCommConfigInit(&named);
  if (config != nullptr) {
    size_t size = 0;
    std::memcpy(&size, config->reserved, sizeof(size));
    std::memcpy(&named, config, size < sizeof(named) ? size : sizeof(named));
  }
  uint32_t version = 0;
  std::memcpy(&version, named.reserved + 12, sizeof(version));
  if (version >= 2 && named.hcclCommName[0] == '\0')
    std::snprintf(named.hcclCommName, sizeof(named.hcclCommName), "%s_sub_%llu",
                  parent->name.c_str(), static_cast<unsigned long long>(sub_id));
  return comm_init(rank_num, &inv.root, sub_rank, &named, api, out);
}

}  // namespace hccl
