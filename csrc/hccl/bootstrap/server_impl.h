// Internal to the bootstrap server (server.cc, server_job.cc): one
// connection's state and the Server class.
#pragma once

#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "common/env.h"
#include "hccl/bootstrap/server.h"
#include "hccl/bootstrap/wire.h"

namespace hccl {
namespace bsnet {
namespace srv {

using Buffer = std::shared_ptr<const std::vector<uint8_t>>;
constexpr auto kLinger = std::chrono::seconds(2);  // to flush errors before closing
constexpr int kMaxLoggedRefusals = 8;
// Connections that have not said an authentic hello yet: at most this many (well below a
// process's usual fd limit), each for at most kHelloDeadline; when full, the
// oldest is dropped for the newcomer, so idle connections cannot keep real
// ranks out.
constexpr size_t kMaxPending = 64;
constexpr auto kHelloDeadline = std::chrono::seconds(1);

struct Conn {
  enum State { kPending, kJoined, kBye, kClosing };
  int fd = -1;
  State state = kPending;
  uint32_t rank = 0;
  uint8_t challenge[kNonceBytes] = {};  // sent on accept; the hello must answer this one
  std::string peer;
  std::vector<uint8_t> in;  // bytes received, not parsed yet
  std::deque<Buffer> out;   // frames to send, shared between connections
  size_t out_off = 0;       // bytes of out.front() already sent
  bool wr_shut = false;
  Clock::time_point deadline;  // hello due (kPending) / give up flushing (kClosing)
};

Buffer make_frame(uint32_t type, const void *payload, size_t len);
Buffer make_error(HcclResult code, const std::string &msg);
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

class Server {
 public:
  explicit Server(const ServerConfig &cfg) : cfg_(cfg) {}
  ~Server() {
    set_unflushed(false);
    for (Conn &c : conns_) close_fd(c.fd);
    close_fd(cfg_.listen_fd);
  }
  void run();
  const std::string &where() const { return cfg_.where; }

 private:
  void accept_all();
  void on_readable(Conn &c);
  bool on_frame(Conn &c, uint32_t type, const uint8_t *p, uint64_t len);
  void on_hello(Conn &c, const HelloPayload &h);
  void on_contrib(Conn &c, const uint8_t *p, uint64_t len);
  void on_bye(Conn &c);
  void on_lost(Conn &c, const std::string &why);
  void flush(Conn &c);
  void refuse(Conn &c, const char *why, bool tell_peer);
  void fail(HcclResult code, const std::string &msg, Conn *extra = nullptr);
  void send_to(Conn &c, const Buffer &b) {
    c.out.push_back(b);
    set_unflushed(true);
  }
  // Counts this server among those with frames not yet handed to the kernel;
  // the root's process waits for them at exit (see server.cc).
  void set_unflushed(bool v);
  void start_closing(Conn &c, const Buffer &last);
  void drop(Conn &c);
  void check_deadlines(Clock::time_point now);
  Clock::time_point next_deadline() const;

  ServerConfig cfg_;
  std::list<Conn> conns_;  // stable addresses: by_rank_ points into it
  std::vector<Conn *> by_rank_;
  uint32_t nranks_ = 0;      // 0 until the first rank joined
  uint32_t first_rank_ = 0;  // who set nranks_, for the mismatch message
  uint32_t joined_ = 0, byes_ = 0;
  bool running_ = false;  // all ranks joined
  bool done_ = false;
  Clock::time_point idle_deadline_, join_deadline_, accept_pause_until_;
  // Allgather round in progress.
  std::vector<std::vector<uint8_t>> round_data_;
  std::vector<bool> have_;
  uint32_t round_count_ = 0, round_first_ = 0;
  uint64_t round_bytes_ = 0;
  // After a failure: who arrives until latecomer_until_ gets the error too.
  bool failed_ = false;
  Buffer fail_frame_;
  Clock::time_point latecomer_until_, hard_deadline_;
  int refusals_logged_ = 0;
  bool unflushed_ = false;
  // PYHCCL_FAULT=slow_bootstrap_server: pause after answering each rank, so
  // that a test can check the root's exit still lets every answer out.
  bool slow_ = std::strcmp(common::env_str("PYHCCL_FAULT", ""), "slow_bootstrap_server") == 0;
};

}  // namespace srv
}  // namespace bsnet
}  // namespace hccl
