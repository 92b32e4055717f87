// Communicator set-up: rendezvous through the bootstrap, learn what every
// rank is (host, process, tuning), build the topology, and bring up one
// connection per peer: shared memory on the same host, TCP across hosts.
// Every step that can fail on one rank ends in a bootstrap round, and a rank
// that fails tells the root (bootstrap_fail), which fails the job for all
// with its message: set-up ends the same way on every rank.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/cancel.h"
#include "common/env.h"
#include "common/log.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/comm/comm.h"
#include "hccl/comm/link_probe.h"
#include "hccl/comm/setup_info.h"
#include "hccl/net/netif.h"
#include "hccl/transport/engine.h"
#include "hccl/transport/self.h"
#include "hccl/transport/tcp/setup.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

std::atomic<uint64_t> g_comm_seq{0};

void copy_str(char *dst, size_t cap, const std::string &s) { std::snprintf(dst, cap, "%s", s.c_str()); }

// A communicator's uid, the same on every rank (its root info's job id and
// its name): where a peer is blocked is published under it (shm/waits.h).
uint64_t comm_uid(const std::string &job, const std::string &name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char ch : job + '\0' + name) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

// Fails set-up for every rank with this rank's message.
HcclResult fail_setup(Comm &c, HcclResult code, const std::string &why) {
  return bootstrap_fail(c.bootstrap, code, "rank " + std::to_string(c.rank) + ": " + why);
}

// Ranks of one communicator on one host should each have their own device.
void warn_shared_devices(const Comm &c, const std::vector<RankInfo> &info) {
  for (int p : c.topo.local(c.rank))
    if (p < static_cast<int>(c.rank) && info[p].device == info[c.rank].device) {
      PYHCCL_LOG(common::kWarning, common::kInit,
                 "%s: ranks %d and %u both use device %d on host %s (give each rank its own "
                 "device: aclrtSetDevice, or pyhccl.set_device)",
                 c.name.c_str(), p, c.rank, info[c.rank].device,
                 c.topo.host_names[c.topo.host_of[c.rank]].c_str());
      return;
    }
}

const char *link_source(const Comm &c, const LinkInfo &link, uint32_t part) {
  if (!(link.measured & part)) return "declared";
  return c.topo.nhosts() > 1 ? "measured" : "default, one host";
}

// FIFO slots where rank 0 left them to the set-up (PYHCCL_SLOTS unset): 8, and
// across hosts up to 16 (2 MiB in flight toward a local peer) within 8 MiB a
// rank. A rank whose wait sleeps on its sockets refills its FIFOs only when it
// wakes; with 1 MiB in flight, on 16 ranks of 2 cores, a step inside the host
// (hier's fold, from host memory) went at the network's pace: one 64 MiB
// ReduceScatter on 8x2 took 524-887 ms against 513-543. 64 slots did no better
// there and cost 2-4% on 2x2 (the FIFO no longer in the caches).
uint32_t fifo_slots(const Comm &c, const RankInfo &r0) {
  if (r0.slots != 0) return r0.slots;
  size_t most = 1;
  for (const auto &h : c.topo.hosts) most = std::max(most, h.size());
  if (c.topo.nhosts() < 2 || most < 2) return kDefaultSlots;
  const uint64_t fit = (8ull << 20) / (r0.slot_bytes * (most - 1));
  return static_cast<uint32_t>(std::max<uint64_t>(kDefaultSlots, std::min<uint64_t>(16, fit)));
}

// One line per communicator at info level: who is where, which transports, what tuning.
void log_setup(const Comm &c, const RankInfo &tuning, const LinkInfo &link) {
  if (!PYHCCL_LOG_ON(common::kInfo, common::kInit)) return;
  int shm = 0, tcp = 0;
  for (uint32_t p = 0; p < c.nranks; ++p) {
    std::string kind = c.engine->conn(static_cast<int>(p)).kind();
    shm += kind == "shm";
    tcp += kind == "tcp";
  }
  std::string hosts;
  for (int h = 0; h < c.topo.nhosts(); ++h)
    hosts += (h ? ", " : "") + c.topo.host_names[h] + " x" + std::to_string(c.topo.hosts[h].size());
  std::string forced;
  for (int k = 0; k < kOpKinds; ++k) {
    Algo a = c.tuning.forced_for(static_cast<OpKind>(k), c.topo.nhosts() > 1);
    if (a != Algo::kAuto)
      forced += std::string(forced.empty() ? "" : ",") + op_spec(static_cast<OpKind>(k)).algo_key + ":" + algo_name(a);
  }
  PYHCCL_LOG(common::kInfo, common::kInit,
             "%s: rank %u of %u on device %d; %d host(s): %s; shm to %d peer(s) (%u x %llu B FIFOs), "
             "tcp to %d peer(s) (%u sockets each); algorithms: %s; flat up to %llu B, single copy "
             "from %llu B, chunks of %llu B; link between hosts: %.0f us (%s), %.2f Gbit/s (%s), "
             "%.1f us per message (%s); waits spin %lld us, then yield %lld us (up to %lld us)",
             c.name.c_str(), c.rank, c.nranks, c.device, c.topo.nhosts(), hosts.c_str(), shm,
             fifo_slots(c, tuning), static_cast<unsigned long long>(tuning.slot_bytes), tcp,
             tuning.sockets_per_peer, forced.empty() ? "automatic" : forced.c_str(),
             static_cast<unsigned long long>(c.tuning.flat_bytes),
             static_cast<unsigned long long>(c.tuning.single_copy_min),
             static_cast<unsigned long long>(c.tuning.chunk_bytes), c.tuning.net.alpha * 1e6,
             link_source(c, link, kLatencyMeasured), 8e-9 / c.tuning.net.beta, link_source(c, link, kRateMeasured),
             c.tuning.net_message * 1e6, link_source(c, link, kMessageMeasured),
             static_cast<long long>(c.engine->spin_ns() / 1000), static_cast<long long>(c.engine->yield_base_ns() / 1000),
             static_cast<long long>(c.engine->yield_max_ns() / 1000));
}

// Round 2: shared memory between the ranks of each host.
HcclResult setup_shm(Comm &c, const std::vector<RankInfo> &info, const std::string &job) {
  const std::vector<int> &local = c.topo.local(c.rank);
  std::unique_ptr<shm::Hub> hub;
  SegmentInfo seg;
  std::memset(&seg, 0, sizeof(seg));
  seg.fd = -1;
  if (local.size() > 1) {
    char name[120];
    std::snprintf(name, sizeof(name), "/pyhccl-%s-%u-%llu", job.c_str(), c.rank,
                  static_cast<unsigned long long>(g_comm_seq.fetch_add(1)));
    shm::Hub::Options opt;
    opt.rank = static_cast<int>(c.rank);
    opt.nranks = static_cast<int>(c.nranks);
    opt.local = local;
    opt.slot_bytes = info[0].slot_bytes;  // rank 0 decides: layouts must agree
    opt.slots = fifo_slots(c, info[0]);
    opt.board_bytes = info[0].board_bytes;
    std::string why;
    hub = shm::Hub::create(opt, name, &why);
    if (!hub) return fail_setup(c, HCCL_E_MEMORY, why);
    seg.ok = 1;
    seg.fd = hub->segment_fd();
    copy_str(seg.name, sizeof(seg.name), name);
  }
  std::vector<SegmentInfo> segs(c.nranks);
  HcclResult r = bootstrap_allgather(c.bootstrap, &seg, sizeof(seg), segs.data());
  if (r != HCCL_SUCCESS) return r;
  std::vector<shm::PeerDesc> peers(c.nranks);
  for (int p : local) {
    peers[p].segment = segs[p].name;
    peers[p].pid = info[p].pid;
    peers[p].start_time = info[p].start_time;
    peers[p].same_pid_ns = info[p].pid_ns == info[c.rank].pid_ns;
  }
  ReadyInfo ready{1, 1};
  if (hub) {
    std::string why;
    if (!hub->connect(peers, &why)) return fail_setup(c, HCCL_E_MEMORY, why);
    hub->set_identity(comm_uid(job, c.name), c.name);
    // Single copy maps peers' memory through /proc/<pid>/fd: probe it once.
    for (int p : local) {
      if (p == static_cast<int>(c.rank)) continue;
      std::string path = "/proc/" + std::to_string(info[p].pid) + "/fd/" + std::to_string(segs[p].fd);
      int fd = peers[p].same_pid_ns ? open(path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
      if (fd < 0) ready.can_map = 0;
      else close(fd);
    }
  }
  std::vector<ReadyInfo> all(c.nranks);
  r = bootstrap_allgather(c.bootstrap, &ready, sizeof(ready), all.data());
  if (r != HCCL_SUCCESS) return r;
  c.single_copy_ok = true;
  for (const ReadyInfo &a : all) c.single_copy_ok = c.single_copy_ok && a.can_map;
  if (hub) {
    // Every rank has mapped every segment: the names can go, so nothing is
    // left in /dev/shm even if a process is killed later.
    hub->unlink_own();
    for (int p : local)
      if (p != static_cast<int>(c.rank)) c.engine->conns[p] = hub->connection(p);
    c.engine->hub = std::move(hub);
  }
  return HCCL_SUCCESS;
}

// Round 3: TCP between ranks on different hosts (or everywhere, with
// PYHCCL_TRANSPORT=tcp).
HcclResult setup_tcp(Comm &c, const std::vector<RankInfo> &info, const RootInfoView &root,
                     const std::vector<char> &remote, const char *api) {
  bool mine = false;
  for (char x : remote) mine = mine || x;
  ListenInfo li;
  std::memset(&li, 0, sizeof(li));
  int listen_fd = -1;
  const std::string congestion = common::env_str("PYHCCL_TCP_CONGESTION", "");
  if (mine) {
    std::string why;
    if (!congestion.empty() && !net::congestion_usable(congestion, &why))
      return fail_setup(c, HCCL_E_PARA, "PYHCCL_TCP_CONGESTION=" + congestion + ": " + why);
    net::LocalAddr local;
    HcclResult r = net::choose_local_addr(api, &local);
    if (r != HCCL_SUCCESS) return fail_setup(c, r, hostrt::last_error());
    net::SockAddr bound;
    listen_fd = tcp::open_listener(local.addr, api, &bound, &r);
    if (listen_fd < 0) return fail_setup(c, r, hostrt::last_error());
    li.ok = 1;
    li.port = bound.port();
    copy_str(li.host, sizeof(li.host), bound.host());
  }
  std::vector<ListenInfo> all(c.nranks);
  HcclResult r = bootstrap_allgather(c.bootstrap, &li, sizeof(li), all.data());
  if (r != HCCL_SUCCESS || !mine) {
    net::close_fd(listen_fd);
    return r;
  }
  tcp::Setup s;
  s.rank = static_cast<int>(c.rank);
  s.nranks = static_cast<int>(c.nranks);
  s.remote = remote;
  s.addrs.resize(c.nranks);
  for (uint32_t p = 0; p < c.nranks; ++p)
    if (remote[p] && !net::parse_addr(all[p].host, all[p].port, &s.addrs[p])) {
      net::close_fd(listen_fd);
      return fail_setup(c, HCCL_E_INTERNAL, "rank " + std::to_string(p) + " published no usable address");
    }
  for (uint32_t p = 0; p < c.nranks; ++p) s.hosts.push_back(c.topo.host_names[c.topo.host_of[p]]);
  std::memcpy(s.secret, root.secret, sizeof(s.secret));
  std::memcpy(s.nonce, info[0].nonce, sizeof(s.nonce));
  s.nsock = static_cast<int>(info[0].sockets_per_peer);
  s.buffer_bytes = static_cast<int>(info[0].socket_buffer);
  s.deadline = net::Clock::now() + std::chrono::seconds(connect_timeout_s());
  s.exec_timeout_s = c.settings.exec_timeout_s;
  s.congestion = congestion;
  s.watch_fd = bootstrap_fd(c.bootstrap);
  return tcp::connect_all(s, listen_fd, &c.engine->conns, [&c](HcclResult code, const std::string &why) {
    if (code == HCCL_E_REMOTE)  // another rank failed first: its verdict is waiting in the bootstrap
      return bootstrap_allgather(c.bootstrap, nullptr, 0, nullptr);
    return fail_setup(c, code, why);
  });
}

}  // namespace

namespace {

HcclResult init_impl(const RootInfoView &view, uint32_t nranks, uint32_t rank,
                     const HcclCommConfig *config, const char *api, HcclComm *out);

}  // namespace

HcclResult comm_init(uint32_t nranks, const HcclRootInfo *root, uint32_t rank,
                     const HcclCommConfig *config, const char *api, HcclComm *out) {
  RootInfoView view;
  HcclResult r = root_info_parse(root, &view, api);
  if (r != HCCL_SUCCESS) return r;
  common::setup_begin();
  r = init_impl(view, nranks, rank, config, api, out);
  const bool cancelled = r != HCCL_SUCCESS && common::setup_cancelled();
  common::setup_end();
  if (cancelled) {
    return HCCL_FAIL(HCCL_E_UNAVAIL, "%s: rank %u: set-up was interrupted (PyhcclCancelSetups)", api, rank);
  }
  if (r != HCCL_SUCCESS) {
    // The rendezvous lives in the root's process: give it a moment to tell
    // the other ranks before this process (likely) exits on the error.
    std::string msg = hostrt::last_error();
    bootstrap_linger(view, std::chrono::seconds(2));
    hostrt::set_error("%s", msg.c_str());
  }
  return r;
}

namespace {

HcclResult init_impl(const RootInfoView &view, uint32_t nranks, uint32_t rank,
                     const HcclCommConfig *config, const char *api, HcclComm *out) {
  auto c = std::make_shared<Comm>();
  c->rank = rank;
  c->nranks = nranks;
  HcclResult r = read_comm_config(config, api, &c->settings);
  if (r != HCCL_SUCCESS) return r;
  // No device set: the communicator belongs to device 0 (the NULL stream
  // then still needs aclrtSetDevice, as in CANN).
  int32_t dev = hostrt::current_device();
  c->device = dev < 0 ? 0 : dev;
  std::string job = job_id_hex(view);
  c->name = c->settings.name.empty() ? "pyhccl-" + job : c->settings.name;

  r = bootstrap_connect(view, nranks, rank, &c->bootstrap, api);
  if (r != HCCL_SUCCESS) return r;  // c's destructor closes what was opened
  // Interrupted from now on: tell the others, so that they fail at once too.
  struct TellIfCancelled {
    Comm &c;
    bool armed = true;
    ~TellIfCancelled() {
      if (armed && common::setup_cancelled())
        bootstrap_fail(c.bootstrap, HCCL_E_REMOTE,
                       "rank " + std::to_string(c.rank) + " was interrupted during set-up");
    }
  } tell{*c};

  // Round 1: what every rank is; rank 0's tuning is everyone's.
  RankInfo mine = RankInfo::of_this_process(c->device, nranks);
  std::vector<RankInfo> info(nranks);
  r = bootstrap_allgather(c->bootstrap, &mine, sizeof(mine), info.data());
  if (r != HCCL_SUCCESS) return r;
  for (const RankInfo &p : info)
    if (p.version != kRankInfoVersion)
      return fail_setup(*c, HCCL_E_INTERNAL, "peers run different pyhccl builds (set-up record version " +
                                                 std::to_string(p.version) + " vs " +
                                                 std::to_string(kRankInfoVersion) + ")");
  std::string bad;
  c->tuning = info[0].tuning(&bad);
  warn_tuning_once(info[0].pyhccl_algo, info[0].hccl_algo, bad);
  std::vector<HostIdentity> ids(nranks);
  for (uint32_t p = 0; p < nranks; ++p) ids[p] = info[p].host;
  c->topo = build_topology(ids);

  c->engine.reset(new Engine(static_cast<int>(rank), static_cast<int>(nranks)));
  c->engine->set_exec_timeout(c->settings.exec_timeout_s);
  c->engine->conns[rank].reset(new SelfConnection(static_cast<int>(rank)));

  // Which pairs talk over TCP: different hosts, or all with PYHCCL_TRANSPORT=tcp.
  const bool all_tcp = info[0].all_tcp != 0;
  std::vector<char> remote(nranks, 0);
  bool any_local = false, any_remote = false;
  for (uint32_t p = 0; p < nranks; ++p) {
    for (uint32_t q = 0; q < nranks; ++q) {
      bool tcp_pair = p != q && (all_tcp || !c->topo.same_host(p, q));
      any_remote = any_remote || tcp_pair;
      any_local = any_local || (p != q && !tcp_pair);
      if (p == rank && tcp_pair) remote[q] = 1;
    }
  }
  c->engine->set_spin(ranks_on_machine(ids, static_cast<int>(rank)), any_remote);
  if (any_local && (r = setup_shm(*c, info, job)) != HCCL_SUCCESS) return r;
  if (any_remote && (r = setup_tcp(*c, info, view, remote, api)) != HCCL_SUCCESS) return r;
  // The link between hosts, for the cost model: what rank 0 declared, the rest measured.
  LinkInfo link;
  link.latency_ns = info[0].net_latency_ns;
  link.bits_per_s = info[0].net_bits_per_s;
  link.message_ns = static_cast<uint32_t>(std::min<uint64_t>(info[0].net_message_ns, UINT32_MAX));
  link.measured = (link.latency_ns == 0 ? kLatencyMeasured : 0) | (link.bits_per_s == 0 ? kRateMeasured : 0) |
                  (link.message_ns == 0 ? kMessageMeasured : 0);
  std::string why;
  if ((r = probe_link(*c, &link, &why)) != HCCL_SUCCESS) return fail_setup(*c, r, why);
  // Last round: a rank that failed its connections has failed the job at the
  // root; nobody returns a communicator before everyone got this far. It
  // brings rank 0's link to everyone.
  std::vector<LinkInfo> links(nranks);
  if ((r = bootstrap_allgather(c->bootstrap, &link, sizeof(link), links.data())) != HCCL_SUCCESS) return r;
  c->tuning.set_net(links[0].latency_ns, links[0].bits_per_s, links[0].message_ns);
  warn_shared_devices(*c, info);
  log_setup(*c, info[0], links[0]);
  tell.armed = false;
  *out = comm_register(c);
  return HCCL_SUCCESS;
}

}  // namespace
}  // namespace hccl
