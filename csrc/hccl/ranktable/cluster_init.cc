// HcclCommInitClusterInfo[Config]: a communicator from CANN's rank table.
//
// There is no root info to pass around, so every rank derives the same one
// from what it shares with the others, the file:
//   address  rank 0's server: its host_ip, else its server_id when that is
//            an IP address, else (a single server) 127.0.0.1;
//   port     rank 0's host_port (version 1.2), else HCCL_IF_BASE_PORT, else
//            60000 (CANN's default base port);
//   secret   SHA-256 of the file's bytes (with a label), job id likewise.
// Rank 0 opens the rendezvous on exactly that address and port; the others
// dial it until HCCL_CONNECT_TIMEOUT. The secret keeps out strays and other
// jobs, not someone who can read the file: whoever reads the rank table can
// join the job.
#include <unistd.h>

#include <cstring>

#include "common/env.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/bootstrap/server.h"
#include "hccl/comm/sub_comm.h"
#include "hccl/net/addr.h"
#include "hccl/net/socket.h"
#include "hccl/ranktable/rank_table.h"
#include "common/sha256.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {
namespace {

constexpr uint16_t kDefaultPort = 60000;

void labelled_hash(const char *label, const std::string &bytes, uint8_t out[32]) {
  Sha256 h;
  h.update(label, std::strlen(label) + 1);
  h.update(bytes.data(), bytes.size());
  h.finish(out);
}

// Where rank 0 listens; E_PARA with a message when the table does not say.
HcclResult rendezvous(const RankTable &t, const char *path, const char *api, std::string *host,
                      uint16_t *port) {
  const auto &w = t.where[0];
  const RankTable::Server &s = t.servers[w.first];
  net::SockAddr a;
  if (!s.host_ip.empty()) {
    *host = s.host_ip;
  } else if (net::parse_addr(s.id, 0, &a)) {
    *host = s.id;
  } else if (t.servers.size() == 1) {
    *host = "127.0.0.1";
  } else {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rank table %s: server_list[%u] (rank 0's server \"%s\") has no "
                                  "host_ip and its server_id is not an IP address: no address for rank 0's "
                                  "rendezvous", api, path, w.first, s.id.c_str());
  }
  const int host_port = s.devices[w.second].host_port;
  if (host_port > 0) {
    *port = static_cast<uint16_t>(host_port);
    return HCCL_SUCCESS;
  }
  const char *env = common::env_str("HCCL_IF_BASE_PORT", "");
  if (*env == '\0') {
    *port = kDefaultPort;
    return HCCL_SUCCESS;
  }
  int64_t p = 0;
  if (!common::parse_int64(env, &p) || p < 1 || p > 65535) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: HCCL_IF_BASE_PORT=\"%s\" is not a port number (1-65535)", api, env);
  }
  *port = static_cast<uint16_t>(p);
  return HCCL_SUCCESS;
}

// Rank 0: the rendezvous server on exactly host:port.
HcclResult serve(const RootInfoView &v, const char *api) {
  net::SockAddr a;
  net::parse_addr(v.host, v.port, &a);
  int fd = ::socket(a.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || ::bind(fd, a.sa(), a.len) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    int e = errno;
    net::close_fd(fd);
    return HCCL_FAIL(HCCL_E_TCP_CONNECT, "%s: rank 0 cannot listen on %s for the rendezvous (from the rank table; "
                                         "the port is rank 0's host_port, HCCL_IF_BASE_PORT or 60000): %s", api,
                                         a.str().c_str(), net::errno_text(e).c_str());
  }
  bsnet::ServerConfig cfg;
  cfg.listen_fd = fd;
  std::memcpy(cfg.secret, v.secret, sizeof(cfg.secret));
  cfg.where = a.str();
  cfg.join_timeout_s = connect_timeout_s();
  cfg.idle_timeout_s = connect_timeout_s() > exec_timeout_s() ? connect_timeout_s() : exec_timeout_s();
  return bsnet::start_server(cfg);
}

}  // namespace

HcclResult comm_init_rank_table(const char *path, uint32_t rank, const HcclCommConfig *config,
                                HcclComm *out, const char *api) {
  if (out == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: comm is NULL", api);
  }
  *out = nullptr;
  RankTable t;
  std::string bytes;
  HcclResult r = load_rank_table(path, api, &t, &bytes);
  if (r != HCCL_SUCCESS) return r;
  if (rank >= t.nranks) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rank (%u) is not in the rank table %s (its rank_ids are 0 to %u)", api,
                                  rank, path, t.nranks - 1);
  }
  RootInfoView v{};
  std::string host;
  r = rendezvous(t, path, api, &host, &v.port);
  if (r != HCCL_SUCCESS) return r;
  std::snprintf(v.host, sizeof(v.host), "%s", host.c_str());
  uint8_t job[32];
  labelled_hash("pyhccl rank table secret", bytes, v.secret);
  labelled_hash("pyhccl rank table job", bytes, job);
  std::memcpy(v.job_id, job, sizeof(v.job_id));
  if (rank == 0 && (r = serve(v, api)) != HCCL_SUCCESS) return r;
  HcclRootInfo blob;
  root_info_encode(v, &blob, sizeof(blob));
  return comm_init(t.nranks, &blob, rank, config, api, out);
}

}  // namespace hccl
