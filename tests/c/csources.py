"""The source files of the C checks that are split into several (issue 18: no file over
about 500 lines), main file first. Everything that compiles one of them asks here
(cdrivers.py, test_c_runtime.py, test_c_bootstrap.py, tests/multihost, tools/san_check.py,
tools/stress_kill.py); standard library only, so tools/ can import it."""
from pathlib import Path

CDIR = Path(__file__).resolve().parent
PARTS = {
    "hccl_check.c": ["hccl_values.c", "hccl_modes_coll.c", "hccl_modes_suite.c",
                     "hccl_modes_faults.c", "hccl_modes_p2p.c"],
    "runtime_check.c": ["runtime_memory.c", "runtime_events.c", "runtime_threads.c"],
    "bootstrap_check.cc": ["bootstrap_secret.cc", "bootstrap_faults.cc"],
}


def sources(main):
    """tests/c/`main` and the files it is split into, as paths (a check in one file: itself)."""
    return [CDIR / name for name in (main, *PARTS.get(main, ()))]
