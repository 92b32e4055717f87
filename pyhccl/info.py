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
# tests/test_info.py keeps this list equal to docs/C_API.md's environment table.
ENV_VARS: List[Tuple[str, str, str]] = [
    ("HCCL_CONNECT_TIMEOUT", "120", "seconds communicator set-up may wait for peers"),
    ("HCCL_EXEC_TIMEOUT", "1836", "seconds a wait inside an operation may last without progress"),
    ("HCCL_IF_IP", "first non-loopback IPv4 address that is up, else 127.0.0.1",
     "address the rendezvous of the root info listens on"),
    ("HCCL_IF_BASE_PORT", "unset: any free port", "first port the rendezvous tries"),
    ("HCCL_BUFFSIZE", "200", "MB of staging budget per rank"),
    ("HCCL_DETERMINISTIC", "unset (0)", "process-wide determinism setting (reported only)"),
    ("PYHCCL_DEVICE_COUNT", "8", "number of logical devices"),
    ("PYHCCL_SOC_NAME", "HostCPU", "what aclrtGetSocName returns"),
    ("PYHCCL_ARENA_BYTES", "64G", "address space reserved for aclrtMalloc"),
    ("PYHCCL_SLOT_BYTES", "1M", "size of a collective staging slot"),
    ("PYHCCL_P2P_BYTES", "256K", "size of a send/receive slot (two per peer)"),
    ("PYHCCL_LATENCY_BYTES", "64K", "AllReduce/Reduce up to this size use the one-round path"),
    ("PYHCCL_SINGLE_COPY_BYTES", "256K", "from this size collectives read peers' buffers directly"),
    ("PYHCCL_ALGO", "unset", "forces collective paths (coll:path[,coll:path])"),
    ("PYHCCL_NT_BYTES", "8M", "results at least this big use non-temporal stores"),
    ("PYHCCL_SPIN_US", "5 (0 when ranks outnumber CPUs)", "microseconds a wait spins"),
    ("PYHCCL_YIELD_US", "50", "microseconds a wait yields before sleeping"),
    ("PYHCCL_REDUCE_PORTABLE", "unset", "1 disables the F16C fp16 reduction kernel"),
]

# What carries data between ranks in this version (docs/C_API.md).
TRANSPORTS: List[Tuple[str, str]] = [
    ("shm", "ranks on one host: shared-memory staging slots in /dev/shm, and single-copy "
            "reads of peers' aclrtMalloc memory (memfd arena)"),
    ("tcp", "bootstrap only: the root info's rendezvous (HCCL_IF_IP); no data path "
            "between hosts in this version"),
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


def _mpi_info() -> List[Tuple[str, str]]:
    """mpi4py's version and the MPI library it is linked to, without MPI_Init."""
    try:
        import mpi4py
    except ImportError:
        return [("mpi4py", "not installed (pip install mpi4py)")]
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
        rows.append(("MPI library", f"unavailable: {exc}"))
    return rows


def _optional(name: str) -> str:
    try:
        mod = __import__(name)
    except ImportError:
        return "not installed"
    return str(getattr(mod, "__version__", "installed"))


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
    runtime += [
        ("SoC name", str(pyhccl.get_soc_name())),
        ("run mode", pyhccl.get_run_mode()),
        ("device count", str(pyhccl.device_count())),
    ]
    transports = [(name, text) for name, text in TRANSPORTS]
    env = []
    for name, default, meaning in ENV_VARS:
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
