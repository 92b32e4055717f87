// Communicator set-up: rendezvous through the bootstrap, exchange what every
// rank is, build the topology, and bring up the transport.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <vector>

#include "common/env.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/comm/comm.h"
#include "hccl/transport/shm.h"

namespace hccl {
namespace {

constexpr uint32_t kPeerInfoVersion = 1;

// What each rank tells the others (round 1). Fixed layout, same build on every rank.
struct PeerInfo {
  uint32_t version;
  int32_t pid;
  int32_t device;
  int32_t arena_fd;
  uint64_t arena_size;
  uint64_t pid_ns;
  uint64_t slot_bytes;
  uint64_t p2p_bytes;
  uint64_t latency_bytes;
  uint64_t single_copy_min;
  char host[64];
  char boot_id[40];
  char listen[64];  // address of this rank's TCP data listener (future transport; "" now)
  char force[128];  // PYHCCL_ALGO
};

// Round 2: this rank's segment (empty name when it could not create one).
struct SegmentInfo {
  uint32_t ok;
  int32_t fd;
  char name[120];
};

// Round 3: whether this rank mapped every peer, and may open their fds.
struct MapStatus {
  uint32_t mapped;
  uint32_t can_open_fds;
};

std::atomic<uint64_t> g_comm_seq{0};

void copy_str(char *dst, size_t cap, const std::string &s) {
  std::snprintf(dst, cap, "%s", s.c_str());
}

std::string read_first_line(const char *path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

PeerInfo make_peer_info(const Comm &c) {
  PeerInfo p;
  std::memset(&p, 0, sizeof(p));
  p.version = kPeerInfoVersion;
  p.pid = getpid();
  p.device = c.device;
  p.arena_fd = -1;
  p.arena_size = 0;
  struct stat st;
  p.pid_ns = stat("/proc/self/ns/pid", &st) == 0 ? st.st_ino : 0;
  char host[64] = {};
  gethostname(host, sizeof(host) - 1);
  copy_str(p.host, sizeof(p.host), host);
  copy_str(p.boot_id, sizeof(p.boot_id), read_first_line("/proc/sys/kernel/random/boot_id"));
  // Staging slots: half the configured buffer, capped (bigger slots stop
  // paying off once a chunk no longer fits in cache).
  uint64_t budget = static_cast<uint64_t>(c.settings.buffer_mb) << 20;
  uint64_t slot = common::env_bytes("PYHCCL_SLOT_BYTES", 1ull << 20);
  if (slot > budget / 2) slot = budget / 2;
  if (slot < (64u << 10)) slot = 64u << 10;
  // Per-rank pieces of a chunk (ReduceScatter, AlltoAll) need >= 8 elements.
  if (slot < 64ull * c.nranks) slot = 64ull * c.nranks;
  p.slot_bytes = (slot + 4095) / 4096 * 4096;
  // p2p slots exist per peer: keep their total near 32 MiB for many ranks.
  uint64_t p2p = common::env_bytes("PYHCCL_P2P_BYTES", 256u << 10);
  if (p2p > (32ull << 20) / c.nranks) p2p = (32ull << 20) / c.nranks;
  if (p2p < 4096) p2p = 4096;
  p.p2p_bytes = (p2p + 4095) / 4096 * 4096;
  p.latency_bytes = common::env_bytes("PYHCCL_LATENCY_BYTES", 64u << 10);
  p.single_copy_min = common::env_bytes("PYHCCL_SINGLE_COPY_BYTES", 256u << 10);
  copy_str(p.force, sizeof(p.force), common::env_str("PYHCCL_ALGO", ""));
  return p;
}

// Unlinks whatever segment names are known on a failed set-up (the Comm's
// destructor closes the bootstrap and the transport).
struct InitGuard {
  std::vector<ShmTransport::PeerDesc> names;
  bool armed = true;
  ~InitGuard() {
    if (!armed) return;
    ShmTransport::unlink_names(names);
  }
};

HcclResult exchange_status(Comm &c, const MapStatus &mine, const char *api) {
  std::vector<MapStatus> all(c.nranks);
  HcclResult r = bootstrap_allgather(c.bootstrap, &mine, sizeof(mine), all.data());
  if (r != HCCL_SUCCESS) return r;
  c.single_copy_ok = true;
  for (uint32_t i = 0; i < c.nranks; ++i) {
    if (all[i].mapped == 0) {
      if (mine.mapped) hostrt::set_error("%s: rank %u failed to map its peers' shared memory", api, i);
      return HCCL_E_MEMORY;
    }
    if (all[i].can_open_fds == 0) c.single_copy_ok = false;
  }
  return HCCL_SUCCESS;
}

HcclResult setup_transport(Comm &c, const std::vector<PeerInfo> &info, const std::string &job,
                           const char *api, InitGuard *guard) {
  const PeerInfo &me = info[c.rank];
  ShmTransport::Options opt;
  opt.rank = static_cast<int>(c.rank);
  opt.nranks = static_cast<int>(c.nranks);
  opt.slot_bytes = info[0].slot_bytes;  // rank 0 decides: layouts must agree
  opt.p2p_bytes = info[0].p2p_bytes;
  opt.exec_timeout_s = c.settings.exec_timeout_s;
  opt.local_ranks = static_cast<int>(c.nranks);
  char name[120];
  std::snprintf(name, sizeof(name), "/pyhccl-%s-%u-%llu", job.c_str(), c.rank,
                static_cast<unsigned long long>(g_comm_seq.fetch_add(1)));
  std::string why;
  std::unique_ptr<ShmTransport> t = ShmTransport::create(opt, name, &why);

  SegmentInfo seg;
  std::memset(&seg, 0, sizeof(seg));
  seg.ok = t ? 1 : 0;
  seg.fd = t ? t->segment_fd() : -1;
  if (t) copy_str(seg.name, sizeof(seg.name), name);
  std::vector<SegmentInfo> segs(c.nranks);
  HcclResult r = bootstrap_allgather(c.bootstrap, &seg, sizeof(seg), segs.data());
  if (r != HCCL_SUCCESS) return r;
  guard->names.resize(c.nranks);
  bool all_ok = true;
  for (uint32_t i = 0; i < c.nranks; ++i) {
    guard->names[i].segment = segs[i].name;
    guard->names[i].segment_fd = segs[i].fd;
    guard->names[i].pid = info[i].pid;
    guard->names[i].same_pid_ns = info[i].pid_ns == me.pid_ns;
    if (!segs[i].ok && all_ok) {
      all_ok = false;
      if (t)
        hostrt::set_error("%s: rank %u could not create its shared-memory segment", api, i);
      else
        hostrt::set_error("%s: %s", api, why.c_str());
    }
  }
  if (!all_ok) return HCCL_E_MEMORY;

  MapStatus st;
  st.mapped = t->connect(guard->names, &why) ? 1 : 0;
  if (!st.mapped) hostrt::set_error("%s: %s", api, why.c_str());
  st.can_open_fds = st.mapped && t->can_open_peer_fds() ? 1 : 0;
  r = exchange_status(c, st, api);
  if (r != HCCL_SUCCESS) return r;
  // Every rank has mapped every segment: the names can go now, so nothing is
  // left in /dev/shm even if a process is killed later.
  t->unlink_own();
  c.transport = std::move(t);
  return HCCL_SUCCESS;
}

}  // namespace

HcclResult comm_init(uint32_t nranks, const HcclRootInfo *root, uint32_t rank,
                     const HcclCommConfig *config, const char *api, HcclComm *out) {
  auto c = std::make_shared<Comm>();
  c->rank = rank;
  c->nranks = nranks;
  HcclResult r = read_comm_config(config, api, &c->settings);
  if (r != HCCL_SUCCESS) return r;
  RootInfoView view;
  r = root_info_parse(root, &view, api);
  if (r != HCCL_SUCCESS) return r;
  // No device set: the communicator belongs to device 0 (the NULL stream
  // then still needs aclrtSetDevice, as in CANN).
  int32_t dev = hostrt::current_device();
  c->device = dev < 0 ? 0 : dev;
  std::string job = job_id_hex(view);
  c->name = c->settings.name.empty() ? "pyhccl-" + job : c->settings.name;

  r = bootstrap_connect(view, nranks, rank, &c->bootstrap, api);
  if (r != HCCL_SUCCESS) return r;  // c's destructor closes what was opened

  PeerInfo mine = make_peer_info(*c);
  std::vector<PeerInfo> info(nranks);
  r = bootstrap_allgather(c->bootstrap, &mine, sizeof(mine), info.data());
  if (r != HCCL_SUCCESS) return r;

  std::set<std::string> hosts;
  for (const PeerInfo &p : info) {
    if (p.version != kPeerInfoVersion) {
      hostrt::set_error("%s: peers run different pyhccl builds (peer info version %u vs %u)",
                        api, p.version, kPeerInfoVersion);
      return HCCL_E_INTERNAL;
    }
    hosts.insert(std::string(p.host) + "/" + p.boot_id);
  }
  if (hosts.size() > 1) {
    hostrt::set_error("%s: the %u ranks run on %zu hosts; the pyhccl host runtime supports "
                      "ranks on one host only for now (no TCP transport yet)",
                      api, nranks, hosts.size());
    return HCCL_E_NOT_SUPPORT;
  }
  c->tuning.latency_bytes = info[0].latency_bytes;
  c->tuning.single_copy_min = info[0].single_copy_min;
  std::memcpy(c->tuning.force, info[0].force, sizeof(c->tuning.force));
  c->tuning.force[sizeof(c->tuning.force) - 1] = '\0';

  // One rank gets a transport too: self send/recv and the slots work the same.
  InitGuard guard;
  r = setup_transport(*c, info, job, api, &guard);
  if (r != HCCL_SUCCESS) return r;
  guard.armed = false;
  c->seen.assign(nranks, 0);
  c->checked_op.assign(nranks, 0);
  *out = comm_register(c);
  return HCCL_SUCCESS;
}

}  // namespace hccl
