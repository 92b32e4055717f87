// A rank's messages to itself (HcclSend to its own rank, and collectives on
// one rank that still exchange headers): sends and receives are matched in
// order and copied (or reduced) in one step.
#pragma once

#include <deque>

#include "hccl/transport/transport.h"

namespace hccl {

class SelfConnection final : public Connection {
 public:
  explicit SelfConnection(int rank) : Connection(rank) {}
  const char *kind() const override { return "self"; }
  void post(Transfer *t) override { (t->kind == Transfer::kSend ? sends_ : recvs_).push_back(t); }
  HcclResult progress(bool *moved, WaitError *err) override;
  bool peer_failed(bool, WaitError *) override { return false; }
  void notify_failure(HcclResult, const std::string &, uint64_t, int) override {}
  void clear() override {
    sends_.clear();
    recvs_.clear();
  }

 private:
  std::deque<Transfer *> sends_, recvs_;
};

}  // namespace hccl
