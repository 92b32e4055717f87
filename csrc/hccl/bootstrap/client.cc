// A rank's side of the bootstrap: dial the root, answer its challenge with an
// HMAC keyed by the job secret and check the root's proof (wire.h), wait for
// everyone, then allgather rounds. Every wait is bounded by
// HCCL_CONNECT_TIMEOUT; a failure is sticky because the stream is out of step.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>
#include <vector>

#include "common/hmac.h"
#include "common/random.h"
#include "hccl/bootstrap/bootstrap.h"
#include "hccl/bootstrap/server.h"
#include "hccl/bootstrap/wire.h"
#include "hccl/net/socket.h"
#include "runtime/hostrt.h"
#include "hccl/fail.h"

namespace hccl {

using bsnet::Clock;
using bsnet::Io;

class Bootstrap {
 public:
  int fd = -1;
  uint32_t nranks = 0;
  uint32_t rank = 0;
  std::string where;  // root "host:port"
  std::string api = "HcclCommInitRootInfo";
  HcclResult failed = HCCL_SUCCESS;  // sticky first failure
  std::string fail_msg;

  ~Bootstrap() { bsnet::close_fd(fd); }

  // Records and reports a failure; every later call returns it again.
  HcclResult fail(HcclResult code, const std::string &msg) {
    failed = code;
    fail_msg = api + ": " + msg;
    return HCCL_FAIL(code, "%s", fail_msg.c_str());
  }
};

namespace {

// Waits up to `grace` past the deadline for the server's verdict: the server
// keeps the authoritative join clock and names the missing ranks.
constexpr auto kVerdictGrace = std::chrono::milliseconds(500);

HcclResult decode_error(const std::vector<uint8_t> &p, std::string *msg) {
  uint32_t code_be = 0;
  if (p.size() >= 4) std::memcpy(&code_be, p.data(), 4);
  uint32_t code = ntohl(code_be);
  *msg = p.size() > 4 ? std::string(p.begin() + 4, p.end()) : "the root reported an unspecified failure";
  return code == 0 ? HCCL_E_INTERNAL : static_cast<HcclResult>(code);
}

// Reads one frame; *payload receives it unless type is kResult, which is left
// for the caller to read into its own buffer. Unknown tags read as kError-less
// protocol failures (returns kError with *err = EPROTO).
Io read_frame(int fd, Clock::time_point deadline, uint32_t *type, uint64_t *len,
              std::vector<uint8_t> *payload, int *err) {
  uint8_t hdr[bsnet::kHeaderBytes];
  Io io = bsnet::recv_all(fd, hdr, sizeof(hdr), deadline, err);
  if (io != Io::kOk) return io;
  if (!bsnet::decode_header(hdr, type, len) || (*type != bsnet::kResult && *len > bsnet::kMaxErrorText + 4)) {
    *err = EPROTO;
    return Io::kError;
  }
  if (*type == bsnet::kResult) return Io::kOk;
  payload->resize(*len);
  return bsnet::recv_all(fd, payload->data(), *len, deadline, err);
}

std::string io_text(Io io, int err) {
  if (io == Io::kClosed) return err ? bsnet::errno_text(err) : "connection closed";
  if (err == EPROTO) return "garbled message";
  return bsnet::errno_text(err);
}

HcclResult connect_impl(const RootInfoView &root, uint32_t nranks, uint32_t rank, Bootstrap **out,
                        const char *api) {
  if (api == nullptr) api = "HcclCommInitRootInfo";
  if (out == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: comm is a null pointer", api);
  }
  *out = nullptr;
  if (nranks == 0 || nranks > bsnet::kMaxRanks) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: nRanks (%u) must be 1 to %u", api, nranks, bsnet::kMaxRanks);
  }
  if (rank >= nranks) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rank (%u) is out of range for nRanks %u", api, rank, nranks);
  }
  net::SockAddr sa;
  if (std::memchr(root.host, '\0', sizeof(root.host)) == nullptr || !net::parse_addr(root.host, root.port, &sa) ||
      root.port == 0) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: rootInfo holds no valid root address (corrupted?)", api);
  }
  Bootstrap *bs;
  try {
    bs = new Bootstrap;
    bs->api = api;
    bs->where = sa.str();
  } catch (const std::bad_alloc &) {
    return HCCL_FAIL(HCCL_E_MEMORY, "%s: out of memory", api);
  }
  bs->nranks = nranks;
  bs->rank = rank;
  int timeout = connect_timeout_s();
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(timeout);
  HcclResult r = HCCL_SUCCESS;
  int err = 0;
  // The root listens before it hands out a root info: refusals mean it has
  // gone (or served its communicator already), not that it is late.
  bs->fd = net::dial(sa, deadline, &err, std::chrono::seconds(3));
  if (bs->fd < 0) {
    std::string why = bsnet::errno_text(err);
    if (err == ECONNREFUSED)
      r = bs->fail(HCCL_E_TCP_CONNECT, "rank " + std::to_string(rank) + " could not connect to the root at " +
                                           bs->where + ": " + why +
                                           " (the root process has exited, or its root info was used "
                                           "already: a root info serves one communicator)");
    else
      r = bs->fail(HCCL_E_TIMEOUT, "rank " + std::to_string(rank) + " could not connect to the root at " +
                                       bs->where + " within " + std::to_string(timeout) + " s: " + why);
    delete bs;
    return r;
  }
  bsnet::set_nodelay(bs->fd);

  uint32_t type = 0;
  uint64_t len = 0;
  std::vector<uint8_t> payload;
  bool proven = false;  // the root showed it holds the secret
  Io io = read_frame(bs->fd, deadline, &type, &len, &payload, &err);
  if (io == Io::kOk && type == bsnet::kChallenge && payload.size() == sizeof(bsnet::ChallengePayload) &&
      std::memcmp(payload.data(), bsnet::kHelloMagic, sizeof(bsnet::kHelloMagic)) == 0) {
    bsnet::ChallengePayload ch;
    std::memcpy(&ch, payload.data(), sizeof(ch));
    bsnet::HelloPayload h;
    std::memcpy(h.magic, bsnet::kHelloMagic, sizeof(h.magic));
    if (!fill_random(h.nonce, sizeof(h.nonce))) {
      r = bs->fail(HCCL_E_SYSCALL, "getrandom() failed: " + bsnet::errno_text(errno));
      delete bs;
      return r;
    }
    h.nranks = htonl(nranks);
    h.rank = htonl(rank);
    bsnet::hello_mac(root.secret, ch.nonce, h, h.mac);
    uint8_t hello[bsnet::kHeaderBytes + sizeof(h)];
    bsnet::encode_header(hello, bsnet::kHello, sizeof(h));
    std::memcpy(hello + bsnet::kHeaderBytes, &h, sizeof(h));
    io = bsnet::send_all(bs->fd, hello, sizeof(hello), deadline, &err);
    // Even if the hello did not go out whole, the root may have said why.
    if (io == Io::kOk || io == Io::kClosed)
      io = read_frame(bs->fd, io == Io::kOk ? deadline + kVerdictGrace : Clock::now() + kVerdictGrace, &type, &len,
                      &payload, &err);
    if (io == Io::kOk && type == bsnet::kProof) {
      uint8_t want[32];
      bsnet::proof_mac(root.secret, ch.nonce, h, want);
      if (payload.size() != sizeof(want) || !equal_ct(payload.data(), want, sizeof(want))) {
        r = bs->fail(HCCL_E_TCP_CONNECT, "rank " + std::to_string(rank) + ": the root at " + bs->where +
                                             " could not prove it holds the job secret (another process "
                                             "listening at its address?)");
        delete bs;
        return r;
      }
      proven = true;
      io = read_frame(bs->fd, deadline + kVerdictGrace, &type, &len, &payload, &err);
    }
  }
  if (io == Io::kOk && proven && type == bsnet::kReady && payload.size() == 4) {
    uint32_t n_be;
    std::memcpy(&n_be, payload.data(), 4);
    if (ntohl(n_be) == nranks) {
      *out = bs;
      return HCCL_SUCCESS;
    }
  }
  std::string msg;
  if (io == Io::kOk && type == bsnet::kError)
    r = bs->fail(decode_error(payload, &msg), msg);
  else if (io == Io::kTimeout)
    r = bs->fail(HCCL_E_TIMEOUT, "timed out after " + std::to_string(timeout) + " s waiting for all " +
                                     std::to_string(nranks) + " ranks to join (rank " + std::to_string(rank) +
                                     "; no answer from the root at " + bs->where + ")");
  else if (io == Io::kOk)
    r = bs->fail(HCCL_E_TCP_TRANSFER, "unexpected answer from the root at " + bs->where + " while joining");
  else
    r = bs->fail(HCCL_E_TCP_TRANSFER, "lost the connection to the root at " + bs->where + " while waiting for all " +
                                          std::to_string(nranks) + " ranks to join: " + io_text(io, err));
  delete bs;
  return r;
}

}  // namespace

HcclResult bootstrap_connect(const RootInfoView &root, uint32_t nranks, uint32_t rank, Bootstrap **out,
                             const char *api) {
  try {
    return connect_impl(root, nranks, rank, out, api);
  } catch (const std::exception &e) {
    return HCCL_FAIL(HCCL_E_INTERNAL, "%s: bootstrap failed: %s", api ? api : "HcclCommInitRootInfo", e.what());
  }
}

HcclResult bootstrap_connect(const RootInfoView &root, uint32_t nranks, uint32_t rank, Bootstrap **out) {
  return bootstrap_connect(root, nranks, rank, out, nullptr);
}

void bootstrap_set_api(Bootstrap *bs, const char *api) {
  if (bs != nullptr && api != nullptr) bs->api = api;
}

static HcclResult allgather_impl(Bootstrap *bs, const void *mine, size_t bytes, void *all) {
  if (bs->failed != HCCL_SUCCESS) {
    return HCCL_FAIL(bs->failed, "%s", bs->fail_msg.c_str());
  }
  std::string who = "bootstrap allgather (rank " + std::to_string(bs->rank) + " of " + std::to_string(bs->nranks) + "): ";
  if (bytes > 0 && (mine == nullptr || all == nullptr)) {
    return HCCL_FAIL(HCCL_E_PTR, "%s: %snull buffer for %zu bytes", bs->api.c_str(), who.c_str(), bytes);
  }
  if (bytes > bsnet::kMaxContribution || uint64_t(bytes) * bs->nranks > bsnet::kMaxRoundBytes) {
    return HCCL_FAIL(HCCL_E_PARA, "%s: %s%zu bytes per rank exceeds the bootstrap limits (%llu per rank, %llu per round)",
                                  bs->api.c_str(), who.c_str(), bytes, static_cast<unsigned long long>(bsnet::kMaxContribution),
                                  static_cast<unsigned long long>(bsnet::kMaxRoundBytes));
  }
  int timeout = connect_timeout_s();
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(timeout);
  int err = 0;
  uint8_t hdr[bsnet::kHeaderBytes];
  bsnet::encode_header(hdr, bsnet::kContrib, bytes);
  Io io = bsnet::send_all(bs->fd, hdr, sizeof(hdr), deadline, &err);
  if (io == Io::kOk && bytes > 0) io = bsnet::send_all(bs->fd, mine, bytes, deadline, &err);

  uint32_t type = 0;
  uint64_t len = 0;
  std::vector<uint8_t> payload;
  // On a failed send the root may already have said why it failed the job.
  if (io == Io::kOk || io == Io::kClosed)
    io = read_frame(bs->fd, io == Io::kOk ? deadline : Clock::now() + kVerdictGrace, &type, &len, &payload, &err);
  if (io == Io::kOk && type == bsnet::kResult && len == uint64_t(bytes) * bs->nranks) {
    io = bsnet::recv_all(bs->fd, all, len, deadline, &err);
    if (io == Io::kOk) return HCCL_SUCCESS;
  }
  std::string msg;
  if (io == Io::kOk && type == bsnet::kError) {
    // The root's verdict speaks for itself (it names the rank at fault).
    HcclResult code = decode_error(payload, &msg);
    return bs->fail(code, msg);
  }
  if (io == Io::kTimeout)
    return bs->fail(HCCL_E_TIMEOUT, who + "timed out after " + std::to_string(timeout) + " s waiting for the other ranks");
  if (io == Io::kOk)
    return bs->fail(HCCL_E_TCP_TRANSFER, who + "unexpected answer from the root at " + bs->where);
  return bs->fail(HCCL_E_TCP_TRANSFER, who + "lost the connection to the root at " + bs->where + ": " + io_text(io, err));
}

HcclResult bootstrap_allgather(Bootstrap *bs, const void *mine, size_t bytes, void *all) {
  if (bs == nullptr) {
    return HCCL_FAIL(HCCL_E_PTR, "bootstrap allgather: null bootstrap handle");
  }
  try {
    return allgather_impl(bs, mine, bytes, all);
  } catch (const std::exception &e) {
    return bs->fail(HCCL_E_INTERNAL, std::string("bootstrap allgather: ") + e.what());
  }
}

HcclResult bootstrap_fail(Bootstrap *bs, HcclResult code, const std::string &msg) {
  if (bs == nullptr) return code;
  if (bs->failed == HCCL_SUCCESS && bs->fd >= 0) {
    std::string text = msg.substr(0, bsnet::kMaxErrorText);
    std::vector<uint8_t> frame(bsnet::kHeaderBytes + 4 + text.size());
    bsnet::encode_header(frame.data(), bsnet::kFail, 4 + text.size());
    uint32_t code_be = htonl(static_cast<uint32_t>(code));
    std::memcpy(frame.data() + bsnet::kHeaderBytes, &code_be, 4);
    std::memcpy(frame.data() + bsnet::kHeaderBytes + 4, text.data(), text.size());
    int err = 0;
    Io io = bsnet::send_all(bs->fd, frame.data(), frame.size(), Clock::now() + std::chrono::seconds(1), &err);
    // The root's verdict: this message, or that of a rank that failed first.
    uint32_t type = 0;
    uint64_t len = 0;
    std::vector<uint8_t> payload;
    if (io == Io::kOk || io == Io::kClosed)
      io = read_frame(bs->fd, Clock::now() + std::chrono::seconds(2), &type, &len, &payload, &err);
    std::string verdict;
    if (io == Io::kOk && type == bsnet::kError) {
      code = decode_error(payload, &verdict);
      return bs->fail(code, verdict);
    }
  }
  bs->failed = code;
  bs->fail_msg = bs->api + ": " + msg;
  return HCCL_FAIL(code, "%s", bs->fail_msg.c_str());
}

int bootstrap_fd(const Bootstrap *bs) { return bs == nullptr ? -1 : bs->fd; }

void bootstrap_linger(const RootInfoView &root, std::chrono::milliseconds limit) {
  bsnet::wait_server(job_id_hex(root), limit);
}

void bootstrap_close(Bootstrap *bs) {
  if (bs == nullptr) return;
  if (bs->fd >= 0 && bs->failed == HCCL_SUCCESS) {
    uint8_t hdr[bsnet::kHeaderBytes];
    bsnet::encode_header(hdr, bsnet::kBye, 0);
    int err = 0;
    bsnet::send_all(bs->fd, hdr, sizeof(hdr), Clock::now() + std::chrono::seconds(1), &err);
  }
  delete bs;
}

void bootstrap_abort(Bootstrap *bs) { delete bs; }

}  // namespace hccl
