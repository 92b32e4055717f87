// Small collectives on boards (transport/board.cc): one exchange in which
// every rank posts its part and reads its peers' in place. Chosen from the
// size alone, so every rank of a collective chooses alike (whichever thread
// runs it): when every rank is on this host, the part fits a board
// (PYHCCL_BOARD_BYTES) and PYHCCL_ALGO forces nothing for the collective.
// Symmetric windows (window_direct.cc) come first where they apply.
#pragma once

#include <cstddef>

#include "hccl/algo/ctx.h"
#include "hccl/algo/tuning.h"

namespace hccl {

// Whether collective c, posting `bytes` per rank, runs on boards.
bool board_fits(const Comm &comm, Coll c, size_t bytes);

// Whether `op`, run as the communicator's next collective, starts with a board
// exchange (one of the functions below, or exchange() for count 0 and
// Barrier), and what this rank posts in it (for Engine::arrive_on_board).
bool board_part(const Comm &comm, const OpDesc &op, const void **part, size_t *bytes);

// AllReduce (root < 0) or Reduce: reduced in rank order on every rank.
HcclResult board_reduce(Ctx &x, const char *in, char *out, size_t count, int root);
HcclResult board_broadcast(Ctx &x, char *buf, size_t bytes, int root);
HcclResult board_all_gather(Ctx &x, const char *in, char *out, size_t bytes);
HcclResult board_reduce_scatter(Ctx &x, const char *in, char *out, size_t count);
// AlltoAll, `block` bytes per peer (in place too: peers read the board's copy).
HcclResult board_all_to_all(Ctx &x, const char *in, char *out, size_t block);

// Every rank's `bytes` of `mine` into out[r * bytes] (exchange(), ctx.h, on
// boards); true when boards were used (*rc then says how it went).
bool board_gather(Ctx &x, const void *mine, size_t bytes, void *out, HcclResult *rc);

}  // namespace hccl
