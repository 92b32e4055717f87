/* cann_tool info: the report of `python -m pyhccl info`, run with a Python that can import
 * the pyhccl this toolkit belongs to.
 *
 * The toolkit may be the pyhccl package directory itself (`python -m pyhccl --prefix`) or a
 * copy made by `python -m pyhccl install-toolkit DIR`, which records the interpreter and
 * package it came from in DIR/share/pyhccl/origin. Interpreters are tried in this order,
 * the first that imports pyhccl wins: $PYHCCL_PYTHON; the recorded one; the virtual
 * environment around the package (site-packages or an in-place checkout's .venv);
 * python3 and python on PATH. Only this subcommand needs Python. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cann_tool.h"

#define MAX_CANDIDATES 8

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Value of `key` in DIR/share/pyhccl/origin ("key value" lines), or NULL. */
static const char *origin_value(const char *key) {
  FILE *f = fopen(tool_join(tool_prefix(), "share/pyhccl/origin"), "r");
  if (f == NULL) return NULL;
  char line[PATH_MAX + 64];
  const char *found = NULL;
  size_t klen = strlen(key);
  while (found == NULL && fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ') found = strdup(line + klen + 1);
  }
  fclose(f);
  return found;
}

/* `path` without its last `levels` components ("/" at most). */
static const char *up(const char *path, int levels) {
  char *out = strdup(path);
  while (levels-- > 0) {
    char *slash = strrchr(out, '/');
    if (slash == NULL || slash == out) return "/";
    *slash = '\0';
  }
  return out;
}

/* The directory to put on PYTHONPATH so `import pyhccl` finds this toolkit's package. */
static const char *package_parent(void) {
  if (is_file(tool_join(tool_prefix(), "__init__.py"))) return up(tool_prefix(), 1);
  const char *pkg = origin_value("package");
  return pkg && is_file(tool_join(pkg, "__init__.py")) ? up(pkg, 1) : NULL;
}

/* Whether `python -c "import pyhccl"` works, output discarded. */
static int imports_pyhccl(const char *python) {
  if (python == NULL || access(python, X_OK) != 0) return 0;
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1), dup2(null, 2);
    execl(python, python, "-c", "import pyhccl", (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0) {}
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* `name` looked up on PATH, or NULL. */
static const char *on_path(const char *name) {
  const char *path = getenv("PATH");
  if (path == NULL) return NULL;
  char *copy = strdup(path), *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    const char *p = tool_join(*dir ? dir : ".", name);
    if (access(p, X_OK) == 0) {
      free(copy);
      return p;
    }
  }
  free(copy);
  return NULL;
}

int cmd_info(int argc, char **argv) {
  if (argc > 1) {
    int help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
    fprintf(help ? stdout : stderr,
            "usage: cann_tool info\nRuns `python -m pyhccl info` with the Python this toolkit "
            "came from (PYHCCL_PYTHON chooses another).\n");
    return help ? 0 : 2;
  }
  const char *parent = package_parent();
  if (parent != NULL) {  /* this toolkit's package first on the path */
    const char *old = getenv("PYTHONPATH");
    char *value = malloc(strlen(parent) + (old ? strlen(old) : 0) + 2);
    sprintf(value, "%s%s%s", parent, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", value, 1);
  }
  const char *cands[MAX_CANDIDATES];
  int n = 0;
  cands[n++] = getenv("PYHCCL_PYTHON");
  cands[n++] = origin_value("python");
  if (parent != NULL) {
    const char *base = strrchr(parent, '/');
    if (base && (strcmp(base, "/site-packages") == 0 || strcmp(base, "/dist-packages") == 0))
      cands[n++] = tool_join(up(parent, 3), "bin/python3");  /* <venv>/lib/pythonX.Y/site-packages */
    else
      cands[n++] = tool_join(parent, ".venv/bin/python");  /* an in-place build's checkout */
  }
  cands[n++] = on_path("python3");
  cands[n++] = on_path("python");
  for (int i = 0; i < n; i++) {
    if (!imports_pyhccl(cands[i])) continue;
    printf("Toolkit:\n  cann_tool: %s\n  CANN_HOME: %s\n  Python:    %s\n", tool_path(),
           tool_prefix(), cands[i]);
    fflush(stdout);
    execl(cands[i], cands[i], "-m", "pyhccl", "info", (char *)NULL);
    perror("cann_tool info: exec");
    return 1;
  }
  fprintf(stderr,
          "cann_tool info: no Python found that imports pyhccl (tried $PYHCCL_PYTHON, %s, "
          "python3 and python on PATH); set PYHCCL_PYTHON to one. The other subcommands "
          "need no Python.\n",
          origin_value("python") ? origin_value("python") : "the interpreter of the venv");
  return 1;
}
