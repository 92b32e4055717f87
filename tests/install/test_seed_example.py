"""The article's four steps (examples/seed/four_steps.sh) at 1, 2 and 4 ranks: CANN_HOME
from `python -m pyhccl --prefix`, cann_tool --version, the article's g++ line on
examples/seed's program, ranks started by hand with no MPI and no variables, each
checked; twice in a row at 4 ranks. Each test names its own group (the program's
optional third argument), so that a run of the suite elsewhere on the machine, or
`make seed-demo` with the article's group name, cannot meet it.

Plain processes: under mpiexec these tests run in one-process runs only.
"""
import os
import shutil
import sys

import pytest
from mpi4py import MPI

import pyhccl
from test_toolkit import plain_env, run
from conftest import ROOT

SCRIPT = ROOT / "examples" / "seed" / "four_steps.sh"

pytestmark = [
    pytest.mark.skipif(MPI.COMM_WORLD.Get_size() > 1,
                       reason="plain processes: runs in one-process runs only"),
    pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="the toolkit is the host runtime's"),
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++"),
]


@pytest.mark.timeout(400)
@pytest.mark.parametrize("ranks,runs,values", [
    (1, 1, "0 1 2 3 4"),
    (2, 1, "0.1 2.1 4.1 6.1 8.1"),
    (4, 2, "0.6 4.6 8.6 12.6 16.6"),
])
def test_four_steps(tmp_path, ranks, runs, values):
    env = plain_env(PYTHON=sys.executable, RANKS=str(ranks), RUNS=str(runs),
                    WORKDIR=str(tmp_path), GROUP=f"pyhccl-test-seed.{os.getpid()}.{ranks}")
    proc = run(["bash", SCRIPT], env=env, timeout=380)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "$ cann_tool --version" in out and f"cann_tool (pyhccl) {pyhccl.__version__}" in out
    assert "$ g++ -o aigc_hccl_allreduce_example aigc_hccl_allreduce_example.cpp " \
           "-I$CANN_HOME/include -L$CANN_HOME/lib -lacl_tdt -lacl_rt -lacl_mdl -std=c++11" in out
    for run_no in range(1, runs + 1):
        for rank in range(ranks):
            log = (tmp_path / f"run{run_no}.rank{rank}.log").read_text()
            assert f"Rank {rank}: Global gradients (first 5 elements): {values} \n" in log, log
            assert f"Rank {rank}: All resources released. Exiting." in log, log
    assert out.rstrip().endswith(f"every rank of {runs} run(s) of {ranks} printed: {values}")


def test_four_steps_reports_a_rank_that_fails(tmp_path):
    env = plain_env(PYTHON=sys.executable, RANKS="1", RUNS="1", WORKDIR=str(tmp_path),
                    RANK_TIMEOUT="60", GROUP=f"pyhccl-test-seed.{os.getpid()}.bad")
    bad = tmp_path / "src"
    bad.mkdir()
    text = SCRIPT.with_name("aigc_hccl_allreduce_example.cpp").read_text()
    # Our program with its expected sum broken: every rank prints one more than it should.
    broken = text.replace("for (size_t i = 0; i < std::min<size_t>(count, 5); ++i) "
                          "std::cout << global[i] << \" \";",
                          "for (size_t i = 0; i < std::min<size_t>(count, 5); ++i) "
                          "std::cout << global[i] + 1 << \" \";")
    assert broken != text
    (bad / "aigc_hccl_allreduce_example.cpp").write_text(broken)
    proc = run(["bash", SCRIPT], env=dict(env, SOURCE=str(bad / "aigc_hccl_allreduce_example.cpp")),
               timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "rank 0 FAILED (expected: 0 1 2 3 4 )" in proc.stderr
    assert "(first 5 elements): 1 2 3 4 5" in proc.stderr
    assert "four steps: FAILED" in proc.stderr
