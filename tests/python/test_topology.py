"""A healthy communicator's topology (hosts, local ranks, transports) and its flight record
(the last operations); faults/test_failures.py has what they show when things fail."""
import os

import numpy as np
import pytest

import pyhccl
from conftest import RANK, SIZE, assert_all

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="pyhccl's extensions need the host runtime")


@pytest.mark.mpi
def test_topology(world):
    """Every rank in exactly one host; this rank's own entries agree; self/shm/tcp make sense."""
    t = world.topology
    everyone = sorted(r for host in t.hosts for r in host)
    mine = t.hosts[t.host]
    assert_all(everyone == list(range(SIZE)) and RANK in mine and t.local_rank == mine.index(RANK)
               and t.local_size == len(mine) and len(t.host_names) == len(t.hosts)
               and t.transports[RANK] == "self"
               and all(t.transports[p] in ("shm", "tcp") for p in range(SIZE) if p != RANK),
               f"topology {t}")
    assert all(t.transports[p] == "shm" for p in mine if p != RANK) or \
        os.environ.get("PYHCCL_TRANSPORT") == "tcp"


@pytest.mark.mpi
def test_flight_record(world, stream):
    """The last operations, with their names, counts, states and times."""
    x = pyhccl.full(10, 1, np.float32)
    world.all_reduce(x, op=pyhccl.SUM, stream=stream)
    world.broadcast(x, root=0, stream=stream)
    stream.synchronize()
    record = world.flight_record()
    last = record[-2:]
    assert [r["op"] for r in last] == ["HcclAllReduce", "HcclBroadcast"], record
    assert all(r["state"] == "done" and r["count"] == 10 for r in last), record
    assert last[0]["seq"] + 1 == last[1]["seq"]
    assert last[0]["end_us"] >= last[0]["start_us"] >= last[0]["enqueue_us"]
    assert last[0]["dtype"] == pyhccl.FLOAT32 and last[1]["root"] == 0
