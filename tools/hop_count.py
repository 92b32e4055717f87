"""How far one collective travels through the C code: the hop count of issue 18.

Builds libascendcl.so and libhccl.so without optimisation (so that no function is
inlined away) into build/hops/, runs a 2-rank AllReduce from Python with rank 0
under gdb, and records every function of the runtime and of libhccl entered
between two markers (os.umask(0o123) calls around one `comm.all_reduce(x,
stream=s); s.synchronize()`). It prints the files in the order they were
entered, per thread, and counts:
  hops      entries into a function of another file than the previous entry's
  returns   hops into a file this thread had already left
  up        calls from a lower layer into a higher one (api > comm > algo > op >
            transport > runtime), which the layering forbids; a caller's layer is
            that of the function calling, so returns are not counted
Python's own layer (pyhccl/src/*.pxi) is not traced: the extension has no
debug information. Usage: python tools/hop_count.py [--count N] [--json F]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "hops"
LAYERS = ["api", "comm", "algo", "op", "transport", "runtime"]  # high to low; others: own rank

PROGRAM = r'''
import os, sys, numpy as np, pyhccl
from mpi4py import MPI
from pyhccl.mpi import comm_from_mpi
comm = comm_from_mpi(MPI.COMM_WORLD)
s = pyhccl.Stream()
x = np.ones(int(sys.argv[1]), np.float32)
comm.all_reduce(x, stream=s); s.synchronize()      # warm: set-up paths stay out
MPI.COMM_WORLD.Barrier()
os.umask(os.umask(0o123))                         # the tracer starts here
comm.all_reduce(x, stream=s)
s.synchronize()
os.umask(os.umask(0o123))                         # and stops here
MPI.COMM_WORLD.Barrier()
comm.destroy()
'''

GDB_DRIVER = r'''
import gdb, json, re, sys
records = []
class Rec(gdb.Breakpoint):
    def __init__(self, spec, path):
        super().__init__(spec, internal=True)
        self.path = path
    def stop(self):
        f = gdb.selected_frame()
        caller = f.older()
        sal = caller.find_sal() if caller is not None else None
        cpath = sal.symtab.filename.lstrip("./") if sal is not None and sal.symtab else ""
        records.append((gdb.selected_thread().num, self.path, f.name() or "?", cpath))
        return False
gdb.execute("set pagination off")
gdb.execute("set breakpoint pending on")
gdb.execute("set print thread-events off")
gdb.execute("break umask if $rdi == 0123")        # the markers: nothing else asks for 0123
gdb.execute("run")                              # stops at the first marker
text = "".join(gdb.execute(f"info functions ^{p}", to_string=True)
               for p in ("hccl::", "hostrt::", "Hccl", "acl", "Pyhccl"))
path = None
specs = []
for line in text.splitlines():
    m = re.match(r"File (.+):$", line)
    if m:
        p = m.group(1).lstrip("./")
        path = p if p.split("/")[0] in ("hccl", "runtime", "common") else None
        continue
    m = re.match(r"(\d+):\s", line)
    if path and m:
        specs.append((m.group(1), path))
seen, recs = set(), []
for line_no, p in specs:
    spec = f"{p}:{line_no}"
    if spec in seen:
        continue
    seen.add(spec)
    try:
        recs.append(Rec(spec, p))
    except gdb.error:
        pass
gdb.write(f"hop_count: {len(specs)} functions, {len(seen)} breakpoints\n", gdb.STDERR)
gdb.execute("continue")                         # runs to the second marker
for b in recs:                                  # internal: "delete" leaves them
    b.delete()
gdb.execute("delete")                           # the marker
json.dump(records, open(OUTFILE, "w"))
gdb.execute("continue")
'''


def layer(path):
    parts = path.split("/")
    return parts[1] if parts[0] == "hccl" and len(parts) > 2 else parts[0]


def rank_of(lay):
    return LAYERS.index(lay) if lay in LAYERS else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1024, help="floats in the AllReduce")
    ap.add_argument("--json", help="write the record here")
    args = ap.parse_args()
    venv = ROOT / ".venv" / "bin"
    subprocess.run(["make", "-s", "-C", str(ROOT / "csrc"), "DEBUG=1", f"OUT={OUT}/lib",
                    f"OBJ={OUT}/obj", "-j2"], check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        prog, driver, rec = Path(tmp, "prog.py"), Path(tmp, "drv.py"), Path(tmp, "rec.json")
        prog.write_text(PROGRAM)
        driver.write_text(f"OUTFILE = {str(rec)!r}\n" + GDB_DRIVER)
        env = dict(os.environ, LD_LIBRARY_PATH=f"{OUT}/lib")  # before the RUNPATH
        py = str(venv / "python")
        cmd = [str(venv / "mpiexec"), "-n", "1", "gdb", "-q", "-batch", "-x", str(driver),
               "--args", py, str(prog), str(args.count), ":", "-n", "1", py, str(prog),
               str(args.count)]
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, timeout=900)
        records = json.loads(rec.read_text())
    if args.json:
        Path(args.json).write_text(json.dumps(records))
    report(records)


def report(records):
    by_thread = {}
    up = 0
    ups, layer_calls = set(), set()
    for tid, path, fn, caller in records:
        if caller and layer(caller) != layer(path) and rank_of(layer(path)) is not None:
            layer_calls.add(f"{layer(caller)} -> {layer(path)}")
        a, b = rank_of(layer(caller)) if caller else None, rank_of(layer(path))
        if a is not None and b is not None and b < a:
            up += 1
            ups.add(f"{caller} -> {path} ({fn})")
    for tid, path, fn, caller in records:  # a header and its source are one module: hub.h = hub.cc
        by_thread.setdefault(tid, []).append((path.rsplit(".", 1)[0], fn))
    hops = returns = 0
    files = set()
    for tid, seq in by_thread.items():
        if not any(rank_of(layer(p)) is not None for p, _ in seq):
            continue  # a background thread (the bootstrap server's): not this call's path
        trail, left = [], set()
        for path, fn in seq:
            files.add(path)
            if trail and trail[-1][0] == path:
                continue
            if trail:
                hops += 1
                prev = trail[-1][0]
                left.add(prev)
                if path in left:
                    returns += 1
            trail.append((path, fn))
        print(f"thread {tid}: {len(trail)} stays")
        for path, fn in trail:
            print(f"  {path:40s} {fn}")
    for u in sorted(ups):
        print(f"up: {u}")
    print("calls between layers: " + ", ".join(sorted(layer_calls)))
    print(f"hops {hops}, modules {len(files)}, returns to a file already left {returns}, "
          f"calls up a layer {up}")


if __name__ == "__main__":
    sys.exit(main())
