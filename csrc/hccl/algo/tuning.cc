#include "hccl/algo/tuning.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>
#include "common/log.h"

namespace hccl {
namespace {

constexpr const char *kCollKeys[] = {"allreduce", "reduce", "broadcast", "allgather",
                                     "reducescatter", "alltoall"};
static_assert(sizeof(kCollKeys) / sizeof(kCollKeys[0]) == static_cast<size_t>(Coll::kCount),
              "one key per collective");
constexpr const char *kAlgoNames[] = {"auto", "flat", "direct", "hier", "ring", "tree", "pairwise", "leader"};

// Which algorithms each collective has (bit per Algo).
constexpr unsigned bit(Algo a) { return 1u << static_cast<unsigned>(a); }
constexpr unsigned kValid[] = {
    bit(Algo::kFlat) | bit(Algo::kDirect) | bit(Algo::kHier) | bit(Algo::kRing) | bit(Algo::kLeader),  // allreduce
    bit(Algo::kFlat) | bit(Algo::kDirect) | bit(Algo::kTree),                      // reduce
    bit(Algo::kDirect) | bit(Algo::kTree),                                         // broadcast
    bit(Algo::kDirect) | bit(Algo::kHier) | bit(Algo::kRing),                      // allgather
    bit(Algo::kDirect) | bit(Algo::kHier) | bit(Algo::kRing),                      // reducescatter
    bit(Algo::kDirect) | bit(Algo::kPairwise),                                     // alltoall
};

std::vector<std::string> split(const std::string &s, const char *seps) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find_first_of(seps, i);
    if (j == std::string::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

int coll_index(const std::string &key) {
  for (size_t i = 0; i < sizeof(kCollKeys) / sizeof(kCollKeys[0]); ++i)
    if (key == kCollKeys[i]) return static_cast<int>(i);
  return -1;
}

bool algo_by_name(const std::string &name, Algo *a) {
  static const struct {
    const char *name;
    Algo algo;
  } kNames[] = {{"flat", Algo::kFlat},   {"direct", Algo::kDirect},     {"hier", Algo::kHier},
                {"ring", Algo::kRing},   {"tree", Algo::kTree},         {"pairwise", Algo::kPairwise},
                {"leader", Algo::kLeader},
                {"latency", Algo::kFlat}, {"chunked", Algo::kHier},     {"staged", Algo::kHier},
                {"single", Algo::kDirect}};
  for (const auto &n : kNames)
    if (name == n.name) {
      *a = n.algo;
      return true;
    }
  return false;
}

// CANN's level1 (between servers) names that map onto ours.
bool level1_algo(const std::string &name, Algo *a) {
  if (name == "ring") *a = Algo::kRing;
  else if (name == "pipeline") *a = Algo::kHier;
  else if (name == "pairwise") *a = Algo::kPairwise;
  else return false;
  return true;
}

}  // namespace

const char *coll_key(Coll c) { return kCollKeys[static_cast<int>(c)]; }
const char *algo_name(Algo a) { return kAlgoNames[static_cast<int>(a)]; }

void AlgoTuning::parse(const std::string &pyhccl_algo, const std::string &hccl_algo, std::string *bad) {
  bad->clear();
  auto complain = [bad](const std::string &what) {
    if (!bad->empty()) *bad += ", ";
    *bad += what;
  };
  for (const std::string &entry : split(pyhccl_algo, ",; ")) {
    size_t colon = entry.find(':');
    int c = colon == std::string::npos ? -1 : coll_index(entry.substr(0, colon));
    Algo a = Algo::kAuto;
    if (c < 0 || !algo_by_name(entry.substr(colon + 1), &a) || (kValid[c] & bit(a)) == 0) {
      complain(entry);
      continue;
    }
    forced[c] = a;
  }
  // CANN: "level0:NA;level1:X" for all, or "coll=level0:NA;level1:X/coll=...".
  for (const std::string &part : split(hccl_algo, "/")) {
    std::string body = part;
    int only = -1;
    size_t eq = part.find('=');
    if (eq != std::string::npos) {
      only = coll_index(part.substr(0, eq));
      body = part.substr(eq + 1);
      if (only < 0) {
        complain("HCCL_ALGO " + part);
        continue;
      }
    }
    for (const std::string &level : split(body, ";")) {
      if (level.compare(0, 7, "level1:") != 0) continue;  // level0 (inside a server) is NA in CANN too
      Algo a = Algo::kAuto;
      if (!level1_algo(level.substr(7), &a)) {
        complain("HCCL_ALGO " + level + " (not available in the host runtime)");
        continue;
      }
      for (int c = 0; c < static_cast<int>(Coll::kCount); ++c)
        if ((only < 0 || only == c) && (kValid[c] & bit(a)) != 0) forced_between_hosts[c] = a;
    }
  }
}

Algo AlgoTuning::forced_for(Coll c, bool multi_host) const {
  int i = static_cast<int>(c);
  if (forced[i] != Algo::kAuto) return forced[i];
  return multi_host ? forced_between_hosts[i] : Algo::kAuto;
}

void warn_tuning_once(const std::string &pyhccl_algo, const std::string &hccl_algo,
                      const std::string &bad) {
  if (bad.empty()) return;
  static std::once_flag once;
  std::call_once(once, [&] {
    PYHCCL_NOTICE("HCCL", "PYHCCL_ALGO=%s HCCL_ALGO=%s: cannot honour %s (PYHCCL_ALGO expects "
                 "coll:algo, coll one of allreduce reduce broadcast allgather reducescatter "
                 "alltoall, algo one the collective has: flat direct hier ring tree pairwise leader); "
                 "those collectives use the automatic choice",
                 pyhccl_algo.c_str(), hccl_algo.c_str(), bad.c_str());
  });
}

}  // namespace hccl
