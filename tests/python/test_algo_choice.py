"""The algorithm choice across hosts follows the cost model (csrc/hccl/algo/select.cc,
docs/TRANSPORT.md): with the link declared at 1 Gbit/s, a small AllReduce goes flat (through
the leaders where each message costs a rank much), a medium one through one leader per
host, a large one hierarchically; a Broadcast never
fans out from the root to every rank of another host; what rank 0 does not declare of the
link is measured at set-up. Hosts simulated by host tags on this machine (TCP between
them)."""
import json
import re

import pytest

import pyhccl
from conftest import OWN_JOBS_HERE
from rank_procs import run_ranks

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="needs the host runtime")

PROGRAM = """
    import json
    rank, path = int(sys.argv[1]), sys.argv[2]
    n = int(os.environ["NRANKS"])
    comm = pyhccl.Comm(n, root_info(path, rank), rank)
    s = pyhccl.Stream()
    seen = {}
    for size in (8, 64 << 10, 4 << 20):
        x = np.full(size // 4, rank + 1, np.float32)
        comm.all_reduce(x, stream=s)
        y = np.full(size // 4, 7 if rank == 0 else 0, np.float32)
        comm.broadcast(y, root=0, stream=s)
        s.synchronize()
        assert (x == n * (n + 1) / 2).all() and (y == 7).all()
        block = max(size // 4 // n, 1)
        mine = np.full(block, rank + 1, np.float32)
        every = np.empty(block * n, np.float32)
        comm.all_gather(mine, every, stream=s)
        part = np.empty(block, np.float32)
        comm.reduce_scatter(np.repeat(np.arange(n, dtype=np.float32) + rank, block), part, stream=s)
        s.synchronize()
        assert (every == np.repeat(np.arange(1, n + 1), block)).all()
        assert (part == n * rank + n * (n - 1) / 2).all()
        total = np.empty(size // 4, np.float32)
        comm.reduce(np.full(size // 4, rank + 1, np.float32), total, "sum", root=0, stream=s)
        s.synchronize()
        assert rank != 0 or (total == n * (n + 1) / 2).all()
        mine = np.repeat(np.arange(n, dtype=np.float32) * 100 + rank, block)
        theirs = np.empty_like(mine)
        comm.all_to_all(mine, theirs, stream=s)
        s.synchronize()
        assert (theirs == np.repeat(np.arange(n) + rank * 100, block)).all()
        ar, bc, ag, rs, rd, aa = comm.flight_record()[-6:]
        seen[size] = [ar["algorithm"], bc["algorithm"], ag["algorithm"], rs["algorithm"],
                      rd["algorithm"], aa["algorithm"]]
    print("SEEN", json.dumps(seen), flush=True)
    comm.destroy()
"""


def choices(tmp_path, hosts, message_us=1):
    tmp_path.mkdir()
    outs = run_ranks(tmp_path, PROGRAM, len(hosts),
                     env={"PYHCCL_NET_MBITS": "1000", "PYHCCL_NET_LATENCY_US": "50",
                          "PYHCCL_NET_MESSAGE_US": str(message_us), "NRANKS": str(len(hosts))},
                     rank_env={r: {"PYHCCL_HOST_TAG": f"h{h}"} for r, h in enumerate(hosts)})
    line = [ln for ln in outs[0].splitlines() if ln.startswith("SEEN ")]
    assert line, outs
    return {int(k): v for k, v in json.loads(line[0][5:]).items()}


@pytest.mark.timeout(120)
def test_choices_follow_the_cost_model(tmp_path):
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    two_by_two = choices(tmp_path / "2x2", [0, 0, 1, 1])
    assert [two_by_two[s][0] for s in (8, 64 << 10, 4 << 20)] == ["flat", "leader", "hier"], two_by_two
    # Reduce: flat while n - L buffers over the root host's link cost no more than the
    # tree's H - 1 and its step inside the host
    assert [two_by_two[s][4] for s in (8, 64 << 10)] == ["flat", "hosts:star"], two_by_two
    # AlltoAll: pairwise where messages between hosts cost a rank little (1 us here), by
    # rails from blocks of 64 KiB (which go to local peers by reference from device memory)
    assert [two_by_two[s][5] for s in (8, 4 << 20)] == ["pairwise", "rail"], two_by_two
    # One rank per host on two hosts: flat carries what the ring does, but folds only once
    # everything has come, so the ring of hosts takes over from some 64 KiB
    two_by_one = choices(tmp_path / "2x1", [0, 1])
    assert [two_by_one[s][0] for s in (8, 64 << 10, 4 << 20)] == ["flat", "flat", "hier"], two_by_one
    four_by_one = choices(tmp_path / "4x1", [0, 1, 2, 3])
    # AllReduce between 4 leaders: a medium one halves, then doubles (a reduce-scatter and
    # an all-gather: 1.5 S over each link in 4 steps, where the ring of hosts takes 6)
    assert [four_by_one[s][0] for s in (8, 64 << 10, 4 << 20)] == ["flat", "leader:halving",
                                                                     "hier"], four_by_one
    assert four_by_one[8][1] == "hosts:star", four_by_one
    assert four_by_one[64 << 10][1] == "hosts:chain", four_by_one
    # Reduce: against the tree's chain between hosts (one buffer per link), not only its
    # star (H - 1 buffers over the root's link, as flat's n - L)
    assert [four_by_one[s][4] for s in (8, 64 << 10)] == ["flat", "hosts:chain"], four_by_one
    # AllGather and ReduceScatter: one leader per host while its copies cost less than
    # the ring's extra steps, then the pipelined ring of hosts; between 4 leaders,
    # recursive doubling
    assert [four_by_one[s][2:4] for s in (8, 64 << 10, 4 << 20)] == [
        ["leader:doubling"] * 2, ["leader:doubling"] * 2, ["hier"] * 2], four_by_one
    uneven = choices(tmp_path / "3+1", [0, 0, 0, 1])
    assert [uneven[s][2:4] for s in (8, 4 << 20)] == [["leader"] * 2, ["ring"] * 2], uneven
    # Where each message between hosts costs a rank 20 us, a small AllReduce on 2x2 goes
    # through the leaders (one message each way) rather than flat (two per rank)
    costly = choices(tmp_path / "2x2-20us", [0, 0, 1, 1], message_us=20)
    assert costly[8][0] == "leader", costly
    # and so does a small AlltoAll (one message between the hosts each way, not two per
    # rank), while the leaders' copies inside the host cost less than what they spare:
    # at 64 KiB still, their copies in cache
    assert [costly[s][5] for s in (8, 64 << 10, 4 << 20)] == ["leader", "leader", "rail"], costly
    # Where each costs 40 us (against 50 us of latency), a small Broadcast or Reduce on 4x1
    # goes along a chain between hosts (one message in and one out at each) rather than a
    # star (three at the root) or flat (three at the root)
    costly = choices(tmp_path / "4x1-40us", [0, 1, 2, 3], message_us=40)
    assert [costly[8][1], costly[8][4]] == ["hosts:chain"] * 2, costly


SET_UP = """
    rank, path = int(sys.argv[1]), sys.argv[2]
    comm = pyhccl.Comm(2, root_info(path, rank), rank)
    comm.destroy()
"""
LINK = re.compile(r"link between hosts: ([\d.]+) us \((\w+)[^)]*\), ([\d.]+) Gbit/s \((\w+)[^)]*\), "
                  r"([\d.]+) us per message \((\w+)")


def link_line(tmp_path, env, hosts=("h0", "h1")):
    tmp_path.mkdir()
    outs = run_ranks(tmp_path, SET_UP, 2, env={"ASCEND_GLOBAL_LOG_LEVEL": "1",
                                               "PYHCCL_LOG_SUBSYS": "INIT", **env},
                     rank_env={r: {"PYHCCL_HOST_TAG": h} for r, h in enumerate(hosts)})
    found = [LINK.search(out) for out in outs]
    assert all(found), outs
    assert len({m.groups() for m in found}) == 1, outs  # every rank took rank 0's
    lat, lat_how, rate, rate_how, msg, msg_how = found[0].groups()
    return float(lat), lat_how, float(rate), rate_how, float(msg), msg_how


@pytest.mark.timeout(120)
def test_the_link_is_measured_unless_declared(tmp_path):
    """Across hosts, rank 0 and its partner time ping-pongs, a burst and a run of small
    messages at set-up; a value rank 0 declares is taken as it is (here loopback TCP: fast,
    and far from the declared 3 Gbit/s, 777 us and 123 us per message); on one host nothing
    is measured."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    lat, lat_how, rate, rate_how, msg, msg_how = link_line(tmp_path / "measured", {})
    assert (lat_how, rate_how, msg_how) == ("measured", "measured", "measured")
    assert 1 <= lat < 100000 and rate > 0.05 and 0 < msg < 100000, (lat, rate, msg)
    lat, lat_how, rate, rate_how, msg, msg_how = link_line(tmp_path / "rate",
                                                           {"PYHCCL_NET_MBITS": "3000"})
    assert (lat_how, rate_how, rate, msg_how) == ("measured", "declared", 3.0, "measured")
    lat, lat_how, rate, rate_how, msg, msg_how = link_line(
        tmp_path / "all", {"PYHCCL_NET_MBITS": "3000", "PYHCCL_NET_LATENCY_US": "777",
                           "PYHCCL_NET_MESSAGE_US": "123"})
    assert (lat, lat_how, rate, rate_how, msg, msg_how) == (777, "declared", 3.0, "declared",
                                                            123, "declared")
    lat, lat_how, rate, rate_how, msg, msg_how = link_line(tmp_path / "one", {},
                                                           hosts=("h0", "h0"))
    assert (lat_how, rate_how, msg_how) == ("default", "default", "default")
