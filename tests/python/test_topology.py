"""A healthy communicator's topology (hosts, local ranks, transports) and its flight record
(the last operations); faults/test_failures.py has what they show when things fail."""
import os
import re

import numpy as np
import pytest

import pyhccl
from conftest import OWN_JOBS_HERE, RANK, SIZE, assert_all
from rank_procs import run_ranks

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


SET_UP_ON = """
    rank, path, cpus = int(sys.argv[1]), sys.argv[2], os.environ["CPUS"]
    os.sched_setaffinity(0, [int(c) for c in cpus.split(",")])
    comm = pyhccl.Comm(int(os.environ["N"]), root_info(path, rank), rank)
    if os.environ.get("SPLIT"):
        comm.split(rank).destroy()  # a communicator of this rank alone
    comm.destroy()
"""
WAITS = re.compile(r"waits spin (\d+) us, then yield (\d+) us \(up to (\d+) us\)")
FIFOS = re.compile(r"shm to (\d+) peer\(s\) \((\d+) x (\d+) B FIFOs\)")


def set_up_lines(tmp_path, hosts, cpus, split=False, env=None, pattern=WAITS):
    """`pattern`'s groups, as ints, in every rank's set-up line of the info log for a
    communicator on `hosts` (host tags), the ranks pinned to `cpus` (with `split`, each rank's
    line for the communicator of itself alone that it splits off afterwards)."""
    tmp_path.mkdir()
    outs = run_ranks(tmp_path, SET_UP_ON, len(hosts),
                     env={"ASCEND_GLOBAL_LOG_LEVEL": "1", "PYHCCL_LOG_SUBSYS": "INIT", "N": str(len(hosts)),
                          "CPUS": ",".join(map(str, cpus)), "SPLIT": "1" if split else "", **(env or {})},
                     rank_env={r: {"PYHCCL_HOST_TAG": h} for r, h in enumerate(hosts)})
    found = [pattern.findall(out) for out in outs]
    assert all(len(f) == (2 if split else 1) for f in found), outs
    return [tuple(int(v) for v in f[-1]) for f in found]


def wait_budgets(tmp_path, hosts, cpus, split=False):
    """(spin, yield, most yield) in us of every rank (set_up_lines)."""
    return set_up_lines(tmp_path, hosts, cpus, split)


@pytest.mark.timeout(120)
def test_fifo_slots(tmp_path):
    """Unless rank 0 sets PYHCCL_SLOTS, a FIFO toward a local peer has 8 slots of 128 KiB on
    one host, and across hosts up to 16 (2 MiB in flight) within 8 MiB a rank, at least 8: a
    rank asleep on its sockets refills its FIFOs only when it wakes, and 1 MiB in flight
    paced the steps inside a host (docs/TRANSPORT.md)."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    cpus = sorted(os.sched_getaffinity(0))

    def fifos(label, hosts, env=None):
        return set_up_lines(tmp_path / label, hosts, cpus, env=env, pattern=FIFOS)
    assert fifos("one-host", ("h0", "h0")) == [(1, 8, 131072)] * 2
    assert fifos("2x2", ("h0", "h0", "h1", "h1")) == [(1, 16, 131072)] * 4
    # every host's FIFOs alike, sized for the host with the most ranks (8 MiB / 5 FIFOs)
    assert fifos("6+1", ("h0",) * 6 + ("h1",)) == [(5, 12, 131072)] * 6 + [(0, 12, 131072)]
    assert fifos("set", ("h0", "h0", "h1", "h1"), {"PYHCCL_SLOTS": "4"}) == [(1, 4, 131072)] * 4


@pytest.mark.timeout(120)
def test_ranks_sharing_cores_do_not_spin(tmp_path):
    """A wait spins (5 us) only where this machine has a core for each of its ranks:
    hosts that share one kernel (network namespaces, containers, host tags) share its
    cores, so two "hosts" of one rank each on one core yield at once; with a core each
    they spin. Across hosts they then yield 2 ms, on one host 50 us (stretched up to 2 ms
    while waits are short); across hosts with more than two ranks to a core, 50 us stretched
    up to 200 us."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    cpus = sorted(os.sched_getaffinity(0))
    assert wait_budgets(tmp_path / "one-core", ("h0", "h1"), cpus[:1]) == [(0, 2000, 2000)] * 2
    assert wait_budgets(tmp_path / "one-host", ("h0", "h0"), cpus[:1]) == [(0, 50, 2000)] * 2
    assert wait_budgets(tmp_path / "crowded", ("h0", "h0", "h1"), cpus[:1]) == [(0, 50, 200)] * 3
    assert wait_budgets(tmp_path / "crowded-one-host", ("h0",) * 3, cpus[:1]) == [(0, 50, 2000)] * 3
    # A communicator split off counts the ranks its process has seen on this machine, not
    # only its own members: they still share the core
    assert wait_budgets(tmp_path / "split", ("h0", "h0"), cpus[:1], split=True) == [(0, 50, 2000)] * 2
    if len(cpus) >= 2:
        assert wait_budgets(tmp_path / "two-cores", ("h0", "h1"), cpus[:2]) == [(5, 2000, 2000)] * 2
