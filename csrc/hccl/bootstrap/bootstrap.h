// Bootstrap: the TCP rendezvous that turns an HcclRootInfo into a group of
// ranks that know each other. It moves only small set-up messages; collective
// data never goes through it.
//
// HcclGetRootInfo -> root_info_create(): opens a listening socket on this host
// (HCCL_IF_IP, else the first non-loopback IPv4 address, else 127.0.0.1),
// starts a server thread and writes magic, version, a random 32-byte job
// secret, a random 16-byte job id and the listen address into the opaque
// 4108-byte blob. Every rank (the root process's own ranks included) then
// dials that address with bootstrap_connect(); the server checks that the rank
// proves the secret (challenge-response, wire.h; a peer without it, or one
// replaying a captured hello, is refused and logged), the rank number and nRanks, and
// answers allgather rounds once all nRanks ranks have joined. A rank that
// leaves or dies mid-way fails the round for everyone with an error, never a
// hang. The server thread ends when every rank has closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <chrono>
#include <string>

#include "hccl/hccl_types.h"

namespace hccl {

// Fixed-layout view of the opaque root-info blob (fits in HCCL_ROOT_INFO_BYTES).
struct RootInfoView {
  char magic[8];        // "PYHCCL1\0"
  uint32_t version;     // 1
  uint8_t secret[32];   // random job secret, checked on every connection
  uint8_t job_id[16];   // random; names the job's shared-memory segments
  char host[64];        // numeric address the root listens on
  uint16_t port;
};

// Creates the rendezvous server and fills *out. Root side, any thread.
HcclResult root_info_create(void *out_blob, size_t blob_bytes);
// Parses and validates a blob (magic/version); E_PARA with a message if bad.
HcclResult root_info_parse(const void *blob, RootInfoView *view);
// The same with `api` (e.g. "HcclCommInitRootInfoConfig") prefixing messages
// instead of "HcclCommInitRootInfo" (nullptr = that default).
HcclResult root_info_parse(const void *blob, RootInfoView *view, const char *api);
// Writes a blob for a rendezvous whose address, job id and secret the caller
// chose (HcclCommInitClusterInfo derives them from the rank table; magic and
// version are filled in here); root_info_parse reads it back.
void root_info_encode(const RootInfoView &view, void *blob, size_t blob_bytes);
// Hex of job_id, for naming things that belong to this job.
std::string job_id_hex(const RootInfoView &view);

class Bootstrap;

// Joins the rendezvous as `rank` of `nranks`; waits until all ranks joined,
// at most HCCL_CONNECT_TIMEOUT seconds (default 120) in total.
HcclResult bootstrap_connect(const RootInfoView &root, uint32_t nranks, uint32_t rank,
                             Bootstrap **out);
// Every rank contributes `bytes` bytes (same size on every rank); *all receives
// nranks * bytes, rank order. Also serves as a barrier (bytes may be 0).
// Bounded by HCCL_CONNECT_TIMEOUT.
HcclResult bootstrap_allgather(Bootstrap *bs, const void *mine, size_t bytes, void *all);
// Fails the job for every rank with `msg` (which should name this rank): the
// others' pending and next bootstrap calls return `code` and the message.
// This rank's handle fails the same way from now on.
HcclResult bootstrap_fail(Bootstrap *bs, HcclResult code, const std::string &msg);
// The connection's descriptor, to poll for the root's verdict while doing
// something else (it turns readable when the job failed); -1 if none.
int bootstrap_fd(const Bootstrap *bs);
// When this process serves the rendezvous of `root` (it called
// HcclGetRootInfo): waits, at most `limit`, until every rank got the job's
// verdict and left, so that a failing root process does not take the
// verdict with it when it exits.
void bootstrap_linger(const RootInfoView &root, std::chrono::milliseconds limit);
// Leaves the rendezvous and frees the handle (nullptr is fine).
void bootstrap_close(Bootstrap *bs);

// Drops the connection without saying goodbye, as if the process had died:
// the other ranks' pending and next bootstrap calls fail fast (E_REMOTE). For
// aborting a communicator and for tests. Frees the handle (nullptr is fine).
void bootstrap_abort(Bootstrap *bs);
// bootstrap_connect with `api` (e.g. "HcclCommInitRootInfoConfig") instead of
// "HcclCommInitRootInfo" as the prefix of error messages, here and later.
HcclResult bootstrap_connect(const RootInfoView &root, uint32_t nranks, uint32_t rank,
                             Bootstrap **out, const char *api);
// Names the API that prefixes this handle's error messages (copied; default
// "HcclCommInitRootInfo"), e.g. "HcclCommInitRootInfoConfig".
void bootstrap_set_api(Bootstrap *bs, const char *api);

// Seconds from HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT (integers > 0;
// defaults 120 and 1836; an invalid value keeps the default and warns once).
int connect_timeout_s();
int exec_timeout_s();

}  // namespace hccl
