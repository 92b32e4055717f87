"""The algorithm choice across hosts follows the cost model (csrc/hccl/algo/select.cc,
docs/TRANSPORT.md): with the link declared at 1 Gbit/s, a small AllReduce goes flat, a
medium one through one leader per host, a large one hierarchically; a Broadcast never
fans out from the root to every rank of another host. Hosts simulated by host tags on
this machine (TCP between them)."""
import json

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
        ar, bc = comm.flight_record()[-2:]
        seen[size] = [ar["algorithm"], bc["algorithm"]]
    print("SEEN", json.dumps(seen), flush=True)
    comm.destroy()
"""


def choices(tmp_path, hosts):
    tmp_path.mkdir()
    outs = run_ranks(tmp_path, PROGRAM, len(hosts),
                     env={"PYHCCL_NET_MBITS": "1000", "NRANKS": str(len(hosts))},
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
    four_by_one = choices(tmp_path / "4x1", [0, 1, 2, 3])
    assert four_by_one[8][1] == "hosts:star", four_by_one
    assert four_by_one[64 << 10][1] == "hosts:chain", four_by_one
