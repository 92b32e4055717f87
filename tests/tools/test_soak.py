"""tools/soak.py at a small size, so that the script cannot rot: it must finish on
its own (it once hung: rank 0 alone called a collective while printing) and pass.

Runs in the 1-rank pass only; it starts its own 2-rank job."""
import os
import subprocess
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "multihost"))
import simhosts  # noqa: E402
from mhtest import once  # noqa: E402



@once
@pytest.mark.timeout(300)
def test_soak_small_finishes_and_passes():
    env = {k: v for k, v in os.environ.items() if not k.startswith(simhosts.OUTER_MPI_PREFIXES)}
    mpiexec = simhosts.default_mpiexec()
    extra = ["--oversubscribe", "--allow-run-as-root"] \
        if simhosts.mpi_flavour(mpiexec) == "openmpi" else []
    argv = [mpiexec, *extra, "-n", "2", sys.executable, str(ROOT / "tools" / "soak.py"),
            "--ops", "400", "--cycles", "6", "--rss-slack", "64"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"soak failed (rc {done.returncode}):\n{out[-4000:]}"
    assert "soak passed" in out and "(0 wrong results)" in out, out[-4000:]
