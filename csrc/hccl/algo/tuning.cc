#include "hccl/algo/tuning.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>
#include "common/log.h"

namespace hccl {
namespace {

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

// The spec PYHCCL_ALGO's `key` names (null if none).
const CollectiveSpec *coll_by_key(const std::string &key) { return op_spec_by_key(key.c_str()); }

// "allreduce reduce ..." or "flat direct ...": what the warning lists.
std::string keys_and_algos(bool algos) {
  std::string out;
  unsigned all = 0;
  for (int k = 0; k < kOpKinds; ++k) {
    const CollectiveSpec &s = op_spec(static_cast<OpKind>(k));
    if (s.algo_key == nullptr) continue;
    all |= s.algos;
    if (!algos) out += std::string(out.empty() ? "" : " ") + s.algo_key;
  }
  for (int a = static_cast<int>(Algo::kFlat); algos && a <= static_cast<int>(Algo::kRail); ++a)
    if (all & algo_bit(static_cast<Algo>(a))) out += std::string(out.empty() ? "" : " ") + algo_name(static_cast<Algo>(a));
  return out;
}

bool algo_by_name(const std::string &name, Algo *a) {
  static const struct {
    const char *name;
    Algo algo;
  } kNames[] = {{"flat", Algo::kFlat},   {"direct", Algo::kDirect},     {"hier", Algo::kHier},
                {"ring", Algo::kRing},   {"tree", Algo::kTree},         {"pairwise", Algo::kPairwise},
                {"leader", Algo::kLeader}, {"rail", Algo::kRail},
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

void AlgoTuning::parse(const std::string &pyhccl_algo, const std::string &hccl_algo, std::string *bad) {
  bad->clear();
  auto complain = [bad](const std::string &what) {
    if (!bad->empty()) *bad += ", ";
    *bad += what;
  };
  for (const std::string &entry : split(pyhccl_algo, ",; ")) {
    size_t colon = entry.find(':');
    const CollectiveSpec *c = colon == std::string::npos ? nullptr : coll_by_key(entry.substr(0, colon));
    Algo a = Algo::kAuto;
    if (c == nullptr || !algo_by_name(entry.substr(colon + 1), &a) || !c->has(a)) {
      complain(entry);
      continue;
    }
    forced[static_cast<int>(c->kind)] = a;
  }
  // CANN: "level0:NA;level1:X" for all, or "coll=level0:NA;level1:X/coll=...".
  for (const std::string &part : split(hccl_algo, "/")) {
    std::string body = part;
    const CollectiveSpec *only = nullptr;
    size_t eq = part.find('=');
    if (eq != std::string::npos) {
      only = coll_by_key(part.substr(0, eq));
      body = part.substr(eq + 1);
      if (only == nullptr) {
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
      for (int k = 0; k < kOpKinds; ++k) {
        const CollectiveSpec &c = op_spec(static_cast<OpKind>(k));
        if (c.algo_key != nullptr && (only == nullptr || only == &c) && c.has(a)) forced_between_hosts[k] = a;
      }
    }
  }
}

Algo AlgoTuning::forced_for(OpKind k, bool multi_host) const {
  int i = static_cast<int>(k);
  if (forced[i] != Algo::kAuto) return forced[i];
  return multi_host ? forced_between_hosts[i] : Algo::kAuto;
}

void warn_tuning_once(const std::string &pyhccl_algo, const std::string &hccl_algo,
                      const std::string &bad) {
  if (bad.empty()) return;
  static std::once_flag once;
  std::call_once(once, [&] {
    PYHCCL_NOTICE(common::kTune, "PYHCCL_ALGO=%s HCCL_ALGO=%s: cannot honour %s (PYHCCL_ALGO expects "
                 "coll:algo, coll one of %s, algo one the collective has: %s); "
                 "those collectives use the automatic choice",
                 pyhccl_algo.c_str(), hccl_algo.c_str(), bad.c_str(), keys_and_algos(false).c_str(),
                 keys_and_algos(true).c_str());
  });
}

}  // namespace hccl
