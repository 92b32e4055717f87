"""The TCP transport's end-to-end check: every message carries a CRC32C (PYHCCL_TCP_CRC,
on by default), so corruption that TCP's checksum misses fails the operation on every
rank instead of giving wrong results. PYHCCL_FAULT=corrupt_tcp plays the faulty network:
it flips a bit of about one received chunk in 64."""
import pytest

import pyhccl
from conftest import OWN_JOBS_HERE
from rank_procs import run_ranks

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="needs the host runtime")

PROGRAM = """
    rank, path = int(sys.argv[1]), sys.argv[2]
    pyhccl.set_device(rank)
    comm = pyhccl.Comm(2, root_info(path, rank), rank)
    s = pyhccl.Stream()
    wrong = 0
    try:
        for i in range(100):
            x = np.full(1 << 18, rank + 1, np.float32)
            comm.all_reduce(x, stream=s)
            s.synchronize()
            wrong += int(not np.all(x == 3))
        print(f"DONE wrong={wrong}", flush=True)
    except pyhccl.HcclError as e:
        print(f"FAILED wrong={wrong} {e}", flush=True)
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("crc", ["1", "0"])
def test_corruption_fails_every_rank_instead_of_wrong_results(tmp_path, crc):
    """With the check every rank fails (HCCL_E_TCP_TRANSFER naming the link) and none saw
    a wrong sum; without it (the control) the same faults give wrong sums."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    outs = run_ranks(tmp_path, PROGRAM, 2, env=dict(
        PYHCCL_TRANSPORT="tcp", PYHCCL_FAULT="corrupt_tcp", PYHCCL_TCP_CRC=crc,
        HCCL_EXEC_TIMEOUT="20", HCCL_CONNECT_TIMEOUT="60"))
    if crc == "1":
        for out in outs:
            assert "FAILED wrong=0 " in out and "HCCL_E_TCP_TRANSFER" in out and \
                "arrived corrupted" in out and "CRC32C" in out, outs
    else:
        assert any("wrong=0" not in out for out in outs), outs
