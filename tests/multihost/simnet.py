"""Kernel side of the simulated hosts (see simhosts.py): commands, names, link shaping,
and removal of everything the harness creates, also what crashed runs left behind.

Every object is named phc<owner pid>c<k><kind>: bridge "b", host namespace "h<i>" (also
/etc/netns/<name>, the host's /etc/hosts, and /dev/shm/<name>, the host's /dev/shm),
root-side veth "v<i>"; the owner's start time is kept in
/run/pyhccl-simhosts/phc<pid>c<k>.json. An object whose owner process is gone
(or whose pid now belongs to another process) is stale and swept.
"""
import fcntl
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

STATE_DIR = Path("/run/pyhccl-simhosts")
NETNS_ETC = Path("/etc/netns")
SHM = Path("/dev/shm")
NAME_RE = re.compile(r"^(phc(\d+)c[0-9a-z])(b|h\d+|v\d+)?$")
RATE_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


class SimHostsError(RuntimeError):
    """A command of the harness failed."""


class Unavailable(SimHostsError):
    """Simulated hosts (or a feature of them) cannot be made here."""


def sh(*argv, check=True, timeout=30):
    """Run a command of the harness; return its stdout, raising SimHostsError on failure."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SimHostsError(f"{shlex.join(argv)}: {exc}") from None
    if check and proc.returncode != 0:
        raise SimHostsError(f"{shlex.join(argv)} failed ({proc.returncode}): "
                            f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


# -- link shaping ------------------------------------------------------------------------
def parse_rate(rate):
    """Bits per second from tc syntax ("10gbit", "50Mbit", "100kbit") or a number."""
    if isinstance(rate, (int, float)):
        return int(rate)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(bit)?\s*", str(rate).lower())
    if not m:
        raise ValueError(f"rate {rate!r}: expected e.g. 10gbit, 100mbit or bits per second")
    return int(float(m.group(1)) * RATE_UNITS[m.group(2)])


def parse_delay(delay):
    """tc delay text ("1000us") from "1ms", "500us", "0.5ms" or a number of milliseconds."""
    if isinstance(delay, (int, float)):
        return f"{int(delay * 1000)}us"
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(us|ms|s)\s*", str(delay).lower())
    if not m:
        raise ValueError(f"delay {delay!r}: expected e.g. 1ms, 500us")
    scale = {"us": 1, "ms": 1000, "s": 10**6}[m.group(2)]
    return f"{int(float(m.group(1)) * scale)}us"


def tbf_args(bits):
    """A token bucket at `bits`/s: a burst of 1 ms of traffic (at least 128 KiB, so GSO
    packets pass whole) and at most 20 ms of queue."""
    burst = max(bits // 8 // 1000, 128 * 1024)
    return ["tbf", "rate", f"{bits}bit", "burst", str(burst), "latency", "20ms"]


def available_congestion():
    """The TCP congestion controls this kernel has."""
    return _read(Path("/proc/sys/net/ipv4/tcp_available_congestion_control")).split()


def shape_device(dev, netns, rate, delay):
    """Replace `dev`'s root qdisc: netem `delay` (then) tbf `rate`; both None: unshaped."""
    pre = ("tc", "-n", netns) if netns else ("tc",)
    sh(*pre, "qdisc", "del", "dev", dev, "root", check=False)
    parent = ("root", "handle", "1:")
    if delay is not None:
        try:
            sh(*pre, "qdisc", "add", "dev", dev, "root", "handle", "1:", "netem",
               "delay", parse_delay(delay), "limit", "100000")
        except SimHostsError as exc:
            raise Unavailable("link delay needs tc's netem qdisc, which this kernel lacks "
                              f"(CONFIG_NET_SCH_NETEM; rate limits work): {exc}") from None
        parent = ("parent", "1:1", "handle", "10:")
    if rate is not None:
        sh(*pre, "qdisc", "add", "dev", dev, *parent, *tbf_args(parse_rate(rate)))


def no_ipv6(dev):
    """Keep a root-side link IPv4-only (no link-local address outside 198.18.0.0/15)."""
    path = Path(f"/proc/sys/net/ipv6/conf/{dev}/disable_ipv6")
    if path.exists():
        path.write_text("1\n")


# -- ownership and clean-up -----------------------------------------------------------------
class Lock:
    """Machine-wide lock: sweeping, naming and picking a /24 happen one cluster at a time."""

    def __enter__(self):
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(STATE_DIR / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def start_time(pid):
    """A process's start time in clock ticks (tells the owner from a reused pid)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def record_owner(prefix, pid):
    (STATE_DIR / f"{prefix}.json").write_text(f'{{"pid": {pid}, "start": {start_time(pid)}}}\n')


def owner_alive(prefix):
    pid = int(NAME_RE.match(prefix).group(2))
    start = start_time(pid)
    if start is None:
        return False
    m = re.search(r'"start": (\d+)', _read(STATE_DIR / f"{prefix}.json"))
    return m is None or int(m.group(1)) == start   # no record (yet): a live pid keeps them


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def kernel_objects():
    """{"netns", "links", "etc", "state"}: lists of names that belong to the harness."""
    ns = [line.split()[0] for line in sh("ip", "netns", "list", check=False).splitlines()
          if line.strip()]
    links = [line.split(":")[1].strip().split("@")[0]
             for line in sh("ip", "-o", "link", "show", check=False).splitlines()]
    etc = os.listdir(NETNS_ETC) if NETNS_ETC.is_dir() else []
    shm = [p.name for p in SHM.glob("phc*") if p.is_dir()]
    state = [p.stem for p in STATE_DIR.glob("phc*.json")] if STATE_DIR.is_dir() else []
    ours = lambda names: sorted(n for n in names if NAME_RE.match(n))  # noqa: E731
    return {"netns": ours(ns), "links": ours(links), "etc": ours(etc), "shm": ours(shm),
            "state": ours(state)}


def prefixes(objects):
    return {NAME_RE.match(n).group(1) for names in objects.values() for n in names}


def kill_netns_processes(ns, wait=5.0):
    """SIGKILL what still runs in a namespace of ours; return the pids that survive."""
    deadline = time.monotonic() + wait
    while True:
        pids = [int(p) for p in sh("ip", "netns", "pids", ns, check=False).split()]
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def remove_prefix(prefix, objects=None):
    """Remove every object named with `prefix` (holding the Lock); return the errors."""
    objects = objects or kernel_objects()
    mine = {k: [n for n in v if NAME_RE.match(n).group(1) == prefix] for k, v in objects.items()}
    errors = []
    for ns in mine["netns"]:
        left = kill_netns_processes(ns)
        if left:
            errors.append(f"processes {left} survive in {ns}")
    # a veth goes with its peer in the namespace; the bridge last
    for link in sorted(mine["links"], key=lambda n: n.endswith("b")):
        try:
            sh("ip", "link", "del", link)
        except SimHostsError as exc:
            if "Cannot find device" not in str(exc):
                errors.append(str(exc))
    for ns in mine["netns"]:
        try:
            sh("ip", "netns", "del", ns)
        except SimHostsError as exc:
            errors.append(str(exc))
    for name in mine["etc"]:
        shutil.rmtree(NETNS_ETC / name, ignore_errors=True)
    for name in mine["shm"]:
        shutil.rmtree(SHM / name, ignore_errors=True)
    for suffix in (".json", ".hosts"):
        (STATE_DIR / f"{prefix}{suffix}").unlink(missing_ok=True)
    try:
        NETNS_ETC.rmdir()       # only if empty: made for the harness's hosts files
    except OSError:
        pass
    return errors


def sweep_stale():
    """Remove what earlier runs left behind when their owner process is gone (call it
    holding the Lock)."""
    objects = kernel_objects()
    stale = sorted(p for p in prefixes(objects) if not owner_alive(p))
    for prefix in stale:
        remove_prefix(prefix, objects)
    return stale
