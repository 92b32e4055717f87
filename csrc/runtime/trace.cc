// Trace recorder: see trace.h. Events go to one vector under one lock (only
// when tracing: trace_on() keeps the hot path to a relaxed load); they are
// sorted and turned into JSON only when a file is written.
#include "runtime/trace.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>

#include "common/env.h"
#include "common/log.h"
#include "runtime/internal.h"

namespace hostrt {

std::atomic<bool> g_trace_on{false};

namespace {

// A cap on memory: a long run traced by PYHCCL_TRACE keeps its first events
// and counts the rest (reported in the file's otherData).
constexpr size_t kMaxEvents = 1 << 19;

struct Stored {
  TraceEvent ev;
  std::string comm;  // ev.comm points into the caller's memory: copied here
};

struct Recorder {
  std::mutex mu;
  std::vector<Stored> events;
  uint64_t dropped = 0;
  std::string env_dir;   // PYHCCL_TRACE ("" = off)
  std::string prof_dir;  // aclprofInit's path ("" = no aclprof session)
  std::vector<uint32_t> starts;  // per device: aclprofStart calls not yet stopped
  uint32_t started = 0;          // devices with starts > 0

  void update_on() { g_trace_on.store(!env_dir.empty() || started > 0, std::memory_order_relaxed); }
  bool wants(int32_t device) const {
    if (!env_dir.empty()) return true;
    return device >= 0 && static_cast<size_t>(device) < starts.size() && starts[device] > 0;
  }
};

// Never destroyed: stream workers may still record while exit handlers run.
// (A function, not a global: the constructor below may run first.)
Recorder &rec() {
  static Recorder *r = new Recorder;
  return *r;
}

std::string json_str(const char *s) {
  std::string out = "\"";
  for (const unsigned char *p = reinterpret_cast<const unsigned char *>(s); *p; ++p) {
    if (*p == '"' || *p == '\\') {
      out += '\\';
      out += static_cast<char>(*p);
    } else if (*p < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", *p);
      out += buf;
    } else {
      out += static_cast<char>(*p);
    }
  }
  return out + "\"";
}

std::string host_name() {
  char h[256] = {0};
  if (gethostname(h, sizeof(h) - 1) != 0 || h[0] == '\0') return "localhost";
  return h;
}

// The whole file, from a copy of the events (taken under the lock).
std::string render(std::vector<Stored> evs, uint64_t dropped) {
  std::stable_sort(evs.begin(), evs.end(), [](const Stored &a, const Stored &b) {
    return a.ev.start_ns < b.ev.start_ns;
  });
  const long pid = static_cast<long>(getpid());
  const std::string host = host_name();
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  auto add = [&](const std::string &e) {
    if (!first) out += ",";
    out += "\n";
    out += e;
    first = false;
  };
  // Metadata: the process named after its host, pid and HCCL ranks; a track per stream.
  std::map<std::string, std::pair<uint32_t, uint32_t>> ranks;  // comm -> rank, nranks
  std::map<uint64_t, int32_t> streams;                          // stream -> device
  for (const Stored &s : evs) {
    if (s.ev.hccl) ranks[s.comm] = {s.ev.rank, s.ev.nranks};
    streams.emplace(s.ev.stream, s.ev.device);
  }
  std::string pname = "pyhccl " + host + ":" + std::to_string(pid);
  std::string rank_list;
  for (const auto &r : ranks) {
    pname += " rank " + std::to_string(r.second.first) + "/" + std::to_string(r.second.second);
    if (!rank_list.empty()) rank_list += ",";
    rank_list += "{\"comm\":" + json_str(r.first.c_str()) +
                 ",\"rank\":" + std::to_string(r.second.first) +
                 ",\"nranks\":" + std::to_string(r.second.second) + "}";
  }
  add("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
      ",\"args\":{\"name\":" + json_str(pname.c_str()) + "}}");
  if (!ranks.empty()) {
    add("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
        ",\"args\":{\"sort_index\":" + std::to_string(ranks.begin()->second.first) + "}}");
  }
  for (const auto &st : streams) {
    std::string tname = "stream " + std::to_string(st.first) + " (device " +
                        std::to_string(st.second) + ")";
    add("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
        ",\"tid\":" + std::to_string(st.first) + ",\"args\":{\"name\":" +
        json_str(tname.c_str()) + "}}");
  }
  for (const Stored &s : evs) {
    const TraceEvent &e = s.ev;
    char head[256];
    std::snprintf(head, sizeof(head),
                  ",\"ph\":\"X\",\"pid\":%ld,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f", pid,
                  static_cast<unsigned long long>(e.stream), e.start_ns / 1e3,
                  (e.end_ns - e.start_ns) / 1e3);
    std::string ev = "{\"name\":" + json_str(e.name) + ",\"cat\":\"" +
                     (e.hccl ? "hccl" : "stream") + "\"" + head +
                     ",\"args\":{\"device\":" + std::to_string(e.device) +
                     ",\"bytes\":" + std::to_string(e.bytes) +
                     ",\"ok\":" + (e.ok ? "true" : "false");
    if (e.hccl) {
      ev += ",\"count\":" + std::to_string(e.count) + ",\"dtype\":" + json_str(e.dtype) +
            ",\"algorithm\":" + json_str(e.algo) + ",\"comm\":" + json_str(s.comm.c_str()) +
            ",\"rank\":" + std::to_string(e.rank) + ",\"nranks\":" + std::to_string(e.nranks) +
            ",\"seq\":" + std::to_string(e.seq);
    }
    add(ev + "}}");
  }
  out += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"host\":" + json_str(host.c_str()) +
         ",\"pid\":" + std::to_string(pid) + ",\"clock\":\"CLOCK_MONOTONIC\",\"ranks\":[" +
         rank_list + "],\"dropped\":" + std::to_string(dropped) + "}}\n";
  return out;
}

bool write_file(const std::string &dir, const std::string &text, std::string *err) {
  const std::string name =
      dir + "/pyhccl-trace-" + host_name() + "-" + std::to_string(getpid()) + ".json";
  const std::string tmp = name + ".tmp";
  FILE *f = fopen(tmp.c_str(), "w");
  bool ok = f != nullptr && fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f != nullptr) ok = fclose(f) == 0 && ok;
  // Renamed into place: a reader never sees half a file.
  if (ok) ok = rename(tmp.c_str(), name.c_str()) == 0;
  if (!ok) {
    *err = "cannot write " + name + ": " + std::strerror(errno);
    unlink(tmp.c_str());
  }
  return ok;
}

void after_fork() {
  // The child traces on its own (its own pid, its own file): the parent's
  // events are not its, and the lock may have been held at fork.
  new (&rec().mu) std::mutex();
  rec().events.clear();
  rec().dropped = 0;
}

void at_exit() { trace_flush(); }

__attribute__((constructor)) void trace_from_env() {
  pthread_atfork(nullptr, nullptr, after_fork);
  std::string dir = common::env_str("PYHCCL_TRACE", "");
  if (dir.empty()) return;
  std::string err;
  if (!trace_make_dir(dir, &err)) {
    PYHCCL_NOTICE(common::kRuntime, "PYHCCL_TRACE ignored: %s", err.c_str());
    return;
  }
  rec().env_dir = dir;
  rec().update_on();
  std::atexit(at_exit);
}

}  // namespace

void trace_record(const TraceEvent &ev) {
  std::lock_guard<std::mutex> lk(rec().mu);
  if (!rec().wants(ev.device)) return;
  if (rec().events.size() >= kMaxEvents) {
    ++rec().dropped;
    return;
  }
  rec().events.push_back(Stored{ev, ev.hccl && ev.comm != nullptr ? ev.comm : ""});
  rec().events.back().ev.comm = nullptr;
}

void trace_devices(const std::vector<uint32_t> &devices, int delta) {
  std::lock_guard<std::mutex> lk(rec().mu);
  Recorder &r = rec();
  if (r.starts.size() < static_cast<size_t>(device_count())) r.starts.resize(device_count());
  for (uint32_t d : devices) {
    uint32_t &n = r.starts.at(d);
    const uint32_t before = n;
    n = delta > 0 ? n + 1 : (n > 0 ? n - 1 : 0);
    if (before == 0 && n > 0) ++r.started;
    if (before > 0 && n == 0) --r.started;
  }
  r.update_on();
}

void trace_prof_dir(const std::string &dir) {
  static bool exit_hook = false;
  std::lock_guard<std::mutex> lk(rec().mu);
  rec().prof_dir = dir;
  if (dir.empty() && rec().env_dir.empty()) {
    rec().events.clear();
    rec().dropped = 0;
  }
  if (!dir.empty() && !exit_hook) {  // a session never finalized is still written
    exit_hook = true;
    std::atexit(at_exit);
  }
}

bool trace_write(const std::string &dir, std::string *err) {
  std::vector<Stored> copy;
  uint64_t dropped;
  {
    std::lock_guard<std::mutex> lk(rec().mu);
    copy = rec().events;
    dropped = rec().dropped;
  }
  return write_file(dir, render(std::move(copy), dropped), err);
}

void trace_flush() {
  std::set<std::string> dirs;
  {
    std::lock_guard<std::mutex> lk(rec().mu);
    if (!rec().env_dir.empty()) dirs.insert(rec().env_dir);
    if (!rec().prof_dir.empty()) dirs.insert(rec().prof_dir);
  }
  for (const std::string &d : dirs) {
    std::string err;
    if (!trace_write(d, &err)) PYHCCL_LOG(common::kError, common::kRuntime, "trace: %s", err.c_str());
  }
}

bool trace_make_dir(const std::string &dir, std::string *err) {
  // mkdir -p: each prefix in turn; an existing one is fine.
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) {
      *err = "cannot create directory \"" + part + "\": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *err = "\"" + dir + "\" is not a directory";
    return false;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    *err = "directory \"" + dir + "\" is not writable";
    return false;
  }
  return true;
}

}  // namespace hostrt
