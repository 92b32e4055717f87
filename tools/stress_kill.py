"""Stress: kill a rank at a random moment, many times, and count what goes wrong.

Each trial starts 4 ranks of tests/c/hccl_check.c in "kill" mode: they loop
AllReduce + Barrier, checking every result that is reported as a success, while
the last rank SIGKILLs itself after a random delay. A trial is good when every
survivor ends with an error naming the dead rank. The report counts hangs (a
survivor still running after 60 s), wrong results reported as successes, and
other failures, and gives the time from the kill to the survivors' errors.

    python tools/stress_kill.py [--trials 100] [--seed 1]

Not part of the test run (it takes minutes); the numbers go into the closing note.
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "c"))
from csources import sources  # noqa: E402  (the files of each C check)

LIB = ROOT / "build" / "lib"
LAYOUTS = {"one host": [0, 0, 0, 0], "2x2 hosts": [0, 0, 1, 1], "4x1 hosts": [0, 1, 2, 3]}


def build(tmp):
    subprocess.run(["make", "-s", "-C", str(ROOT / "csrc"), "-j2"], check=True)
    exe = Path(tmp) / "hccl_check"
    subprocess.run(["gcc", "-std=c99", "-O2", f"-I{ROOT / 'include'}", *map(str, sources("hccl_check.c")),
                    f"-L{LIB}", "-lhccl", "-lascendcl", f"-Wl,-rpath,{LIB}", "-lpthread", "-lm",
                    "-o", str(exe)], check=True)
    return exe


def trial(exe, tmp, i, rng):
    count = rng.choice([8, 1000, 65536, 1 << 20])
    delay_us = rng.randrange(0, 500000)
    layout_name = rng.choice(sorted(LAYOUTS))
    layout = LAYOUTS[layout_name]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYHCCL_", "HCCL_"))}
    env.update(HCCL_CONNECT_TIMEOUT="30", HCCL_EXEC_TIMEOUT="30", CHECK_KILL_DELAY_US=str(delay_us))
    rootfile = Path(tmp) / f"root-{i}"
    t_start = time.monotonic()
    procs = [subprocess.Popen([str(exe), "kill", str(r), "4", str(rootfile), str(count), "host"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**env, "PYHCCL_HOST_TAG": f"h{layout[r]}"})
             for r in range(4)]
    outcome, times = "ok", []
    for r, p in enumerate(procs):
        try:
            p.wait(timeout=max(1, 60 - (time.monotonic() - t_start)))
        except subprocess.TimeoutExpired:
            outcome = "hang"
    for p in procs:
        p.kill()
        p.wait()
    outs = [p.stdout.read() for p in procs]
    if outcome == "ok":
        for r, out in enumerate(outs[:-1]):
            if "wrong elements" in out:
                outcome = "wrong data"
                break
            if f"rank {r}: PASS" not in out or "rank 3" not in out:
                outcome = "other failure"
                break
            m = re.search(r"after ([0-9.]+) s", out)
            if m:  # from the kill (about delay_us after the loop started) to the error
                times.append(max(0.0, float(m.group(1)) - delay_us / 1e6))
    detail = f"count {count}, kill after {delay_us / 1000:.0f} ms, {layout_name}"
    return outcome, times, detail, outs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    opts = ap.parse_args()
    rng = random.Random(opts.seed)
    counts = {"ok": 0, "hang": 0, "wrong data": 0, "other failure": 0}
    to_error = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        for i in range(opts.trials):
            outcome, times, detail, outs = trial(exe, tmp, i, rng)
            counts[outcome] += 1
            to_error += times
            if outcome != "ok":
                print(f"trial {i}: {outcome} ({detail})\n" + "\n".join(outs), file=sys.stderr)
            print(f"trial {i + 1}/{opts.trials}: {outcome} ({detail})", flush=True)
    print(f"\n{opts.trials} trials: {counts['ok']} ok, {counts['hang']} hangs, "
          f"{counts['wrong data']} wrong results, {counts['other failure']} other failures")
    if to_error:
        print(f"time from the kill to a survivor's error: min {min(to_error) * 1e3:.0f} ms, "
              f"median {statistics.median(to_error) * 1e3:.0f} ms, max {max(to_error) * 1e3:.0f} ms")
    return 0 if counts["ok"] == opts.trials else 1


if __name__ == "__main__":
    sys.exit(main())
