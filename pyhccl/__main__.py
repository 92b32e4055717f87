"""Print build flags for C programs using the runtime pyhccl was built with.

    cc prog.c $(python -m pyhccl --cflags) $(python -m pyhccl --libs)

The host runtime's library directory also holds the names CANN's build files link
(libacl_rt.so, libmsprofiler.so, libhcomm.so), so a CANN Makefile pointed at
--library-dir links unchanged. A build against a CANN toolkit (PYHCCL_CANN) prints
the toolkit's directories and libraries.
"""

import argparse
import shlex
import sys

import pyhccl


def _build():
    """(include dir, library dir, libraries) of the runtime this copy was built with."""
    try:
        from pyhccl import _build_config as cfg
    except ImportError:  # a checkout built before setup.py wrote the record
        cfg = None
    if cfg is not None and cfg.BUILD == "cann":
        return cfg.INCLUDE_DIR, cfg.LIBRARY_DIR, list(cfg.LIBRARIES)
    return pyhccl.get_include(), pyhccl.get_library_dir(), ["hccl", "ascendcl"]


def main(argv=None):
    """Parse `argv` and print the requested flags."""
    parser = argparse.ArgumentParser(prog="python -m pyhccl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cflags", action="store_true", help="compiler flags (-I...)")
    parser.add_argument("--libs", action="store_true",
                        help="linker flags (-L... -lhccl -lascendcl -Wl,-rpath,...)")
    parser.add_argument("--include-dir", action="store_true", help="the header directory")
    parser.add_argument("--library-dir", action="store_true", help="the library directory")
    parser.add_argument("--version", action="store_true", help="the pyhccl version")
    args = parser.parse_args(argv)
    inc, lib, libs = _build()
    out = []
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
