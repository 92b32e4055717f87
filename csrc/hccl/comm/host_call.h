// Collective management calls that must run in a communicator's operation
// order (HcclCommSymWinRegister, HcclCommSymWinDeregister,
// HcclCreateSubCommConfig): the call is enqueued like a collective (on a
// private stream of the calling thread's device), so it runs after every
// operation enqueued on the communicator before it (on any stream) and before
// every later one, and its exchanges travel with the op's signature (a rank
// that called something else is told). The caller blocks until it ran.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "hccl/op/op.h"
#include "hccl/comm/comm.h"

namespace hccl {

// Runs fn in the op's turn. `tag` becomes the signature's count (ranks must
// pass the same). fn's error fails the communicator (peers are told): use it
// for transport failures; an outcome every rank agrees on (bad arguments found
// through the exchange) should be returned through fn's captures instead.
// Returns fn's result, or the reason it did not run, with a message naming `api`.
HcclResult comm_host_call(const std::shared_ptr<Comm> &comm, OpKind kind, const char *api,
                          uint64_t tag, std::function<HcclResult(Ctx &)> fn);

}  // namespace hccl
