"""Simulated hosts on one machine: network namespaces on a bridge, for multi-host tests.

A host is a network namespace with one veth link ("eth0" inside) whose other end
joins a bridge in the root namespace. Commands started on a host also get a fresh
UTS namespace whose hostname is the host's name, so hosts differ in hostname and
network namespace (what pyhccl's runtime compares) and has its own /dev/shm (a
directory of the machine's, bound over /dev/shm), while the file system and the boot
id stay shared. Addresses come from 198.18.0.0/15 only: one free /24 per
cluster, the bridge at .1 (where mpiexec is reached), hosts at .10+i; hosts have
no default route, so nothing they send leaves that /24. Links can be rate-limited
(tbf, both directions) and delayed (netem, on send, where the kernel has it).
TCP on the hosts uses cubic, Linux's default, whatever the machine's own default
(`congestion`; docs/MULTIHOST_TESTING.md says why).

    with Cluster(2, rate="10gbit") as cluster:
        argv, env = cluster.mpi_job("2x2", [sys.executable, "prog.py"])
        subprocess.run(argv, env=env, timeout=60)

close() removes everything (also on exceptions, SIGTERM/SIGHUP and at exit); the
next cluster sweeps what a killed owner left. Command line (docs/MULTIHOST_TESTING.md):

    python tests/multihost/simhosts.py run --hosts 2x2 [--rate 10gbit] -- python prog.py
    python tests/multihost/simhosts.py up --hosts 2      # keep hosts until Ctrl-C
    python tests/multihost/simhosts.py sweep | list
"""
import argparse
import atexit
import ipaddress
import os
import re
import shlex
import shutil
import signal
import string
import subprocess
import sys
import threading
from pathlib import Path

try:
    from . import simnet                 # python -m tests.multihost.simhosts
except ImportError:
    import simnet                        # script, or tests/multihost on sys.path
SimHostsError, Unavailable, sh = simnet.SimHostsError, simnet.Unavailable, simnet.sh

HERE = Path(__file__).resolve().parent
NSEXEC = HERE / "nsexec"
NETWORK = ipaddress.ip_network("198.18.0.0/15")
IFNAME = "eth0"                          # the link's name inside every host
# On a token bucket (tbf) bbr misjudges the link and stalls (docs/MULTIHOST_TESTING.md)
DEFAULT_CONGESTION = "cubic"
TOOLS = ("ip", "tc", "unshare", "mount", "sh", "hostname")
# Variables an enclosing MPI job sets for its own ranks: a nested launch must not see them.
OUTER_MPI_PREFIXES = ("PMI_", "PMIX_", "HYDI_", "OMPI_", "PRTE_", "MPI_LOCALNRANKS",
                      "MPI_LOCALRANKID", "GFORTRAN_UNBUFFERED_PRECONNECTED")


def parse_layout(spec):
    """Ranks per host: "2x2" -> [2, 2] (hosts x ranks), "3+1" -> [3, 1], [1, 1] as is."""
    if isinstance(spec, (list, tuple)):
        counts = [int(c) for c in spec]
    elif re.fullmatch(r"\d+x\d+", str(spec)):
        hosts, per = map(int, str(spec).split("x"))
        counts = [per] * hosts
    elif re.fullmatch(r"\d+(\+\d+)*", str(spec)):
        counts = [int(c) for c in str(spec).split("+")]
    else:
        raise ValueError(f"layout {spec!r}: expected HOSTSxRANKS (2x2) or A+B+... (3+1)")
    if not counts or min(counts) < 1:
        raise ValueError(f"layout {spec!r}: every host needs at least one rank")
    return counts


_PROBED = {}


def unavailable_reason():
    """Why simulated hosts cannot be made here, or None if they can (probed once)."""
    if "reason" not in _PROBED:
        missing = [t for t in TOOLS if shutil.which(t) is None]
        reason = None
        if os.geteuid() != 0:
            reason = "simulated hosts need root (network namespaces, veth, bridge, tc)"
        elif missing:
            reason = f"simulated hosts need {', '.join(missing)} (not found on PATH)"
        else:
            try:
                with Cluster(1, rate="1gbit"):
                    pass
            except SimHostsError as exc:
                reason = f"cannot create simulated hosts here: {exc}"
        _PROBED["reason"] = reason
    return _PROBED["reason"]


class Host:
    """One simulated host: `name` is its namespace and hostname, `veth` its switch port."""

    def __init__(self, index, name, ip, veth):
        self.index, self.name, self.ip, self.veth = index, name, ip, veth

    def __repr__(self):
        return f"Host({self.name}, {self.ip})"


_OPEN = set()
atexit.register(lambda: [c.close() for c in list(_OPEN)])


class Cluster:
    """`nhosts` simulated hosts on one bridge; a context manager (or start()/close()).

    rate / delay shape every host's link (tc syntax: "10gbit", "1ms"; None: unshaped);
    links={index: (rate, delay)} overrides them per host. congestion: the hosts' TCP
    congestion control (None or '': the machine's default).
    """

    def __init__(self, nhosts, rate=None, delay=None, links=None, mtu=1500,
                 congestion=DEFAULT_CONGESTION):
        if not 1 <= int(nhosts) <= 200:
            raise ValueError(f"Cluster: nhosts={nhosts} (1..200)")
        self.nhosts, self.mtu = int(nhosts), int(mtu)
        have = simnet.available_congestion()
        if congestion == DEFAULT_CONGESTION and congestion not in have:
            congestion = None                    # a kernel without cubic keeps its own
        if congestion and congestion not in have:
            raise SimHostsError(f"TCP congestion control {congestion!r} is not available here "
                                f"(tcp_available_congestion_control: {' '.join(have) or '-'})")
        self.congestion = congestion or None
        self.shaping = {i: (rate, delay) for i in range(self.nhosts)}
        self.shaping.update(links or {})
        self.hosts, self.prefix, self.bridge, self.bridge_ip, self.subnet = [], None, None, None, None
        self.owner = os.getpid()
        self._old_handlers = {}

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
        return False

    def start(self):
        if os.geteuid() != 0:
            raise Unavailable("simulated hosts need root")
        if self.prefix is not None:
            raise SimHostsError(f"cluster {self.prefix} is already started")
        self.hosts, self.owner = [], os.getpid()
        _OPEN.add(self)
        self._catch_signals()
        try:
            with simnet.Lock():
                simnet.sweep_stale()
                self._claim_names()
                self._create_bridge()
                for i in range(self.nhosts):
                    self._create_host(i)
            for host in self.hosts:
                self.shape(host, *self.shaping[host.index])
        except BaseException:
            self.close()
            raise
        return self

    def close(self):
        """Remove everything this cluster created (idempotent; a forked child does nothing)."""
        if os.getpid() != self.owner or self.prefix is None:
            _OPEN.discard(self)
            return
        with simnet.Lock():
            errors = simnet.remove_prefix(self.prefix)
        # only now: a close interrupted (SIGTERM) is done again at exit
        self.prefix = None
        _OPEN.discard(self)
        self._restore_signals()
        if errors:
            raise SimHostsError("clean-up incomplete: " + "; ".join(errors))

    def _catch_signals(self):
        """While open, SIGTERM/SIGHUP raise SystemExit in the main thread: clean-up runs."""
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                if signal.getsignal(sig) is signal.SIG_DFL:
                    self._old_handlers[sig] = signal.signal(sig, _raise_exit)

    def _restore_signals(self):
        for sig, old in self._old_handlers.items():
            signal.signal(sig, old)
        self._old_handlers = {}

    def _claim_names(self):
        used = simnet.prefixes(simnet.kernel_objects())
        for k in string.digits + string.ascii_lowercase:
            if f"phc{self.owner}c{k}" not in used:
                self.prefix = f"phc{self.owner}c{k}"
                simnet.record_owner(self.prefix, self.owner)
                return
        raise SimHostsError("36 clusters already open in this process")

    def _free_subnet(self):
        taken = [ipaddress.ip_interface(line.split()[3]).network
                 for line in sh("ip", "-o", "-4", "addr", "show").splitlines()]
        for line in sh("ip", "-4", "route", "show", "table", "all").splitlines():
            word = (line.split() or [""])[0]
            if re.fullmatch(r"[\d.]+(/\d+)?", word):
                taken.append(ipaddress.ip_network(word, strict=False))
        for subnet in NETWORK.subnets(new_prefix=24):
            if not any(subnet.overlaps(t) for t in taken):
                return subnet
        raise SimHostsError("no free /24 left in 198.18.0.0/15")

    def _create_bridge(self):
        self.subnet = self._free_subnet()
        self.bridge, self.bridge_ip = f"{self.prefix}b", str(self.subnet.network_address + 1)
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        simnet.no_ipv6(self.bridge)
        sh("ip", "addr", "add", f"{self.bridge_ip}/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")

    def _create_host(self, i):
        host = Host(i, f"{self.prefix}h{i}", str(self.subnet.network_address + 10 + i),
                    f"{self.prefix}v{i}")
        sh("ip", "netns", "add", host.name)
        self.hosts.append(host)
        sh("ip", "netns", "exec", host.name, "sh", "-c",
           "for f in all default; do p=/proc/sys/net/ipv6/conf/$f/disable_ipv6; "
           "if [ -e $p ]; then echo 1 > $p; fi; done; ip link set lo up; "
           # every job starts afresh, not from what its predecessors' connections
           # learnt (docs/MULTIHOST_TESTING.md)
           "echo 1 > /proc/sys/net/ipv4/tcp_no_metrics_save")
        if self.congestion:
            # the host's default, where the kernel lets a namespace choose one that is
            # not in tcp_allowed_congestion_control (some refuse: the route below holds)
            sh("ip", "netns", "exec", host.name, "sh", "-c",
               f"echo {self.congestion} > /proc/sys/net/ipv4/tcp_congestion_control",
               check=False)
        sh("ip", "link", "add", host.veth, "mtu", str(self.mtu), "type", "veth",
           "peer", "name", IFNAME, "mtu", str(self.mtu), "netns", host.name)
        simnet.no_ipv6(host.veth)
        sh("ip", "link", "set", host.veth, "master", self.bridge)
        sh("ip", "link", "set", host.veth, "up")
        sh("ip", "-n", host.name, "addr", "add", f"{host.ip}/24", "dev", IFNAME)
        sh("ip", "-n", host.name, "link", "set", IFNAME, "up")
        if self.congestion:
            # every connection between hosts takes its congestion control from this
            # route, whatever the kernel allows namespaces to set as their default
            sh("ip", "-n", host.name, "route", "replace", str(self.subnet), "dev", IFNAME,
               "proto", "kernel", "scope", "link", "src", host.ip, "congctl", self.congestion)
        # the host's own /dev/shm, bound over /dev/shm by nsexec: shared by the host's
        # processes only, as on a real host, and gone with the host
        shm = simnet.SHM / host.name
        shm.mkdir()
        shm.chmod(0o1777)
        # `ip netns exec` shows /etc/netns/<name>/hosts as the host's /etc/hosts
        etc = simnet.NETNS_ETC / host.name
        etc.mkdir(parents=True, exist_ok=True)
        names = [("127.0.0.1", "localhost"), (self.bridge_ip, self.bridge)]
        names += [(str(self.subnet.network_address + 10 + j), f"{self.prefix}h{j}")
                  for j in range(self.nhosts)]
        (etc / "hosts").write_text("".join(f"{a}\t{n}\n" for a, n in names))

    # -- links -----------------------------------------------------------------------
    def shape(self, host, rate=None, delay=None):
        """Limit `host`'s link to `rate` both ways; delay what it sends by `delay`."""
        host = self.host(host)
        simnet.shape_device(IFNAME, host.name, rate, delay)
        simnet.shape_device(host.veth, None, rate, None)
        self.shaping[host.index] = (rate, delay)

    def qdiscs(self, host):
        """`tc qdisc show` of what `host` sends through and of what it receives through."""
        host = self.host(host)
        return (sh("tc", "-n", host.name, "qdisc", "show", "dev", IFNAME),
                sh("tc", "qdisc", "show", "dev", host.veth))

    def link_down(self, host):
        """Unplug `host` from the bridge (its switch port goes down)."""
        sh("ip", "link", "set", self.host(host).veth, "down")

    def link_up(self, host):
        sh("ip", "link", "set", self.host(host).veth, "up")

    # -- running things ----------------------------------------------------------------
    def host(self, which):
        """A Host from a Host, an index or a name."""
        if isinstance(which, Host):
            return which
        if isinstance(which, int):
            return self.hosts[which]
        return next(h for h in self.hosts if h.name == which)

    def command(self, host, argv):
        """argv that runs `argv` on `host` (its namespace, its hostname) through nsexec;
        everything execs, so a Popen's pid is the command's own."""
        return [str(NSEXEC), self.host(host).name, "exec " + shlex.join(map(str, argv))]

    def run(self, host, argv, timeout=60, **kwargs):
        """subprocess.run on `host`, output captured as text by default."""
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        return subprocess.run(self.command(host, argv), timeout=timeout, **kwargs)

    def popen(self, host, argv, **kwargs):
        return subprocess.Popen(self.command(host, argv), **kwargs)

    def job_env(self, env=None, ifname=True, base=None):
        """`base` (default: this process's environment) less an enclosing MPI job's
        variables (PMI_*, OMPI_*, ...), with HCCL_SOCKET_IFNAME=eth0 (the hosts' link)
        unless ifname=False, then `env` (which may set OMPI_MCA_* for the job)."""
        base = os.environ if base is None else base
        out = {k: v for k, v in base.items() if not k.startswith(OUTER_MPI_PREFIXES)}
        if ifname:
            out["HCCL_SOCKET_IFNAME"] = IFNAME
        out.update(env or {})
        return out

    def mpi_job(self, layout, argv, env=None, mpiexec=None, extra=(), ifname=True, base=None,
                bind="none"):
        """(argv, env) that start `argv` under mpiexec, `layout` ranks per host, in order:
        "2x2" puts ranks 0, 1 on host 0 and 2, 3 on host 1. MPICH's hydra by default
        (the mpiexec beside this Python); Open MPI's mpirun if `mpiexec` is one. `bind`:
        the launcher's binding of ranks to cores (none, core, ...)."""
        counts = parse_layout(layout)
        if len(counts) > len(self.hosts):
            raise ValueError(f"layout {layout!r} needs {len(counts)} hosts; the cluster has "
                             f"{len(self.hosts)}")
        mpiexec = str(mpiexec or default_mpiexec())
        full_env = self.job_env(env, ifname, base)
        hosts = ",".join(f"{h.name}:{c}" for h, c in zip(self.hosts, counts))
        if mpi_flavour(mpiexec) == "openmpi":
            # Every host's ranks share this machine's cores: ranks that poll without
            # yielding starve each other (a 1 KiB ping-pong between two 2-rank hosts
            # took 8 ms instead of 40 us).
            cmd = [mpiexec, "--bind-to", bind, "--mca", "plm_rsh_agent", str(NSEXEC),
                   "--mca", "mpi_yield_when_idle", "1",
                   "--mca", "oob_tcp_if_include", str(self.subnet),
                   "--mca", "btl_tcp_if_include", str(self.subnet), "-H", hosts]
            if os.geteuid() == 0:
                cmd.insert(1, "--allow-run-as-root")
            # Open MPI forwards only what -x names
            forward = {k for k in full_env if k.startswith(("HCCL_", "PYHCCL_", "PYTHON"))}
            for key in sorted(forward | set(env or {}) | {"PATH", "LD_LIBRARY_PATH"}):
                if key in full_env:
                    cmd += ["-x", key]
        else:
            cmd = [mpiexec, "-launcher", "ssh", "-launcher-exec", str(NSEXEC),
                   "-localhost", self.bridge_ip, "-hosts", hosts, "-bind-to", bind]
        return cmd + ["-n", str(sum(counts)), *extra, *map(str, argv)], full_env

    def hostfile(self, layout, path, flavour="mpich"):
        """Write a hostfile for `layout`: MPICH "name:n" (-f) or Open MPI "name slots=n"."""
        fmt = "{}:{}\n" if flavour == "mpich" else "{} slots={}\n"
        Path(path).write_text("".join(fmt.format(h.name, c)
                                      for h, c in zip(self.hosts, parse_layout(layout))))
        return path


def _raise_exit(signum, frame):
    raise SystemExit(128 + signum)


def default_mpiexec():
    """MPICH's mpiexec beside this Python, else the checkout's .venv's, else on PATH."""
    for beside in (Path(sys.executable).parent, HERE.parents[1] / ".venv" / "bin"):
        if (beside / "mpiexec").exists():
            return str(beside / "mpiexec")
    return shutil.which("mpiexec") or "mpiexec"


def mpi_flavour(mpiexec, _cache={}):
    """"mpich" (hydra) or "openmpi" (prterun), from `mpiexec --version`."""
    if mpiexec not in _cache:
        text = sh(mpiexec, "--version", check=False)
        _cache[mpiexec] = "openmpi" if re.search(r"Open MPI|PRRTE|prte", text) else "mpich"
    return _cache[mpiexec]


# -- command line ----------------------------------------------------------------------
def _cluster_from_args(args, nhosts):
    links = {}
    for spec in args.link:
        m = re.fullmatch(r"(\d+)=([^,]*)(?:,(.+))?", spec)
        if not m:
            raise SystemExit(f"--link {spec!r}: expected HOST=RATE[,DELAY], e.g. 1=1gbit,1ms")
        links[int(m.group(1))] = (m.group(2) or None, m.group(3))
    return Cluster(nhosts, args.rate, args.delay, links, congestion=args.congestion)


def _describe(cluster, counts, mpiexec=None):
    argv, _ = cluster.mpi_job(counts, ["CMD..."], mpiexec=mpiexec)
    lines = [f"bridge {cluster.bridge} {cluster.bridge_ip}/24 (the launcher's side), TCP "
             f"congestion control {cluster.congestion or 'the machine default'}"]
    for h in cluster.hosts:
        rate, delay = cluster.shaping[h.index]
        lines.append(f"host {h.name} {h.ip} rate={rate or 'unshaped'} delay={delay or 0}")
    lines += [f"one command:  {NSEXEC} {cluster.hosts[0].name} hostname",
              f"MPI job:      {shlex.join(argv)}"]
    return "\n".join(lines)


def add_congestion_option(parser, whose="the hosts'"):
    """--congestion, for Cluster(congestion=...): default cubic, '' the machine's."""
    parser.add_argument("--congestion", default=DEFAULT_CONGESTION, metavar="ALG",
                        help=f"{whose} TCP congestion control (default {DEFAULT_CONGESTION}; "
                        "'': the machine's)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="simhosts.py",
                                     description="Simulated hosts for pyhccl's multi-host tests.")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run an MPI job across fresh simulated hosts, then remove them")
    up = sub.add_parser("up", help="create simulated hosts and keep them until Ctrl-C")
    sub.add_parser("sweep", help="remove what crashed runs left (owner process gone)")
    sub.add_parser("list", help="list the harness's namespaces, links and files")
    for p in (run, up):
        p.add_argument("--hosts", required=True, help="ranks per host: 2x2, 4x1, 3+1 (up: also N)")
        p.add_argument("--rate", help="every link's rate, tc syntax (10gbit, 1gbit)")
        p.add_argument("--delay", help="every link's delay on send (1ms; needs netem)")
        p.add_argument("--link", action="append", default=[], metavar="I=RATE[,DELAY]",
                       help="shape host I's link differently (repeatable)")
        add_congestion_option(p)
    run.add_argument("--mpiexec", help="MPICH mpiexec (default: beside this Python) or Open "
                     "MPI mpirun")
    run.add_argument("--env", action="append", default=[], metavar="K=V")
    run.add_argument("--mpi-arg", action="append", default=[], help="extra mpiexec argument")
    run.add_argument("--no-ifname", action="store_true", help="do not set HCCL_SOCKET_IFNAME=eth0")
    run.add_argument("--timeout", type=float, default=None, help="kill the job after S seconds")
    run.add_argument("-v", "--verbose", action="store_true", help="print the hosts and mpiexec line")
    run.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    if args.cmd == "list":
        for kind, names in simnet.kernel_objects().items():
            print(f"{kind}: {' '.join(names) or '-'}")
        return 0
    if args.cmd == "sweep":
        with simnet.Lock():
            print("removed:", " ".join(simnet.sweep_stale()) or "nothing")
        return 0
    counts = [1] * int(args.hosts) if args.hosts.isdigit() else parse_layout(args.hosts)
    if args.cmd == "up":
        signal.signal(signal.SIGINT, signal.default_int_handler)   # even if started with it ignored
        with _cluster_from_args(args, len(counts)) as cluster:
            print(_describe(cluster, counts), "\nCtrl-C (or SIGTERM) removes them.", flush=True)
            try:
                while True:
                    signal.pause()
            except KeyboardInterrupt:
                pass
        return 0
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("run: give the command after --")
    env = dict(kv.split("=", 1) for kv in args.env)
    with _cluster_from_args(args, len(counts)) as cluster:
        job, job_env = cluster.mpi_job(counts, command, env, args.mpiexec, args.mpi_arg,
                                       not args.no_ifname)
        if args.verbose:
            print(_describe(cluster, counts, args.mpiexec), file=sys.stderr, flush=True)
        proc = subprocess.Popen(job, env=job_env, start_new_session=True)
        try:
            return proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"simhosts: the job ran past {args.timeout} s; killed", file=sys.stderr)
            return 124
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


if __name__ == "__main__":
    sys.exit(main())
