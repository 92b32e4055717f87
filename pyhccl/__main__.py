"""Command line of pyhccl: build flags for C programs, the toolkit directory, and `info`.

    cc prog.c $(python -m pyhccl --cflags) $(python -m pyhccl --libs)
    python -m pyhccl info      # version, build, devices, transports, environment, MPI
    export CANN_HOME=$(python -m pyhccl --prefix)    # a CANN-toolkit-shaped directory
    python -m pyhccl install-toolkit /opt/cann       # a copy of it, independent of the venv

The host runtime's library directory also holds the names CANN's build files link
(libacl_rt.so, libmsprofiler.so, libhcomm.so), so a CANN Makefile pointed at
--library-dir links unchanged. A build against a CANN toolkit (PYHCCL_CANN) prints
the toolkit's directories and libraries.
"""

import argparse
import shlex
import sys
from typing import Any, List, Optional, Tuple

import pyhccl


def _build() -> Tuple[str, str, List[str]]:
    """(include dir, library dir, libraries) of the runtime this copy was built with."""
    cfg: Any = None
    try:
        from pyhccl import _build_config as cfg
    except ImportError:  # a checkout built before setup.py wrote the record
        pass
    if cfg is not None and cfg.BUILD == "cann":
        return str(cfg.INCLUDE_DIR), str(cfg.LIBRARY_DIR), [str(n) for n in cfg.LIBRARIES]
    return pyhccl.get_include(), pyhccl.get_library_dir(), ["hccl", "ascendcl"]


def main(argv: Optional[List[str]] = None) -> int:
    """Parse `argv` and print the requested flags, or the `info` report."""
    parser = argparse.ArgumentParser(prog="python -m pyhccl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=["info", "install-toolkit"],
                        help="info: print what pyhccl is built on and how it is configured; "
                             "install-toolkit DIR: copy the toolkit (include/, lib/, "
                             "bin/cann_tool) to DIR")
    parser.add_argument("dir", nargs="?", metavar="DIR", help="install-toolkit: where to")
    parser.add_argument("--prefix", action="store_true",
                        help="the toolkit directory (CANN_HOME: include/, lib/, bin/cann_tool)")
    parser.add_argument("--cflags", action="store_true", help="compiler flags (-I...)")
    parser.add_argument("--libs", action="store_true",
                        help="linker flags (-L... -lhccl -lascendcl -Wl,-rpath,...)")
    parser.add_argument("--include-dir", action="store_true", help="the header directory")
    parser.add_argument("--library-dir", action="store_true", help="the library directory")
    parser.add_argument("--version", action="store_true", help="the pyhccl version")
    args = parser.parse_args(argv)
    if (args.command == "install-toolkit") != (args.dir is not None):
        parser.error("install-toolkit takes one directory: python -m pyhccl install-toolkit DIR"
                     if args.command == "install-toolkit" else
                     f"unexpected argument {args.dir!r}")
    if args.command == "info":
        from pyhccl import info
        return info.main()
    out = []
    if args.command == "install-toolkit" or args.prefix:
        from pyhccl import toolkit
        try:
            if args.command == "install-toolkit":
                dest = toolkit.install(args.dir)
                print(f"pyhccl: toolkit installed in {dest}\n"
                      f"  export CANN_HOME={shlex.quote(dest)}   (or: source {dest}/set_env.sh)")
                return 0
            out.append(toolkit.prefix())
        except (toolkit.ToolkitError, OSError) as exc:
            print(f"python -m pyhccl: {args.command or '--prefix'}: {exc}", file=sys.stderr)
            return 1
    inc, lib, libs = _build()
    if args.cflags:
        out.append("-I" + shlex.quote(inc))
    if args.libs:
        flags = " ".join("-l" + n for n in libs)
        out.append(f"-L{shlex.quote(lib)} {flags} -Wl,-rpath,{shlex.quote(lib)}")
    if args.include_dir:
        out.append(inc)
    if args.library_dir:
        out.append(lib)
    if args.version:
        out.append(pyhccl.__version__)
    if not out:
        parser.print_help()
        return 1
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
