// Hub's segments (hub.h): this rank's own, created and later unlinked, every
// local peer's mapped and checked, and peers' device memory mapped on demand.
#include "hccl/transport/shm/hub.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hccl/transport/shm/conn.h"

namespace hccl {
namespace shm {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "shm layout assumes little endian");

Hub::Hub(const Options &opt, const std::string &name)
    : rank_(opt.rank),
      nranks_(opt.nranks),
      layout_(opt.nranks, static_cast<int>(opt.local.size()), opt.slot_bytes, opt.slots,
              opt.board_bytes),
      name_(name),
      local_index_(opt.nranks, -1),
      local_(opt.local),
      peers_(opt.nranks) {
  for (size_t i = 0; i < opt.local.size(); ++i) local_index_[opt.local[i]] = static_cast<int>(i);
  local_count_ = opt.local.size();
}

std::unique_ptr<Hub> Hub::create(const Options &opt, const std::string &name, std::string *why) {
  std::unique_ptr<Hub> h(new Hub(opt, name));
  Peer &me = h->peers_[opt.rank];
  if (!shm_segment_create(name, h->layout_.total, &me.map, why)) return nullptr;
  Control *c = h->ctl(opt.rank);
  c->magic = kMagic;
  c->nranks = static_cast<uint32_t>(opt.nranks);
  c->rank = static_cast<uint32_t>(opt.rank);
  c->slot_bytes = opt.slot_bytes;
  c->slots = opt.slots;
  c->nlocal = static_cast<uint32_t>(opt.local.size());
  c->board_bytes = opt.board_bytes;
  if (!h->bind_wake(name, why)) return nullptr;  // the destructor unlinks the segment
  return h;
}

bool Hub::connect(const std::vector<PeerDesc> &peers, std::string *why) {
  for (int r = 0; r < nranks_; ++r) {
    if (local_index_[r] < 0) continue;
    Peer &p = peers_[r];
    p.desc = peers[r];
    p.wake_name = peers[r].segment;
    if (r == rank_) continue;
    if (!shm_segment_open(peers[r].segment, layout_.total, &p.map, why)) return false;
    const Control *c = ctl(r);
    if (c->magic != kMagic || c->rank != static_cast<uint32_t>(r) ||
        c->nranks != static_cast<uint32_t>(nranks_) || c->slot_bytes != layout_.slot_bytes ||
        c->slots != layout_.slots || c->board_bytes != layout_.board_bytes) {
      *why = "shared-memory segment of rank " + std::to_string(r) + " (" + peers[r].segment +
             ") has an unexpected layout";
      return false;
    }
  }
  return true;
}

void Hub::unlink_own() {
  if (!unlinked_) shm_segment_unlink(name_);
  unlinked_ = true;
}

Hub::~Hub() {
  if (uid_ != 0) waits_remove_hub(this);
  leave();  // peers tell a rank that left from one that died
  unlink_own();
  if (wake_fd_ >= 0) close(wake_fd_);
  for (Peer &p : peers_) {
    for (auto &kv : p.mem) munmap(kv.second.base, kv.second.size);
    shm_segment_close(&p.map);
  }
}

std::unique_ptr<Connection> Hub::connection(int peer) {
  return std::unique_ptr<Connection>(new ShmConnection(*this, peer));
}

void Hub::set_identity(uint64_t uid, const std::string &name) {
  if (uid_ != 0) return;
  uid_ = uid;
  comm_name_ = name;
  waits_add_hub(this);
}

void *Hub::map_peer_memory(int r, const MemDesc &d) {
  if (r < 0 || r >= nranks_ || local_index_[r] < 0 || d.fd < 0 || d.offset > d.file_size ||
      d.bytes > d.file_size - d.offset)
    return nullptr;
  Peer &p = peers_[r];
  std::lock_guard<std::mutex> lock(mem_mu_);
  auto key = std::make_pair(static_cast<int>(d.fd), d.ino);
  auto it = p.mem.find(key);
  if (it != p.mem.end() && it->second.size < d.file_size) {  // the file grew: map it again
    munmap(it->second.base, it->second.size);
    p.mem.erase(it);
    it = p.mem.end();
  }
  if (it == p.mem.end()) {
    // The fd number may name a new file now: drop what it named before.
    for (auto old = p.mem.begin(); old != p.mem.end();) {
      if (old->first.first != d.fd) {
        ++old;
        continue;
      }
      munmap(old->second.base, old->second.size);
      old = p.mem.erase(old);
    }
    if (!p.desc.same_pid_ns) return nullptr;
    std::string path = "/proc/" + std::to_string(p.desc.pid) + "/fd/" + std::to_string(d.fd);
    int f = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (f < 0) return nullptr;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(f, &st) == 0 && static_cast<uint64_t>(st.st_ino) == d.ino)
      m = mmap(nullptr, d.file_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, f, 0);
    close(f);
    if (m == MAP_FAILED) return nullptr;
    it = p.mem.emplace(key, Peer::Mapped{m, d.file_size}).first;
  }
  return static_cast<char *>(it->second.base) + d.offset;
}

}  // namespace shm
}  // namespace hccl
