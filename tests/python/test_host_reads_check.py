"""PYHCCL_CHECK_HOST_READS=1 (docs/api.rst): a host output read before its stream ran the
call gives NaN, not stale values; ranges a pending call still reads are never filled."""
import json
import os
import subprocess
import sys

import pytest

import pyhccl
from conftest import OWN_JOBS_HERE

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="host buffers need the host runtime")

PROGRAM = r"""
import json
import threading
import numpy as np
import pyhccl

comm = pyhccl.Comm(1, pyhccl.RootInfo.create(), 0)
s = pyhccl.Stream()
gate = threading.Event()
s.launch_host_func(gate.wait, 60)               # the stream runs nothing until the gate opens
x, y = np.full(4, 2.0, np.float32), np.ones(4, np.float32)
comm.all_reduce(x, y, stream=s)                 # y: written
z, out = np.full(4, 3.0, np.float32), np.zeros(4, np.float32)
comm.all_reduce(z, out, stream=s)               # z: read by a pending call
w = np.full(4, 5.0, np.float32)
comm.all_reduce(w, z, stream=s)                 # z written after: must not be filled now
inplace = np.full(4, 7, np.int32)
comm.all_reduce(inplace, stream=s)              # in place: read and written
ints = np.zeros(3, np.int64)
comm.broadcast(ints, root=0, stream=s)          # the root reads its buffer
early = {"y": y.copy(), "z": z.copy(), "inplace": inplace.copy(), "ints": ints.copy()}
gate.set()
s.synchronize()
print("EARLY", json.dumps({k: v.tolist() for k, v in early.items()}))
print("AFTER", json.dumps({"y": y.tolist(), "out": out.tolist(), "z": z.tolist()}))
# The synchronize above finished every call that used z: a new output there is filled.
gate = threading.Event()
s.launch_host_func(gate.wait, 60)
comm.all_reduce(x, z, stream=s)
again = z.copy()
gate.set()
s.synchronize()
print("AGAIN", json.dumps({"early": again.tolist(), "z": z.tolist()}))
comm.destroy()
"""


def _run(tmp_path, check):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PYHCCL_"))}
    env["PYHCCL_CHECK_HOST_READS"] = check
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    return json.loads(lines["EARLY"]), json.loads(lines["AFTER"]), json.loads(lines["AGAIN"])


@pytest.mark.timeout(150)
@pytest.mark.parametrize("check", ["1", "0"])
def test_early_host_reads_give_nan(tmp_path, check):
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own process, from the first rank")
    early, after, again = _run(tmp_path, check)
    nan = [v != v for v in early["y"]]
    assert all(nan) if check == "1" else early["y"] == [1.0] * 4, early
    assert early["z"] == [3.0] * 4 and early["inplace"] == [7] * 4 and early["ints"] == [0] * 3
    assert after == {"y": [2.0] * 4, "out": [3.0] * 4, "z": [5.0] * 4}, after
    # after a synchronize of the stream, its finished calls no longer hold their ranges
    refilled = all(v != v for v in again["early"])
    assert refilled if check == "1" else again["early"] == [5.0] * 4, again
    assert again["z"] == [2.0] * 4, again
