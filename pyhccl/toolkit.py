"""pyhccl as a CANN toolkit directory: CANN_HOME for C and C++ programs.

    export CANN_HOME=$(python -m pyhccl --prefix)   # the package directory itself
    python -m pyhccl install-toolkit /opt/cann      # or a copy anywhere

A toolkit has include/ (acl/, hccl/, acl/acl_tdt.h), lib/ (every library name CANN's
build files link) and bin/cann_tool. The package directory of a host-runtime build is
laid out that way by setup.py. install-toolkit copies it (files, not links) to a chosen
directory, so the copy keeps working when the Python environment it came from is moved
or deleted: the libraries find each other through $ORIGIN and cann_tool finds lib/
through $ORIGIN/../lib. Only `cann_tool info` needs Python; the copy records which one
in share/pyhccl/origin.
"""

import os
import shutil
import sys
from typing import List

import pyhccl

# Every library name a CANN build file links; the aliases are ELF filters of
# libascendcl.so / libhccl.so (csrc/Makefile, "Library names").
LIBRARIES = ("libascendcl.so", "libacl_rt.so", "libacl_tdt.so", "libacl_mdl.so",
             "libhccl.so", "libhcomm.so", "libmsprofiler.so")
HEADERS = ("acl/acl.h", "acl/acl_rt.h", "acl/acl_tdt.h", "hccl/hccl.h", "hccl/hccl_types.h")
TOOLS = ("bin/cann_tool",)
# What install-toolkit writes, and so may replace on a reinstall.
ENTRIES = ("include", "lib", "lib64", "bin", "share", "set_env.sh")
ORIGIN = os.path.join("share", "pyhccl", "origin")


class ToolkitError(Exception):
    """The toolkit is incomplete, or cannot be installed where asked."""


def _build_kind() -> str:
    try:
        from pyhccl import _build_config as cfg
    except ImportError:  # a checkout built before setup.py wrote the record
        return "host-runtime"
    return str(cfg.BUILD)


def missing(prefix: str) -> List[str]:
    """Paths (relative to `prefix`) a toolkit needs that `prefix` lacks."""
    need = [os.path.join("lib", n) for n in LIBRARIES]
    need += [os.path.join("include", h) for h in HEADERS] + list(TOOLS)
    return [p for p in need if not os.path.isfile(os.path.join(prefix, p))]


def prefix() -> str:
    """The toolkit directory of this pyhccl: its package directory (host runtime), or the
    CANN toolkit it was built against (PYHCCL_CANN)."""
    if _build_kind() == "cann":
        from pyhccl import _build_config as cfg
        return str(cfg.CANN_ROOT)
    here = os.path.dirname(os.path.abspath(pyhccl.__file__))
    lacking = missing(here)
    if lacking:
        raise ToolkitError(f"{here} lacks {', '.join(lacking)}: rebuild pyhccl "
                           "(make build, or pip install) to lay the toolkit out")
    return here


def _is_ours(dest: str) -> bool:
    return os.path.isfile(os.path.join(dest, ORIGIN))


def install(dest: str) -> str:
    """Copy this pyhccl's toolkit to `dest` (created; an earlier pyhccl toolkit there is
    replaced, any other non-empty directory refused) and return its absolute path."""
    if _build_kind() == "cann":
        raise ToolkitError(f"this pyhccl is built against the CANN toolkit {prefix()}: "
                           "use that directory as CANN_HOME")
    src = prefix()
    dest = os.path.abspath(dest)
    if os.path.realpath(dest) == os.path.realpath(src):
        raise ToolkitError(f"{dest} is this pyhccl's own toolkit (python -m pyhccl --prefix)")
    if os.path.exists(dest):
        if not os.path.isdir(dest):
            raise ToolkitError(f"{dest} exists and is not a directory")
        if os.listdir(dest) and not _is_ours(dest):
            raise ToolkitError(f"{dest} is not empty and holds no pyhccl toolkit "
                               f"(no {ORIGIN}); choose a new or empty directory")
        for name in ENTRIES:  # an earlier install: replace what it wrote, nothing else
            path = os.path.join(dest, name)
            if os.path.islink(path) or os.path.isfile(path):
                os.remove(path)
            elif os.path.isdir(path):
                shutil.rmtree(path)
    os.makedirs(os.path.join(dest, "lib"), exist_ok=True)
    shutil.copytree(os.path.join(src, "include"), os.path.join(dest, "include"))
    for name in LIBRARIES:
        shutil.copy2(os.path.join(src, "lib", name), os.path.join(dest, "lib", name))
    os.symlink("lib", os.path.join(dest, "lib64"))  # where PYHCCL_CANN builds look
    os.makedirs(os.path.join(dest, "bin"))
    for tool in TOOLS:
        shutil.copy2(os.path.join(src, tool), os.path.join(dest, tool))
    os.makedirs(os.path.dirname(os.path.join(dest, ORIGIN)))
    with open(os.path.join(dest, ORIGIN), "w") as f:
        f.write(f"version {pyhccl.__version__}\npython {sys.executable}\npackage {src}\n")
    quoted = "'" + dest.replace("'", "'\\''") + "'"
    with open(os.path.join(dest, "set_env.sh"), "w") as f:
        f.write("# Written by `python -m pyhccl install-toolkit`; source it to use this "
                "toolkit\n# (or run: eval \"$(bin/cann_tool env)\", which follows a moved "
                "directory).\n"
                f"export CANN_HOME={quoted}\n"
                'export PATH="$CANN_HOME/bin:$PATH"\n'
                'export LD_LIBRARY_PATH="$CANN_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\n')
    lacking = missing(dest)
    if lacking:  # a copy must be as complete as its source
        raise ToolkitError(f"{dest} lacks {', '.join(lacking)} after copying")
    return dest
