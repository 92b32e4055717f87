"""How TCP connections ride out a link outage (docs/TRANSPORT.md, "Outages"): every socket
of a communicator's TCP connections has its retransmission backoff capped at 1 s
(TCP_RTO_MAX_MS, Linux >= 6.15) and is dropped by the kernel only after the communicator's
exec timeout + 5 s of unacknowledged data (TCP_USER_TIMEOUT). The outages themselves are
tested on simulated hosts (tests/multihost, test_short_outages_recover)."""
import pytest

import pyhccl
from conftest import OWN_JOBS_HERE
from rank_procs import run_ranks

pytestmark = [pytest.mark.once,  # its own processes: once per make test
              pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="needs the host runtime")]

# Lists the options of this process's TCP sockets; the communicator's are those with a user
# timeout (the bootstrap's keep the kernel's defaults).
PROGRAM = """
    import socket
    rank, path = int(sys.argv[1]), sys.argv[2]
    pyhccl.set_device(rank)
    comm = pyhccl.Comm(2, root_info(path, rank), rank, config={"exec_timeout": 7})
    s = pyhccl.Stream()
    x = np.full(1 << 16, rank + 1, np.float32)
    comm.all_reduce(x, stream=s)
    s.synchronize()
    assert np.all(x == 3)
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        with sock:
            if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            user = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)
            try:
                rto_max = sock.getsockopt(socket.IPPROTO_TCP, 44)  # TCP_RTO_MAX_MS
            except OSError:  # a kernel before 6.15
                rto_max = None
            if user:
                found.append((user, rto_max))
    print("SOCKETS", sorted(found), flush=True)
"""


def kernel_caps_rto():
    import socket
    with socket.socket() as s:
        try:
            s.setsockopt(socket.IPPROTO_TCP, 44, 1000)
        except OSError:
            return False
    return True


@pytest.mark.timeout(60)
def test_tcp_sockets_are_set_up_for_outages(tmp_path):
    """PYHCCL_TRANSPORT=tcp on one host, hcclExecTimeOut=7 (the environment says 30): the
    control socket and both data sockets of each rank have TCP_USER_TIMEOUT = 12,000 ms and,
    where the kernel has it, TCP_RTO_MAX_MS = 1000."""
    if not OWN_JOBS_HERE:
        pytest.skip("starts its own processes, from the first rank")
    outs = run_ranks(tmp_path, PROGRAM, 2, env=dict(
        PYHCCL_TRANSPORT="tcp", PYHCCL_SOCKETS_PER_PEER="2", HCCL_EXEC_TIMEOUT="30",
        HCCL_CONNECT_TIMEOUT="30"))
    rto_max = 1000 if kernel_caps_rto() else None
    expect = f"SOCKETS {[(12000, rto_max)] * 3}"
    for out in outs:
        assert expect in out, (expect, outs)
