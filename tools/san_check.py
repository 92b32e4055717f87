"""Sanitizer runs of the host runtime: `make test SAN=address` (ASan + UBSan, leaks
included) or `make test SAN=thread` (TSan).

Builds libascendcl.so and libhccl.so with the sanitizer into build/san-<kind>/, compiles
the C checks of tests/c/ against them with the same sanitizer, and runs them: the
runtime checks in one process, and the multi-rank collective checks (every collective,
one host and tagged hosts over TCP, mismatches, abort, a killed rank) as one process per
rank. Any sanitizer report fails the run (the sanitizers exit non-zero, and their
reports are searched for as well). `--quick` runs the subset that `make test` runs in CI.

    python tools/san_check.py address [--quick]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "c"))
from csources import sources  # noqa: E402  (the files of each C check)

FLAGS = {
    "address": ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                "-fno-omit-frame-pointer"],
    "thread": ["-fsanitize=thread"],
}
REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
           "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")

# (name, ranks, mode args, environment, host layout or None)
RANKED = [
    ("suite 2 host", 2, ["suite", "host"], {}, None),
    ("suite 3 device", 3, ["suite", "device"], {}, None),
    ("suite 2x2 tcp", 4, ["suite", "host"], {"CHECK_FOLD_ORDER": "any"}, [0, 0, 1, 1]),
    ("mismatch count", 3, ["mismatch", "count"], {}, None),
    ("mismatch bcastroot", 3, ["mismatch", "bcastroot"], {}, None),
    ("abort", 3, ["abort"], {}, None),
    ("kill", 3, ["kill"], {}, None),
    ("order opposite", 2, ["order", "opposite", "262144", "host"], {}, None),
    ("order opposite board", 2, ["order", "opposite", "8", "host"], {}, None),
]
QUICK = {"suite 2 host", "mismatch count", "abort", "order opposite"}


def run(cmd, **kw):
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(cmd, **kw)


def build(kind, out):
    make = ["make", "-s", "-C", str(ROOT / "csrc"), f"-j{os.cpu_count() or 2}", f"SAN={kind}",
            f"OUT={out / 'lib'}", f"OBJ={out / 'obj'}"]
    if run(make).returncode != 0:
        sys.exit("the sanitizer build failed")


def compile_check(kind, lib, source, exe, cxx=False):
    """tests/c/`source` and the files it is split into, built as `exe` with the sanitizer."""
    cmd = ["g++" if cxx else "gcc", "-std=c++17" if cxx else "-std=c99", "-O1", "-g",
           *FLAGS[kind], "-I", str(ROOT / "include"), "-I", str(ROOT / "csrc"), *map(str, sources(source)),
           "-L", str(lib), "-lhccl", "-lascendcl", f"-Wl,-rpath,{lib}", "-pthread", "-lm",
           "-o", str(exe)]
    if run(cmd).returncode != 0:
        sys.exit(f"compiling {source} failed")


def sanitizer_env(kind):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYHCCL_", "HCCL_"))}
    env.update(HCCL_CONNECT_TIMEOUT="60", HCCL_EXEC_TIMEOUT="60", PYHCCL_ARENA_BYTES="4G")
    if kind == "address":
        env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    else:
        env["TSAN_OPTIONS"] = "halt_on_error=1:second_deadlock_stack=1:die_after_fork=0"
    return env


def check_output(name, out):
    bad = [line for line in out.splitlines() if any(r in line for r in REPORTS)]
    return f"{name}: sanitizer report:\n{out}" if bad else None


def run_single(kind, exe, expect):
    proc = run([str(exe)], capture_output=True, text=True, timeout=600, env=sanitizer_env(kind))
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 or expect not in out:
        return f"{exe.name}: exit {proc.returncode}\n{out}"
    return check_output(exe.name, out)


def run_ranked(kind, exe, tmp, name, n, args, extra, layout):
    env = sanitizer_env(kind)
    env.update(extra)
    rootfile = Path(tmp) / f"root-{time.monotonic_ns()}"
    mode, rest = args[0], args[1:]
    procs = []
    for r in range(n):
        renv = dict(env)
        if layout:
            renv["PYHCCL_HOST_TAG"] = f"h{layout[r]}"
        procs.append(subprocess.Popen([str(exe), mode, str(r), str(n), str(rootfile), *rest],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env=renv))
    outs = []
    for p in procs:
        try:
            outs.append((p.wait(timeout=900), p.stdout.read()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            return f"{name}: timed out"
    for r, (rc, out) in enumerate(outs):
        killed = mode == "kill" and r == n - 1
        if not killed and (rc != 0 or f"rank {r}: PASS" not in out):
            return f"{name}: rank {r} exit {rc}\n{out}"
        problem = check_output(f"{name} rank {r}", out)
        if problem:
            return problem
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=sorted(FLAGS))
    ap.add_argument("--quick", action="store_true", help="the subset CI runs")
    opts = ap.parse_args()
    out = ROOT / "build" / f"san-{opts.kind}"
    build(opts.kind, out)
    lib = out / "lib"
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        hccl = Path(tmp) / "hccl_check"
        compile_check(opts.kind, lib, "hccl_check.c", hccl)
        singles = [("runtime_check.c", "runtime ok"), ("vmm_check.c", "vmm ok")]
        if opts.kind == "thread":  # it forks from a threaded process, which TSan cannot follow
            singles = singles[1:]
        for source, expect in singles[:1] if opts.quick else singles:
            exe = Path(tmp) / source[:-2]
            compile_check(opts.kind, lib, source, exe)
            failures.append(run_single(opts.kind, exe, expect))
        for name, n, args, extra, layout in RANKED:
            if opts.quick and name not in QUICK:
                continue
            t0 = time.monotonic()
            failures.append(run_ranked(opts.kind, hccl, tmp, name, n, args, extra, layout))
            print(f"  {name}: {'ok' if failures[-1] is None else 'FAILED'} "
                  f"({time.monotonic() - t0:.0f} s)", flush=True)
    failures = [f for f in failures if f]
    for f in failures:
        print(f, file=sys.stderr)
    print(f"sanitizer ({opts.kind}{', quick' if opts.quick else ''}): "
          f"{'FAILED' if failures else 'clean'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
