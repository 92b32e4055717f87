/* cann_tool check: what one rank's checks share (check.c forks the ranks,
 * collectives.c runs the collectives and compares the results). */
#ifndef PYHCCL_CANN_TOOL_CHECK_H_
#define PYHCCL_CANN_TOOL_CHECK_H_

#include "acl/acl.h"
#include "hccl/hccl.h"

struct check_ctx {
  int rank, nranks, verbose;
  HcclComm comm;
  aclrtStream stream;
  int passed, failed;
};

/* Runs every collective check on ctx->comm, counting ctx->passed / ctx->failed;
 * rank 0 (every rank with verbose) prints a line per check. */
void run_collective_checks(struct check_ctx *ctx);

/* The same through the acltdt communicator API (tdt.c): the ranks meet by `group`. */
void run_tdt_checks(struct check_ctx *ctx, const char *group);

#endif /* PYHCCL_CANN_TOOL_CHECK_H_ */
