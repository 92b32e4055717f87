/* cann_tool version / devices / env: facts about this toolkit and its runtime. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "cann_tool.h"
#include "hccl/hccl.h"

struct found_lib {
  const char *name;  /* e.g. "libhccl.so" */
  char path[4096];
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct found_lib *lib = data;
  const char *base = strrchr(info->dlpi_name, '/');
  base = base ? base + 1 : info->dlpi_name;
  if (strcmp(base, lib->name) == 0) {
    if (realpath(info->dlpi_name, lib->path) == NULL)
      snprintf(lib->path, sizeof(lib->path), "%s", info->dlpi_name);
    return 1;
  }
  return 0;
}

/* The path the loader mapped `name` from, or "not loaded". */
static const char *loaded_path(const char *name, struct found_lib *lib) {
  lib->name = name;
  snprintf(lib->path, sizeof(lib->path), "not loaded");
  dl_iterate_phdr(find_lib, lib);
  return lib->path;
}

static int wants_help(int argc, char **argv, const char *text) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("%s", text);
    return 1;
  }
  if (argc > 1) {
    fprintf(stderr, "cann_tool %s: unexpected argument '%s'\n", argv[0], argv[1]);
    return 2;
  }
  return 0;
}

int cmd_version(int argc, char **argv) {
  int h = wants_help(argc, argv, "usage: cann_tool --version\n"
                                 "pyhccl's version, the CANN API version its headers follow and "
                                 "the runtime the libraries implement.\n");
  if (h) return h == 1 ? 0 : 2;
  int32_t major = 0, minor = 0, patch = 0;
  aclError err = aclrtGetVersion(&major, &minor, &patch);
  struct found_lib acl, hccl;
  printf("cann_tool (pyhccl) %s\n", PYHCCL_VERSION);
  printf("CANN API:  ACL %d.%d.%d headers, HCCL communicator config version %u (CANN 9)\n",
         ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION, HCCL_COMM_CONFIG_VERSION);
  if (err == ACL_SUCCESS)
    printf("runtime:   pyhccl host runtime (CPU implementation of ACL + HCCL), ACL %d.%d.%d\n",
           major, minor, patch);
  else
    printf("runtime:   pyhccl host runtime (aclrtGetVersion failed: %d)\n", (int)err);
  printf("toolkit:   %s\n", tool_prefix());
  printf("libraries: %s\n", loaded_path("libascendcl.so", &acl));
  printf("           %s\n", loaded_path("libhccl.so", &hccl));
  return err == ACL_SUCCESS ? 0 : 1;
}

int cmd_devices(int argc, char **argv) {
  int h = wants_help(argc, argv, "usage: cann_tool devices\n"
                                 "The runtime's devices (PYHCCL_DEVICE_COUNT), SoC name and "
                                 "device memory.\n");
  if (h) return h == 1 ? 0 : 2;
  uint32_t count = 0;
  aclError err = aclInit(NULL);
  if (err == ACL_SUCCESS) err = aclrtGetDeviceCount(&count);
  if (err != ACL_SUCCESS) {
    const char *msg = aclGetRecentErrMsg();
    fprintf(stderr, "cann_tool devices: %d %s\n", (int)err, msg ? msg : "");
    return 1;
  }
  const char *soc = aclrtGetSocName();
  printf("devices:  %u\nSoC name: %s\n", count, soc ? soc : "unknown");
  if (count > 0 && aclrtSetDevice(0) == ACL_SUCCESS) {
    size_t free_b = 0, total_b = 0;
    if (aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b) == ACL_SUCCESS)
      printf("memory:   %.1f GiB per device (address space; pages are taken as used)\n",
             (double)total_b / (1u << 30));
    aclrtResetDevice(0);
  }
  aclFinalize();
  return 0;
}

int cmd_env(int argc, char **argv) {
  int h = wants_help(argc, argv,
                     "usage: eval \"$(cann_tool env)\"\n"
                     "Prints the shell lines that set CANN_HOME to this toolkit and put its bin/ "
                     "and lib/ first on PATH and LD_LIBRARY_PATH.\n");
  if (h) return h == 1 ? 0 : 2;
  const char *p = tool_prefix();
  /* Single quotes: the path is printed for a shell; a quote in it is closed and escaped. */
  printf("export CANN_HOME='");
  for (const char *c = p; *c; c++) {
    if (*c == '\'') printf("'\\''");
    else putchar(*c);
  }
  printf("'\n");
  printf("export PATH=\"$CANN_HOME/bin:$PATH\"\n");
  printf("export LD_LIBRARY_PATH=\"$CANN_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n");
  return 0;
}
