#include "hccl/ranktable/rank_table.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "hccl/net/addr.h"
#include "hccl/ranktable/json.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

constexpr size_t kMaxFileBytes = 64u << 20;
constexpr size_t kMaxPath = 4096;  // with the NUL, as CANN documents

// Collects the first problem, worded "<api>: rank table <file>: <field>: <what>".
class Checker {
 public:
  Checker(const char *api, const char *path) : api_(api), path_(path) {}

  bool fail(const std::string &field, const json::Value *at, const std::string &what) {
    if (msg_.empty()) {
      msg_ = std::string(api_) + ": rank table " + path_ + ": " + field + ": " + what;
      if (at != nullptr && at->line > 0)
        msg_ += " (line " + std::to_string(at->line) + ", column " + std::to_string(at->column) + ")";
    }
    return false;
  }
  const std::string &message() const { return msg_; }

  // A member that must be there and be of `kind`.
  const json::Value *need(const json::Value &obj, const std::string &field, const char *key,
                          json::Value::Kind kind, const char *kind_text) {
    const json::Value *v = obj.get(key);
    if (v == nullptr) {
      fail(field + key, &obj, "missing (required)");
      return nullptr;
    }
    if (v->kind != kind) {
      fail(field + key, v, std::string("must be ") + kind_text + ", not " + v->kind_name());
      return nullptr;
    }
    return v;
  }
  // An integer in [lo, hi], written as a string of digits or a JSON number.
  bool integer(const json::Value &v, const std::string &field, uint64_t lo, uint64_t hi,
               uint64_t *out) {
    if (v.kind != json::Value::kString && v.kind != json::Value::kNumber)
      return fail(field, &v, std::string("must be an integer (a string such as \"0\"), not ") + v.kind_name());
    const std::string &t = v.text;
    uint64_t x = 0;
    bool ok = !t.empty();
    for (char c : t) {
      ok = ok && c >= '0' && c <= '9';
      if (t.size() <= 19) x = x * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok) return fail(field, &v, "\"" + t + "\" is not a non-negative integer");
    if (t.size() > 19 || x < lo || x > hi)
      return fail(field, &v, t + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    *out = x;
    return true;
  }
  bool ip(const json::Value &v, const std::string &field, std::string *out) {
    if (v.kind != json::Value::kString) return fail(field, &v, std::string("must be a string, not ") + v.kind_name());
    net::SockAddr a;
    if (!net::parse_addr(v.text, 0, &a)) return fail(field, &v, "\"" + v.text + "\" is not an IPv4 or IPv6 address");
    *out = v.text;
    return true;
  }

 private:
  const char *api_;
  std::string path_;
  std::string msg_;
};

std::string at(const std::string &base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

bool read_file(const char *path, std::string *out, std::string *why) {
  FILE *f = std::fopen(path, "rb");
  if (f == nullptr) {
    *why = std::strerror(errno);
    return false;
  }
  char buf[65536];
  size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    out->append(buf, n);
    if (out->size() > kMaxFileBytes) {
      std::fclose(f);
      *why = "larger than 64 MiB";
      return false;
    }
  }
  bool err = std::ferror(f) != 0;
  std::fclose(f);
  if (err) *why = "read error";
  return !err;
}

// One entry of a server's "device" list.
bool check_device(Checker &ck, const json::Value &d, const std::string &field, bool multi_server,
                  RankTable::Device *out) {
  if (d.kind != json::Value::kObject)
    return ck.fail(field, &d, std::string("must be an object, not ") + d.kind_name());
  uint64_t v = 0;
  const json::Value *rank = d.get("rank_id");
  if (rank == nullptr) return ck.fail(field + ".rank_id", &d, "missing (required)");
  if (!ck.integer(*rank, field + ".rank_id", 0, 65535, &v)) return false;
  out->rank = static_cast<uint32_t>(v);
  const std::string named = field + " (rank " + std::to_string(out->rank) + ")";
  const json::Value *dev = d.get("device_id");
  if (dev == nullptr) return ck.fail(named + ".device_id", &d, "missing (required)");
  if (!ck.integer(*dev, named + ".device_id", 0, 65535, &v)) return false;
  out->device_id = static_cast<uint32_t>(v);
  const json::Value *dip = d.get("device_ip");
  if (dip != nullptr) {
    if (!ck.ip(*dip, named + ".device_ip", &out->device_ip)) return false;
  } else if (multi_server) {
    return ck.fail(named + ".device_ip", &d, "missing (required when the table has more than one server)");
  }
  for (const char *key : {"super_device_id"}) {
    const json::Value *x = d.get(key);
    if (x != nullptr && !ck.integer(*x, named + "." + key, 0, 0xffffffffull, &v)) return false;
  }
  for (const char *key : {"device_port", "backup_device_port", "host_port"}) {
    const json::Value *x = d.get(key);
    if (x == nullptr) continue;
    if (!ck.integer(*x, named + "." + key, 1, 65535, &v)) return false;
    if (std::strcmp(key, "host_port") == 0) out->host_port = static_cast<int>(v);
  }
  const json::Value *bip = d.get("backup_device_ip");
  std::string ignored;
  if (bip != nullptr && !ck.ip(*bip, named + ".backup_device_ip", &ignored)) return false;
  return true;
}

bool check_table(Checker &ck, const json::Value &doc, RankTable *t) {
  if (doc.kind != json::Value::kObject)
    return ck.fail("the document", &doc, std::string("must be an object, not ") + doc.kind_name());
  const json::Value *status = ck.need(doc, "", "status", json::Value::kString, "a string");
  if (status == nullptr) return false;
  if (status->text == "initializing")
    return ck.fail("status", status, "is \"initializing\": the table is not complete yet (\"completed\" is needed)");
  if (status->text != "completed")
    return ck.fail("status", status, "\"" + status->text + "\" is not \"completed\"");
  const json::Value *version = ck.need(doc, "", "version", json::Value::kString, "a string (\"1.0\" or \"1.2\")");
  if (version == nullptr) return false;
  if (version->text != "1.0" && version->text != "1.2")
    return ck.fail("version", version, "\"" + version->text + "\" is not supported (\"1.0\" or \"1.2\")");
  t->version = version->text;
  const json::Value *count = doc.get("server_count");
  if (count == nullptr) return ck.fail("server_count", &doc, "missing (required)");
  uint64_t nservers = 0;
  if (!ck.integer(*count, "server_count", 1, 1u << 20, &nservers)) return false;
  const json::Value *list = ck.need(doc, "", "server_list", json::Value::kArray, "an array");
  if (list == nullptr) return false;
  if (list->items.size() != nservers)
    return ck.fail("server_count", count, count->text + " does not match the " +
                                              std::to_string(list->items.size()) +
                                              " entries of server_list");
  std::set<std::string> server_ids, device_ips;
  for (size_t s = 0; s < list->items.size(); ++s) {
    const json::Value &sv = list->items[s];
    const std::string field = at("server_list", s);
    if (sv.kind != json::Value::kObject)
      return ck.fail(field, &sv, std::string("must be an object, not ") + sv.kind_name());
    RankTable::Server server;
    const json::Value *id = ck.need(sv, field + ".", "server_id", json::Value::kString, "a string");
    if (id == nullptr) return false;
    if (id->text.empty() || id->text.size() >= 64)
      return ck.fail(field + ".server_id", id, "must have 1 to 63 characters");
    if (!server_ids.insert(id->text).second)
      return ck.fail(field + ".server_id", id, "\"" + id->text + "\" is used by another server");
    server.id = id->text;
    const json::Value *host = sv.get("host_ip");
    if (host != nullptr && !ck.ip(*host, field + ".host_ip", &server.host_ip)) return false;
    const json::Value *devs = ck.need(sv, field + ".", "device", json::Value::kArray, "an array");
    if (devs == nullptr) return false;
    if (devs->items.empty()) return ck.fail(field + ".device", devs, "is empty");
    std::set<uint32_t> device_ids;
    for (size_t d = 0; d < devs->items.size(); ++d) {
      RankTable::Device dev;
      const std::string dfield = field + ".device" + "[" + std::to_string(d) + "]";
      if (!check_device(ck, devs->items[d], dfield, nservers > 1, &dev)) return false;
      const std::string named = dfield + " (rank " + std::to_string(dev.rank) + ")";
      if (!device_ids.insert(dev.device_id).second)
        return ck.fail(named + ".device_id", devs->items[d].get("device_id"),
                       std::to_string(dev.device_id) + " appears twice on server \"" + server.id + "\"");
      if (!dev.device_ip.empty() && !device_ips.insert(dev.device_ip).second)
        return ck.fail(named + ".device_ip", devs->items[d].get("device_ip"),
                       "\"" + dev.device_ip + "\" is used by another device");
      server.devices.push_back(dev);
      t->where.emplace_back(static_cast<uint32_t>(s), static_cast<uint32_t>(d));
    }
    t->servers.push_back(std::move(server));
  }
  // Ranks 0 .. n-1, each exactly once.
  t->nranks = static_cast<uint32_t>(t->where.size());
  std::vector<std::pair<uint32_t, uint32_t>> by_rank(t->nranks, {UINT32_MAX, 0});
  for (const auto &w : t->where) {
    const RankTable::Device &dev = t->servers[w.first].devices[w.second];
    const std::string field = at("server_list", w.first) + ".device[" + std::to_string(w.second) + "].rank_id";
    const json::Value *v = list->items[w.first].get("device")->items[w.second].get("rank_id");
    if (dev.rank >= t->nranks)
      return ck.fail(field, v, std::to_string(dev.rank) + " is not below the number of devices (" +
                                   std::to_string(t->nranks) + "): ranks are 0 to " +
                                   std::to_string(t->nranks - 1));
    if (by_rank[dev.rank].first != UINT32_MAX)
      return ck.fail(field, v, "rank " + std::to_string(dev.rank) + " appears twice");
    by_rank[dev.rank] = w;
  }
  t->where = std::move(by_rank);
  // 1.2: super pods group servers of the list.
  const json::Value *pods = doc.get("super_pod_list");
  if (pods != nullptr) {
    if (pods->kind != json::Value::kArray)
      return ck.fail("super_pod_list", pods, std::string("must be an array, not ") + pods->kind_name());
    std::set<std::string> placed;
    for (size_t p = 0; p < pods->items.size(); ++p) {
      const json::Value &pod = pods->items[p];
      const std::string field = at("super_pod_list", p);
      if (pod.kind != json::Value::kObject) return ck.fail(field, &pod, "must be an object");
      if (ck.need(pod, field + ".", "super_pod_id", json::Value::kString, "a string") == nullptr) return false;
      const json::Value *sl = ck.need(pod, field + ".", "server_list", json::Value::kArray, "an array");
      if (sl == nullptr) return false;
      for (size_t k = 0; k < sl->items.size(); ++k) {
        const std::string f = field + "." + at("server_list", k);
        if (sl->items[k].kind != json::Value::kObject) return ck.fail(f, &sl->items[k], "must be an object");
        const json::Value *sid = ck.need(sl->items[k], f + ".", "server_id", json::Value::kString, "a string");
        if (sid == nullptr) return false;
        if (!server_ids.count(sid->text))
          return ck.fail(f + ".server_id", sid, "\"" + sid->text + "\" is not a server of server_list");
        if (!placed.insert(sid->text).second)
          return ck.fail(f + ".server_id", sid, "\"" + sid->text + "\" is in more than one super pod");
      }
    }
  }
  return true;
}

}  // namespace

HcclResult load_rank_table(const char *path, const char *api, RankTable *out,
                           std::string *contents) {
  if (path == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: clusterInfo is NULL", api);
  }
  if (strnlen(path, kMaxPath) >= kMaxPath) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: clusterInfo is longer than %zu bytes", api, kMaxPath - 1);
  }
  std::string why;
  if (!read_file(path, contents, &why)) {
    return HCCL_FAIL(HCCL_E_OPEN_FILE_FAILURE, "%s: cannot read the rank table %s: %s", api, path, why.c_str());
  }
  json::Value doc;
  if (!json::parse(*contents, &doc, &why)) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rank table %s is not valid JSON: %s", api, path, why.c_str());
  }
  Checker ck(api, path);
  RankTable t;
  bool ok = check_table(ck, doc, &t);
  if (!ok) {
    return HCCL_FAIL(HCCL_E_PARA, "%s", ck.message().c_str());
  }
  *out = std::move(t);
  return HCCL_SUCCESS;
}

}  // namespace hccl
