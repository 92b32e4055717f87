// The first failed HCCL operation of each stream, kept until the stream's
// error is reported, so that a binding can tell an HCCL failure (and which
// collective, which rank) from another task's (PyhcclStreamTakeOpError).
#pragma once

#include <cstdint>
#include <string>

#include "hccl/hccl_types.h"

namespace hccl {

struct OpError {
  HcclResult code = HCCL_SUCCESS;
  const char *api = "";
  uint64_t seq = 0;
  int32_t rank = -1;  // the rank at fault, when known
  std::string message;
};

// Records `e` for the stream whose worker runs the calling thread, unless
// that stream already holds one.
void record_op_error(const OpError &e);
// Takes (and forgets) the record of stream `stream_id`; false if none.
bool take_op_error(uint64_t stream_id, OpError *out);

}  // namespace hccl
