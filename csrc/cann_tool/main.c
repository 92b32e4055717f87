/* cann_tool: entry point, help and the toolkit's own location.
 *
 *   cann_tool --version | --help | <subcommand> [options]
 *
 * The binary finds its toolkit from its own path (/proc/self/exe, so a symlink to it
 * elsewhere on PATH still works) and its libraries through the rpath $ORIGIN/../lib:
 * it needs no Python and no variable, so it keeps working when the toolkit directory
 * is copied away from the Python environment it came from. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cann_tool.h"

struct subcommand {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

static const struct subcommand kCommands[] = {
    {"version", cmd_version, "pyhccl's version, the CANN API the headers follow, the runtime"},
    {"info", cmd_info, "the full report of `python -m pyhccl info` (needs a Python with pyhccl)"},
    {"check", cmd_check, "self test: collectives through the C libraries [-n RANKS] [-t SECONDS]"},
    {"devices", cmd_devices, "the runtime's devices, SoC name and memory"},
    {"env", cmd_env, "shell lines setting CANN_HOME, PATH, LD_LIBRARY_PATH: eval \"$(cann_tool env)\""},
};
#define NCOMMANDS (sizeof(kCommands) / sizeof(kCommands[0]))

static char g_path[PATH_MAX];
static char g_prefix[PATH_MAX];

const char *tool_path(void) { return g_path; }
const char *tool_prefix(void) { return g_prefix; }

const char *tool_join(const char *prefix, const char *rel) {
  size_t n = strlen(prefix) + strlen(rel) + 2;
  char *out = malloc(n);
  if (out == NULL) {
    fprintf(stderr, "cann_tool: out of memory\n");
    exit(2);
  }
  snprintf(out, n, "%s/%s", prefix, rel);
  return out;
}

/* prefix = dirname(dirname(real path of this binary)). */
static void locate_self(const char *argv0) {
  ssize_t n = readlink("/proc/self/exe", g_path, sizeof(g_path) - 1);
  if (n <= 0) {  /* no /proc: fall back to argv[0] */
    if (realpath(argv0, g_path) == NULL) snprintf(g_path, sizeof(g_path), "%s", argv0);
  } else {
    g_path[n] = '\0';
  }
  snprintf(g_prefix, sizeof(g_prefix), "%s", g_path);
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(g_prefix, '/');
    if (slash == NULL) {
      snprintf(g_prefix, sizeof(g_prefix), ".");
      return;
    }
    *slash = '\0';
  }
  if (g_prefix[0] == '\0') snprintf(g_prefix, sizeof(g_prefix), "/");
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: cann_tool --version | --help | <subcommand> [options]\n\n"
          "The toolkit command of pyhccl's host runtime (a CPU implementation of CANN's\n"
          "ACL runtime and HCCL). Toolkit: %s\n\nsubcommands:\n",
          tool_prefix());
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-8s %s\n", kCommands[i].name, kCommands[i].summary);
  fprintf(out,
          "\n`cann_tool <subcommand> --help` describes its options. Exit status: 0 on\n"
          "success, 1 when a check fails, 2 on bad usage.\n");
}

int main(int argc, char **argv) {
  locate_self(argc > 0 ? argv[0] : "cann_tool");
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) cmd = "version";
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(cmd, kCommands[i].name) == 0) return kCommands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "cann_tool: unknown subcommand '%s' (cann_tool --help lists them)\n", cmd);
  return 2;
}
