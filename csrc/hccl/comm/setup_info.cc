#include "hccl/comm/setup_info.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/env.h"
#include "hccl/transport/shm/hub.h"
#include "common/log.h"

namespace hccl {

RankInfo RankInfo::of_this_process(int32_t device, uint32_t nranks) {
  RankInfo p;
  std::memset(&p, 0, sizeof(p));
  p.version = kRankInfoVersion;
  p.pid = getpid();
  p.start_time = shm::process_start_time(p.pid);
  struct stat st;
  p.pid_ns = stat("/proc/self/ns/pid", &st) == 0 ? st.st_ino : 0;
  p.device = device;
  p.host = HostIdentity::of_this_process();
  const char *transport = common::env_str("PYHCCL_TRANSPORT", "auto");
  p.all_tcp = std::strcmp(transport, "tcp") == 0;
  if (!p.all_tcp && std::strcmp(transport, "auto") != 0)
    PYHCCL_NOTICE(common::kInit, "ignoring PYHCCL_TRANSPORT=%s (expected auto or tcp)", transport);
  AlgoTuning defaults;
  p.flat_bytes = common::env_bytes("PYHCCL_LATENCY_BYTES", defaults.flat_bytes);
  p.single_copy_min = common::env_bytes("PYHCCL_SINGLE_COPY_BYTES", defaults.single_copy_min);
  p.chunk_bytes = common::env_bytes("PYHCCL_CHUNK_BYTES", defaults.chunk_bytes);
  p.chain_min = common::env_bytes("PYHCCL_CHAIN_BYTES", defaults.chain_min);
  // 0: not declared, measured at set-up (comm/link_probe.h).
  p.net_latency_ns = 1000 * static_cast<uint64_t>(common::env_int("PYHCCL_NET_LATENCY_US", 0, 1, 10000000));
  p.net_bits_per_s = 1000000ull * static_cast<uint64_t>(common::env_int("PYHCCL_NET_MBITS", 0, 1, 100000000));
  p.net_message_ns = 1000 * static_cast<uint64_t>(common::env_int("PYHCCL_NET_MESSAGE_US", 0, 1, 10000000));
  // FIFO slots: keep a rank's FIFOs near 32 MiB in total however many local peers it has.
  // PYHCCL_SLOTS unset: 0, the set-up decides once it knows the hosts (fifo_slots).
  uint64_t slot = common::env_bytes("PYHCCL_SLOT_BYTES", 128u << 10);
  const bool auto_slots = common::env_str("PYHCCL_SLOTS", "")[0] == '\0';
  uint64_t slots = static_cast<uint64_t>(common::env_int("PYHCCL_SLOTS", kDefaultSlots, 2, 1024));
  if (slot * slots * nranks > (32ull << 20)) slot = (32ull << 20) / (slots * nranks);
  if (slot < 4096) slot = 4096;
  p.slot_bytes = (slot + 4095) / 4096 * 4096;
  p.slots = auto_slots ? 0 : static_cast<uint32_t>(slots);
  p.board_bytes = static_cast<uint32_t>(
      std::min<uint64_t>(common::env_bytes("PYHCCL_BOARD_BYTES", 16u << 10, /*zero_ok=*/true), 1u << 20));
  p.alltoall_window = static_cast<uint32_t>(common::env_int("PYHCCL_ALLTOALL_WINDOW", 0, 0, 1 << 20));
  p.sockets_per_peer = static_cast<uint32_t>(common::env_int("PYHCCL_SOCKETS_PER_PEER", 1, 1, 16));
  p.socket_buffer = static_cast<uint32_t>(common::env_bytes("PYHCCL_SOCKET_BUFFER", 4u << 20));
  if (getrandom(p.nonce, sizeof(p.nonce), 0) != static_cast<ssize_t>(sizeof(p.nonce)))
    for (size_t i = 0; i < sizeof(p.nonce); ++i) p.nonce[i] = static_cast<uint8_t>(p.pid >> (i % 4));
  std::snprintf(p.pyhccl_algo, sizeof(p.pyhccl_algo), "%s", common::env_str("PYHCCL_ALGO", ""));
  std::snprintf(p.hccl_algo, sizeof(p.hccl_algo), "%s", common::env_str("HCCL_ALGO", ""));
  return p;
}

AlgoTuning RankInfo::tuning(std::string *bad) const {
  AlgoTuning t;
  t.flat_bytes = flat_bytes;
  t.single_copy_min = single_copy_min;
  t.chunk_bytes = chunk_bytes;
  t.chain_min = chain_min;
  t.alltoall_window = alltoall_window;
  t.set_net(net_latency_ns, net_bits_per_s, net_message_ns);
  std::string pa(pyhccl_algo, strnlen(pyhccl_algo, sizeof(pyhccl_algo)));
  std::string ha(hccl_algo, strnlen(hccl_algo, sizeof(hccl_algo)));
  t.parse(pa, ha, bad);
  return t;
}

}  // namespace hccl
