"""Test the PYHCCL_CANN build path without an NPU (`make test-cann` runs it).

    python tools/cann_build.py [--reduced] OUTDIR

1. OUTDIR/toolkit: the host runtime laid out as a CANN toolkit: include/ (acl/, hccl/)
   from include/, lib64/ from build/lib (libascendcl, libhccl and the CANN library names
   libacl_rt, libmsprofiler, libhcomm). With --reduced the headers lose what older
   toolkits lack (REDUCTIONS below); OUTDIR/toolkit/pyhccl_layout.json lists the names
   removed, for tests/install/test_cann_build.py.
2. OUTDIR/src: a copy of the sources and tests, built in place with
   PYHCCL_CANN=OUTDIR/toolkit, apart from the checkout's own in-place build.
   Run the tests from OUTDIR/src: `import pyhccl` then finds that build.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = ["libascendcl.so", "libhccl.so", "libacl_rt.so", "libmsprofiler.so", "libhcomm.so"]
SOURCES = ["setup.py", "pyproject.toml", "README.md", "LICENSE", "conf", "include", "pyhccl",
           "tests"]
GENERATED = {"lib", "include", "bin", "_build_config.py", "__pycache__"}  # of an in-place build

# What a toolkit older than pyhccl's headers lacks: (header, kind, name). "enumval" removes
# the enumerator line, "func" the whole declaration, "typedef" a `typedef ... name;` line.
REDUCTIONS = [
    ("hccl/hccl_types.h", "enumval", "HCCL_DATA_TYPE_INT128"),
    ("hccl/hccl_types.h", "enumval", "HCCL_DATA_TYPE_HIF8"),
    ("hccl/hccl_types.h", "enumval", "HCCL_DATA_TYPE_FP8E4M3"),
    ("hccl/hccl_types.h", "enumval", "HCCL_DATA_TYPE_FP8E5M2"),
    ("hccl/hccl_types.h", "enumval", "HCCL_DATA_TYPE_FP8E8M0"),
    ("hccl/hccl_types.h", "typedef", "HcclCommSymWindow"),
    ("hccl/hccl_comm.h", "func", "HcclCommSymWinRegister"),
    ("hccl/hccl_comm.h", "func", "HcclCommSymWinDeregister"),
    ("hccl/hccl_comm.h", "func", "HcclGroupStatusGet"),
    ("hccl/hccl_comm.h", "func", "HcclCommGetHandleWithName"),
    ("acl/acl_rt.h", "func", "aclrtReserveMemAddress"),
    ("acl/acl_rt.h", "func", "aclrtReleaseMemAddress"),
]


def say(msg):
    print(f"cann_build: {msg}", flush=True)


def _pattern(kind, name):
    if kind == "enumval":
        return rf"^[ \t]*{name}\b[^,\n]*,?[ \t]*(/\*[^\n]*\*/)?[ \t]*\n"
    if kind == "typedef":
        return rf"^typedef[^;]*\b{name};[ \t]*\n"
    return rf"^[^\n;{{}}#]*\b{name}\s*\([^;]*\);[ \t]*\n"


def reduce_headers(include):
    """Remove REDUCTIONS from the copy under `include`; each must match exactly once."""
    for header, kind, name in REDUCTIONS:
        path = os.path.join(include, header)
        with open(path) as f:
            text = f.read()
        text, n = re.subn(_pattern(kind, name), "", text, flags=re.M)
        if n != 1:
            sys.exit(f"cann_build: {header}: expected one {kind} {name}, found {n}; "
                     "update REDUCTIONS in tools/cann_build.py")
        with open(path, "w") as f:
            f.write(text)


def extension_names():
    """The types and functions pyhccl's own header declares (CANN has none of them)."""
    with open(os.path.join(ROOT, "include", "hccl", "hccl_host.h")) as f:
        text = f.read()
    return sorted(set(re.findall(r"\}\s*(Pyhccl\w+);", text)) |
                  set(re.findall(r"typedef struct \w+ \*(Pyhccl\w+);", text)) |
                  set(re.findall(r"\b(Pyhccl\w+)\s*\(", text)))


def make_toolkit(toolkit, reduced):
    shutil.rmtree(toolkit, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "include"), os.path.join(toolkit, "include"))
    # A toolkit has CANN's headers only: not pyhccl's extensions (hccl/hccl_host.h).
    os.remove(os.path.join(toolkit, "include", "hccl", "hccl_host.h"))
    hccl_h = os.path.join(toolkit, "include", "hccl", "hccl.h")
    with open(hccl_h) as f:
        text = f.read()
    text, n = re.subn(r'^[^\n]*\n#include "hccl/hccl_host.h"\n', "", text, flags=re.M)
    if n != 1:
        sys.exit("cann_build: hccl/hccl.h: expected one #include of hccl/hccl_host.h")
    with open(hccl_h, "w") as f:
        f.write(text)
    os.makedirs(os.path.join(toolkit, "lib64"))
    for lib in LIBS:
        src = os.path.join(ROOT, "build", "lib", lib)
        if not os.path.exists(src):
            sys.exit(f"cann_build: {src} is missing: run `make build` first")
        shutil.copy2(src, os.path.join(toolkit, "lib64"))
    if reduced:
        reduce_headers(os.path.join(toolkit, "include"))
    removed = [name for _, _, name in REDUCTIONS] if reduced else []
    removed += extension_names()  # never in a toolkit
    with open(os.path.join(toolkit, "pyhccl_layout.json"), "w") as f:
        json.dump({"reduced": reduced, "removed": removed}, f, indent=1)
    say(f"toolkit laid out in {toolkit}" + (" (reduced headers)" if reduced else ""))


def copy_sources(src):
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    ignore_pkg = shutil.ignore_patterns("*.so", "*.c", "*.cpp", *GENERATED)
    for name in SOURCES:
        path = os.path.join(ROOT, name)
        if os.path.isdir(path):
            ignore = ignore_pkg if name == "pyhccl" else shutil.ignore_patterns("__pycache__")
            shutil.copytree(path, os.path.join(src, name), ignore=ignore)
        else:
            shutil.copy2(path, src)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--reduced", action="store_true",
                        help="headers without what older toolkits lack")
    args = parser.parse_args()
    outdir = os.path.abspath(args.outdir)
    toolkit, src = os.path.join(outdir, "toolkit"), os.path.join(outdir, "src")
    make_toolkit(toolkit, args.reduced)
    copy_sources(src)
    say(f"building the bindings in {src} with PYHCCL_CANN={toolkit}")
    env = dict(os.environ, PYHCCL_CANN=toolkit)
    env.setdefault("PYHCCL_OPT", "-O0")  # this checks the build path, not the speed
    subprocess.check_call([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                          cwd=src, env=env)


if __name__ == "__main__":
    main()
