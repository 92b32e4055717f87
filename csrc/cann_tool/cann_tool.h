/* cann_tool: the command a CANN toolkit's user expects in $CANN_HOME/bin, for the
 * host runtime. Subcommands live in one file each; main.c dispatches. */
#ifndef PYHCCL_CANN_TOOL_H_
#define PYHCCL_CANN_TOOL_H_

#include <stddef.h>

/* Set by the build (csrc/Makefile) from pyhccl/__init__.py. */
#ifndef PYHCCL_VERSION
#define PYHCCL_VERSION "unknown"
#endif

/* The toolkit directory this binary belongs to (the parent of its bin/), and the
 * binary's own path; both without a trailing slash. */
const char *tool_prefix(void);
const char *tool_path(void);

/* Joins prefix + "/" + rel into a new string (never freed: the tool is short-lived). */
const char *tool_join(const char *prefix, const char *rel);

int cmd_version(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_info(int argc, char **argv);

#endif /* PYHCCL_CANN_TOOL_H_ */
