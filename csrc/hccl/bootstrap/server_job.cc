// The bootstrap server's job protocol: admitting ranks, allgather rounds,
// orderly closes, and turning any failure into an error for every rank.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/hmac.h"
#include "hccl/bootstrap/server_impl.h"

namespace hccl {
namespace bsnet {
namespace srv {

void Server::on_hello(Conn &c, const HelloPayload &h) {
  if (std::memcmp(h.magic, kHelloMagic, sizeof(kHelloMagic)) != 0) {
    refuse(c, "not a pyhccl bootstrap peer (bad magic)", false);
    return;
  }
  uint8_t mac[32];
  hello_mac(cfg_.secret, c.challenge, h, mac);
  if (!equal_ct(mac, h.mac, sizeof(mac))) {
    // The secret itself never comes: a peer without it, or one replaying a
    // hello captured on another connection (whose challenge differed).
    refuse(c, "peer presented a wrong job secret or replayed another connection's hello (refused)", true);
    return;
  }
  // The root proves it holds the secret too, before any verdict.
  proof_mac(cfg_.secret, c.challenge, h, mac);
  send_to(c, make_frame(kProof, mac, sizeof(mac)));
  uint32_t nranks = ntohl(h.nranks), rank = ntohl(h.rank);
  c.rank = rank;
  if (failed_) {
    start_closing(c, fail_frame_);
    return;
  }
  if (running_) {
    // The job is complete: tell the latecomer, leave the running ranks alone.
    std::string msg = rank < nranks_ && nranks == nranks_
                          ? format("rank %u joined twice (all %u ranks had already joined; a root info is single use)",
                                   rank, nranks_)
                          : format("rank %u of %u arrived after the job of %u ranks was complete", rank, nranks,
                                   nranks_);
    start_closing(c, make_error(HCCL_E_PARA, msg));
    return;
  }
  if (nranks == 0 || nranks > kMaxRanks) {
    fail(HCCL_E_PARA, format("rank %u says nRanks is %u (must be 1 to %u)", rank, nranks, kMaxRanks), &c);
    return;
  }
  if (nranks_ == 0) {
    nranks_ = nranks;
    first_rank_ = rank;
    by_rank_.assign(nranks, nullptr);
    join_deadline_ = Clock::now() + std::chrono::seconds(cfg_.join_timeout_s);
  }
  if (nranks != nranks_) {
    fail(HCCL_E_PARA, format("nRanks mismatch: rank %u says %u, rank %u says %u", rank, nranks, first_rank_, nranks_),
         &c);
  } else if (rank >= nranks) {
    fail(HCCL_E_PARA, format("rank %u is out of range for nRanks %u", rank, nranks), &c);
  } else if (by_rank_[rank] != nullptr) {
    fail(HCCL_E_PARA, format("rank %u joined twice", rank), &c);
  } else {
    c.state = Conn::kJoined;
    by_rank_[rank] = &c;
    if (++joined_ == nranks_) {
      running_ = true;
      round_data_.assign(nranks_, {});
      have_.assign(nranks_, false);
      uint32_t n_be = htonl(nranks_);
      Buffer ready = make_frame(kReady, &n_be, sizeof(n_be));
      for (Conn *r : by_rank_) send_to(*r, ready);  // all present: joined_ == nranks_
    }
  }
}

void Server::on_contrib(Conn &c, const uint8_t *p, uint64_t len) {
  if (!running_) {
    on_lost(c, "it sent allgather data before all ranks had joined");
    return;
  }
  if (byes_ > 0) {
    uint32_t gone = 0;
    while (gone < nranks_ && (by_rank_[gone] != nullptr && by_rank_[gone]->state != Conn::kBye)) ++gone;
    fail(HCCL_E_REMOTE, format("rank %u entered a bootstrap allgather after rank %u had closed", c.rank, gone));
    return;
  }
  if (have_[c.rank]) {
    on_lost(c, "it sent two contributions to one allgather round");
    return;
  }
  if (round_count_ > 0 && len != round_bytes_) {
    fail(HCCL_E_PARA, format("bootstrap allgather size mismatch: rank %u sent %llu bytes, rank %u sent %llu", c.rank,
                             static_cast<unsigned long long>(len), round_first_,
                             static_cast<unsigned long long>(round_bytes_)));
    return;
  }
  if (len * nranks_ > kMaxRoundBytes) {
    fail(HCCL_E_PARA, format("bootstrap allgather of %llu bytes per rank exceeds the %llu-byte round limit",
                             static_cast<unsigned long long>(len), static_cast<unsigned long long>(kMaxRoundBytes)));
    return;
  }
  if (round_count_ == 0) {
    round_bytes_ = len;
    round_first_ = c.rank;
  }
  round_data_[c.rank].assign(p, p + len);
  have_[c.rank] = true;
  if (++round_count_ < nranks_) return;
  auto b = std::make_shared<std::vector<uint8_t>>(kHeaderBytes + len * nranks_);
  encode_header(b->data(), kResult, len * nranks_);
  for (uint32_t r = 0; r < nranks_; ++r) {
    if (len > 0) std::memcpy(b->data() + kHeaderBytes + r * len, round_data_[r].data(), len);
    std::vector<uint8_t>().swap(round_data_[r]);
    have_[r] = false;
  }
  round_count_ = 0;
  for (Conn *r : by_rank_)
    if (r != nullptr) send_to(*r, b);
}

void Server::on_bye(Conn &c) {
  if (!running_) {
    on_lost(c, "it closed before all ranks had joined");
    return;
  }
  c.state = Conn::kBye;
  c.in.clear();
  if (round_count_ > 0) {
    fail(HCCL_E_REMOTE, format("rank %u closed the bootstrap while %u rank(s) waited in an allgather", c.rank,
                               round_count_));
    return;
  }
  if (++byes_ == nranks_) done_ = true;
}

void Server::on_lost(Conn &c, const std::string &why) {
  if (c.state != Conn::kJoined || failed_) {
    drop(c);
    return;
  }
  uint32_t rank = c.rank;
  drop(c);
  fail(HCCL_E_REMOTE, running_ ? format("rank %u left the job before closing its communicator (%s)", rank, why.c_str())
                               : format("rank %u left before all ranks had joined (%s)", rank, why.c_str()));
}

void Server::fail(HcclResult code, const std::string &msg, Conn *extra) {
  if (failed_) return;
  failed_ = true;
  fail_frame_ = make_error(code, msg);
  Clock::time_point now = Clock::now();
  latecomer_until_ = running_ ? now : std::max(now, join_deadline_);
  hard_deadline_ = latecomer_until_ + kLinger;
  for (Conn &c : conns_) {
    if (c.fd < 0) continue;
    if (c.state == Conn::kJoined || &c == extra)
      start_closing(c, fail_frame_);
    else if (c.state == Conn::kBye)
      drop(c);
  }
}

void Server::start_closing(Conn &c, const Buffer &last) {
  if (c.state == Conn::kJoined) by_rank_[c.rank] = nullptr;
  send_to(c, last);
  c.state = Conn::kClosing;
  c.in.clear();
  c.deadline = Clock::now() + kLinger;
}

}  // namespace srv
}  // namespace bsnet
}  // namespace hccl
