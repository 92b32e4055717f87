"""Command line of pyhccl: build flags for C programs, and `info`.

    cc prog.c $(python -m pyhccl --cflags) $(python -m pyhccl --libs)
    python -m pyhccl info      # version, build, devices, transports, environment, MPI
"""

import argparse
import shlex
import sys
from typing import List, Optional

import pyhccl


def main(argv: Optional[List[str]] = None) -> int:
    """Parse `argv` and print the requested flags, or the `info` report."""
    parser = argparse.ArgumentParser(prog="python -m pyhccl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=["info"],
                        help="info: print what pyhccl is built on and how it is configured")
    parser.add_argument("--cflags", action="store_true", help="compiler flags (-I...)")
    parser.add_argument("--libs", action="store_true",
                        help="linker flags (-L... -lhccl -lascendcl -Wl,-rpath,...)")
    parser.add_argument("--include-dir", action="store_true", help="the header directory")
    parser.add_argument("--library-dir", action="store_true", help="the library directory")
    parser.add_argument("--version", action="store_true", help="the pyhccl version")
    args = parser.parse_args(argv)
    if args.command == "info":
        from pyhccl import info
        return info.main()
    inc = pyhccl.get_include()
    lib = pyhccl.get_library_dir()
    out = []
    if args.cflags:
        out.append("-I" + shlex.quote(inc))
    if args.libs:
        out.append(f"-L{shlex.quote(lib)} -lhccl -lascendcl -Wl,-rpath,{shlex.quote(lib)}")
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
