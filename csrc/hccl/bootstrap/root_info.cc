// Root info: opens the rendezvous listen socket, starts its server and writes
// the blob ranks use to find it; parses a blob received from the root.
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hccl/bootstrap/bootstrap.h"
#include "hccl/bootstrap/server.h"
#include "hccl/bootstrap/wire.h"
#include "common/random.h"
#include "hccl/net/netif.h"
#include "hccl/net/socket.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {

namespace {

constexpr char kMagic[8] = {'P', 'Y', 'H', 'C', 'C', 'L', '1', '\0'};
constexpr uint32_t kVersion = 1;

static_assert(sizeof(RootInfoView) <= HCCL_ROOT_INFO_BYTES, "root info view must fit the blob");

}  // namespace

HcclResult root_info_create(void *out_blob, size_t blob_bytes) {
  if (out_blob == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "HcclGetRootInfo: rootInfo is a null pointer");
  }
  if (blob_bytes < sizeof(RootInfoView)) {
    return HCCL_FAIL(HCCL_E_PARA, "HcclGetRootInfo: root info buffer of %zu bytes is too small (need %zu)", blob_bytes,
                                  sizeof(RootInfoView));
  }
  net::LocalAddr local;
  HcclResult r = net::choose_local_addr("HcclGetRootInfo", &local);
  if (r != HCCL_SUCCESS) return r;

  RootInfoView view{};
  std::memcpy(view.magic, kMagic, sizeof(kMagic));
  if (!fill_random(view.secret, sizeof(view.secret)) || !fill_random(view.job_id, sizeof(view.job_id))) {
    return HCCL_FAIL(HCCL_E_SYSCALL, "HcclGetRootInfo: getrandom() failed: %s", bsnet::errno_text(errno).c_str());
  }
  net::SockAddr bound;
  int fd = net::listen_on(local.addr, "HcclGetRootInfo", &bound, &r);
  if (fd < 0) return r;
  const std::string host = bound.host();
  const uint16_t port = bound.port();

  bsnet::ServerConfig cfg;
  cfg.listen_fd = fd;
  std::memcpy(cfg.secret, view.secret, sizeof(cfg.secret));
  cfg.where = bound.str();
  cfg.job = job_id_hex(view);
  cfg.join_timeout_s = connect_timeout_s();
  cfg.idle_timeout_s = std::max(connect_timeout_s(), exec_timeout_s());
  r = bsnet::start_server(cfg);
  if (r != HCCL_SUCCESS) return r;

  // The blob is the view in little-endian byte order, then zeros.
  std::snprintf(view.host, sizeof(view.host), "%s", host.c_str());
  view.version = htole32(kVersion);
  view.port = htole16(port);
  std::memset(out_blob, 0, blob_bytes);
  std::memcpy(out_blob, &view, sizeof(view));
  return HCCL_SUCCESS;
}

HcclResult root_info_parse(const void *blob, RootInfoView *view, const char *api) {
  if (api == nullptr) api = "HcclCommInitRootInfo";
  if (blob == nullptr || view == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: rootInfo is a null pointer", api);
  }
  RootInfoView v;
  std::memcpy(&v, blob, sizeof(v));
  if (std::memcmp(v.magic, kMagic, sizeof(kMagic)) != 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rootInfo is not a root info made by HcclGetRootInfo (bad magic)", api);
  }
  v.version = le32toh(v.version);
  v.port = le16toh(v.port);
  if (v.version != kVersion) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rootInfo has version %u, this library reads version %u",
                                  api, v.version, kVersion);
  }
  net::SockAddr a;
  if (std::memchr(v.host, '\0', sizeof(v.host)) == nullptr || !net::parse_addr(v.host, v.port, &a) ||
      v.port == 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rootInfo holds no valid root address (corrupted?)", api);
  }
  *view = v;
  return HCCL_SUCCESS;
}

HcclResult root_info_parse(const void *blob, RootInfoView *view) {
  return root_info_parse(blob, view, nullptr);
}

void root_info_encode(const RootInfoView &view, void *blob, size_t blob_bytes) {
  RootInfoView v = view;
  std::memcpy(v.magic, kMagic, sizeof(kMagic));
  v.version = htole32(kVersion);
  v.port = htole16(view.port);
  std::memset(blob, 0, blob_bytes);
  std::memcpy(blob, &v, sizeof(v) < blob_bytes ? sizeof(v) : blob_bytes);
}

std::string job_id_hex(const RootInfoView &view) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * sizeof(view.job_id));
  for (uint8_t b : view.job_id) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

}  // namespace hccl
