// Internal to the group rendezvous: its two messages. A rank sends one
// request; rank 0's server answers with one reply and closes. Integers are in
// network byte order.
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hccl/hccl_types.h"
#include "hccl/launch/rendezvous.h"

namespace hccl {
namespace launch {

constexpr char kWireMagic[8] = {'P', 'Y', 'H', 'R', 'D', 'V', '0', '1'};

// Request: magic, nranks, rank, pid, group length, host length, then the
// group name and the sender's host name.
struct RequestHead {
  char magic[8];
  uint32_t nranks;
  uint32_t rank;
  uint32_t pid;
  uint16_t group_len;
  uint16_t host_len;
};
static_assert(sizeof(RequestHead) == 24, "request layout");

// Reply: magic, an HcclResult, rank 0's nranks and pid, the message length,
// whether the root info follows; then the root info (HCCL_ROOT_INFO_BYTES) if
// so, then the message (the error, or a remark that comes with the root info).
struct ReplyHead {
  char magic[8];
  uint32_t code;
  uint32_t nranks;
  uint32_t pid;
  uint16_t msg_len;
  uint16_t has_root_info;
};
static_assert(sizeof(ReplyHead) == 24, "reply layout");

constexpr size_t kMaxRequest = sizeof(RequestHead) + kMaxGroupBytes + kMaxHostBytes;
constexpr size_t kMaxMessage = 1024;

inline std::vector<uint8_t> encode_reply(HcclResult code, uint32_t nranks, uint32_t pid,
                                         const void *root_info, const std::string &msg) {
  ReplyHead h;
  std::memcpy(h.magic, kWireMagic, sizeof(h.magic));
  std::string m = msg.substr(0, kMaxMessage);
  h.code = htonl(static_cast<uint32_t>(code));
  h.nranks = htonl(nranks);
  h.pid = htonl(pid);
  h.msg_len = htons(static_cast<uint16_t>(m.size()));
  h.has_root_info = htons(root_info != nullptr ? 1 : 0);
  std::vector<uint8_t> out(sizeof(h) + (root_info ? HCCL_ROOT_INFO_BYTES : 0) + m.size());
  std::memcpy(out.data(), &h, sizeof(h));
  if (root_info) std::memcpy(out.data() + sizeof(h), root_info, HCCL_ROOT_INFO_BYTES);
  std::memcpy(out.data() + out.size() - m.size(), m.data(), m.size());
  return out;
}

}  // namespace launch
}  // namespace hccl
