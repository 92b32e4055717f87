// Small collectives on boards (transport/shm/board_exchange.cc): one exchange in which
// every rank posts its part (its send buffer, by the spec's byte rule) and
// reads its peers' in place. Chosen from the size alone, so every rank of a
// collective chooses alike (whichever thread runs it): when every rank is on
// this host, the part fits a board (PYHCCL_BOARD_BYTES) and PYHCCL_ALGO
// forces nothing for the collective. Symmetric windows (window_direct.cc)
// come first where they apply.
#pragma once

#include <cstddef>

#include "hccl/algo/ctx.h"
#include "hccl/algo/tuning.h"

namespace hccl {

// Whether collective `kind`, posting at most `bytes` per rank, runs on boards.
bool board_fits(const CommView &comm, OpKind kind, size_t bytes);
// Whether x's operation (count > 0, spec with boards) runs on boards.
bool board_applies(const Ctx &x);

// Whether `op`, run as the communicator's next collective, starts with a board
// exchange (run_board, or exchange() for count 0 and Barrier), and what this
// rank posts in it (for Engine::arrive_on_board). Derived from the spec as
// run_board's post is, so the two agree (transport/shm/board_exchange.cc checks).
bool board_part(const CommView &comm, const OpDesc &op, const void **part, size_t *bytes);

// The board algorithm of x's collective: posts, reads the peers' parts, and
// reduces or copies them into place.
HcclResult run_board(Ctx &x);

// Every rank's `bytes` of `mine` into out[r * bytes] (exchange(), ctx.h, on
// boards); true when boards were used (*rc then says how it went).
bool board_gather(Ctx &x, const void *mine, size_t bytes, void *out, HcclResult *rc);

}  // namespace hccl
