// Small TCP socket helpers shared by the bootstrap and the TCP transport. All
// sockets are non-blocking and close-on-exec.
#pragma once

#include <chrono>
#include <string>

#include "hccl/hccl_types.h"
#include "hccl/net/addr.h"

namespace hccl {
namespace net {

using Clock = std::chrono::steady_clock;

// Listens on `local` (its port ignored): on the first free port from
// HCCL_IF_BASE_PORT on (64 tried), else on an ephemeral port. *bound gets the
// address actually bound. Returns the fd, or -1 after setting a message that
// names `api` (and *code: E_PARA for a bad variable, E_TCP_CONNECT otherwise).
int listen_on(const SockAddr &local, const char *api, SockAddr *bound, HcclResult *code);

// Whether a connection met itself: a dial to a free port of the ephemeral
// range can be given that same port as its local one (TCP's simultaneous
// open), and then holds the port against the process that is to listen there.
bool self_connected(int fd);

// Starts a non-blocking connect; returns the fd (connected or in progress) or
// -1 with *err set.
int connect_start(const SockAddr &peer, int *err);
// After POLLOUT on a connecting fd: 0 when connected, else the errno.
int connect_result(int fd);
// Dials `peer` until it accepts or `deadline`, backing off between failed
// attempts; refusals (ECONNREFUSED: nothing listens there) end it after
// `refused_for` of nothing but refusals. Returns the fd, or -1 with *last_err set.
int dial(const SockAddr &peer, Clock::time_point deadline, int *last_err,
         Clock::duration refused_for = Clock::duration::max());

// TCP_NODELAY (and no SIGPIPE where the platform has a socket option for it).
void set_nodelay(int fd);
// TCP_QUICKACK: leaves the kernel's delayed-ACK (interactive) mode for now and
// sends an ACK that is due; not sticky (transport/tcp/conn.h, kQuickAckBytes).
void quick_ack(int fd);
// TCP_CONGESTION: fd's congestion control by name ("cubic", "reno", ...);
// 0, or the errno of the refusal.
int set_congestion(int fd, const std::string &name);
// Whether this process can give its sockets congestion control `name` (tried
// on a socket of its own); else *why says why, naming what the kernel offers.
bool congestion_usable(const std::string &name, std::string *why);
// Socket buffers of `bytes` each way (the kernel may cap them).
void set_buffers(int fd, int bytes);
// How a connection rides out an outage (docs/TRANSPORT.md, "Outages"): the
// retransmission backoff capped at 1 s (TCP_RTO_MAX_MS, Linux >= 6.15; refused
// elsewhere, logged once at info level), so data moves within about a second
// of a link's return; and the kernel drops the connection once sent data has
// gone unacknowledged for exec_timeout_s + kOutageGraceS, never before the
// exec timeout fails the waiting operation. Keepalive stays off: an idle
// connection survives any outage.
constexpr int kRtoMaxMs = 1000;
constexpr int kOutageGraceS = 5;
void set_outage_limits(int fd, int exec_timeout_s);
void close_fd(int fd);
// Milliseconds until `deadline`, rounded up and clamped to [0, cap_ms], for poll().
int poll_ms(Clock::time_point deadline, int cap_ms = 1000);

std::string errno_text(int err);

}  // namespace net
}  // namespace hccl
