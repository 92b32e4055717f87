"""pyhccl as a CANN toolkit: `python -m pyhccl --prefix`, `install-toolkit DIR` and
bin/cann_tool (pyhccl/toolkit.py, csrc/cann_tool/).

The toolkit is used from plain processes (no MPI): under mpiexec these tests run in
one-process runs only (make test's 1-rank pass).
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from mpi4py import MPI

import pyhccl
from pyhccl import toolkit
from conftest import ROOT

SUBCOMMANDS = ["version", "info", "check", "devices", "env"]
# What a launcher or the test suite sets that a hand-started program must not need.
LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_", "MPICH_", "SLURM_", "PYHCCL_TEST")
LAUNCHER_VARS = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT"}

pytestmark = [
    pytest.mark.skipif(MPI.COMM_WORLD.Get_size() > 1,
                       reason="plain processes: runs in one-process runs only"),
    pytest.mark.skipif(not pyhccl.HOST_RUNTIME, reason="the toolkit is the host runtime's"),
]


def plain_env(**extra):
    """The environment of a user's shell: no launcher variables, bounded timeouts."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(LAUNCHER_PREFIXES) and k not in LAUNCHER_VARS}
    env.update(HCCL_CONNECT_TIMEOUT="60", HCCL_EXEC_TIMEOUT="60")
    env.update(extra)
    return env


def venv_env(**extra):
    """plain_env without PYTHONPATH: a venv's Python imports its own pyhccl."""
    env = plain_env(**extra)
    env.pop("PYTHONPATH", None)
    return env


def run(cmd, timeout=120, **kw):
    kw.setdefault("env", plain_env())
    kw.setdefault("cwd", tempfile.gettempdir())  # not the checkout: `-m` imports from the cwd
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, **kw)


def pyhccl_cmd(*args, python=sys.executable):
    return [python, "-m", "pyhccl", *args]


@pytest.fixture(scope="module")
def prefix():
    proc = run(pyhccl_cmd("--prefix"))
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def test_prefix_is_the_package_laid_out_as_a_toolkit(prefix):
    assert prefix == Path(pyhccl.__file__).resolve().parent
    assert toolkit.missing(str(prefix)) == []
    for name in toolkit.LIBRARIES:  # real ELF files (wheels carry no symlinks)
        lib = prefix / "lib" / name
        assert not lib.is_symlink() and lib.read_bytes()[:4] == b"\x7fELF", lib
    assert os.access(prefix / "bin" / "cann_tool", os.X_OK)
    assert (prefix / "include" / "acl" / "acl_tdt.h").is_file()


def test_cann_tool_version_from_path(prefix, tmp_path):
    env = plain_env(PATH=f"{prefix}/bin:{os.environ['PATH']}")
    proc = run(["cann_tool", "--version"], env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"cann_tool (pyhccl) {pyhccl.__version__}" in out
    major, minor, patch = pyhccl.get_version()
    assert f"ACL {major}.{minor}.{patch} headers" in out and "host runtime" in out
    assert f"{prefix}/lib/libascendcl.so" in out and f"{prefix}/lib/libhccl.so" in out
    assert run(["cann_tool", "version"], env=env).stdout == out
    # A link to it elsewhere (say /usr/local/bin) still finds its toolkit.
    (tmp_path / "cann_tool").symlink_to(prefix / "bin" / "cann_tool")
    assert run([tmp_path / "cann_tool", "--version"]).stdout == out


def test_cann_tool_help_lists_subcommands(prefix):
    tool = prefix / "bin" / "cann_tool"
    proc = run([tool, "--help"])
    assert proc.returncode == 0
    listed = [line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert listed == SUBCOMMANDS
    for sub in SUBCOMMANDS:
        sub_help = run([tool, sub, "--help"])
        assert sub_help.returncode == 0 and "usage: " in sub_help.stdout, sub
    bad = run([tool, "frobnicate"])
    assert bad.returncode == 2 and "unknown subcommand 'frobnicate'" in bad.stderr
    assert run([tool]).returncode == 2


@pytest.mark.parametrize("nranks", [1, 2])
def test_cann_tool_check_passes(prefix, nranks):
    proc = run([prefix / "bin" / "cann_tool", "check", "-n", nranks], timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"29 of 29 checks passed on {nranks} rank" in proc.stdout
    for op in ("AllReduce", "Broadcast", "AllGather", "ReduceScatter", "Barrier"):
        assert op in proc.stdout


@pytest.mark.parametrize("args,message", [
    (["-n", "0"], "-n 0: expected an integer from 1 to 64"),
    (["-n", "two"], "-n two: expected an integer"),
    (["-n", "9"], "the runtime has 8 devices"),
    (["-t", "0"], "-t 0: expected an integer"),
    (["--ranks"], "unexpected argument '--ranks'"),
])
def test_cann_tool_check_bad_usage(prefix, args, message):
    proc = run([prefix / "bin" / "cann_tool", "check", *args],
               env=plain_env(PYHCCL_DEVICE_COUNT="8"))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


WRONG_SUM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
typedef int (*fn)(void *, void *, uint64_t, int, int, void *, void *);
/* Drops the last element of every AllReduce of more than one: a wrong result. */
int HcclAllReduce(void *s, void *r, uint64_t n, int t, int op, void *comm, void *stream) {
  fn real = (fn)dlsym(RTLD_NEXT, "HcclAllReduce");
  return real(s, r, n > 1 ? n - 1 : n, t, op, comm, stream);
}
"""
# Rank 0 fails before it can hand out the root info: the others must not wait for it.
NO_ROOT_INFO = "int HcclGetRootInfo(void *root) { (void)root; return 4; }\n"
# A Barrier that never returns: the tool must kill the rank at its time limit and say so.
HANG = "#include <unistd.h>\nint HcclBarrier(void *c, void *s) { for (;;) pause(); }\n"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("shim,args,messages", [
    (WRONG_SUM, [], ["AllReduce     float32 sum              1031 elements    FAILED: "
                     "1 wrong elements, first [1030] = -7777"]),
    (NO_ROOT_INFO, ["-n", "3"], ["HcclGetRootInfo: internal error",
                                 "rank 1: rank 0 ended before sending its root info",
                                 "rank 2: rank 0 ended before sending its root info"]),
    (HANG, ["-t", "3"], ["rank 0 did not finish in time (-t); killed"]),
], ids=["wrong-sum", "rank-0-fails", "hang"])
def test_cann_tool_check_fails_when_something_is_wrong(prefix, tmp_path, shim, args, messages):
    (tmp_path / "shim.c").write_text(shim)
    lib = tmp_path / "libshim.so"
    build = run(["gcc", "-shared", "-fPIC", "-o", lib, tmp_path / "shim.c", "-ldl"])
    assert build.returncode == 0, build.stderr
    proc = run([prefix / "bin" / "cann_tool", "check", *args],
               env=plain_env(LD_PRELOAD=str(lib)))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for message in messages:
        assert message in proc.stderr, proc.stderr
    assert "29 of 29" not in proc.stdout


def test_cann_tool_info_and_env(prefix):
    tool = prefix / "bin" / "cann_tool"
    info = run([tool, "info"], env=plain_env(PYHCCL_PYTHON=sys.executable))
    assert info.returncode == 0, info.stderr
    assert f"CANN_HOME: {prefix}" in info.stdout and f"Python:    {sys.executable}" in info.stdout
    assert "Environment:" in info.stdout and pyhccl.__version__ in info.stdout
    shell = run(["bash", "-c", f'eval "$({tool} env)" && echo "$CANN_HOME|$PATH|$LD_LIBRARY_PATH"'])
    home, path, ld = shell.stdout.strip().split("|")
    assert home == str(prefix) and path.startswith(f"{prefix}/bin:")
    assert ld.split(":")[0] == f"{prefix}/lib"
    devices = run([tool, "devices"], env=plain_env(PYHCCL_DEVICE_COUNT="3"))
    assert devices.returncode == 0 and "devices:  3" in devices.stdout


def test_info_names_the_toolkit(prefix):
    proc = run(pyhccl_cmd("info"))
    assert proc.returncode == 0, proc.stderr
    assert f"toolkit: {prefix} (CANN_HOME for C programs: include/, lib/, bin/cann_tool)" \
        in proc.stdout


def test_an_incomplete_toolkit_is_named(tmp_path):
    python, site = _make_venv(tmp_path / "venv")
    (site / "pyhccl" / "lib" / "libacl_mdl.so").unlink()
    (site / "pyhccl" / "bin" / "cann_tool").unlink()
    lacks = f"{site / 'pyhccl'} lacks lib/libacl_mdl.so, bin/cann_tool: rebuild pyhccl"
    proc = run(pyhccl_cmd("--prefix", python=python), env=venv_env())
    assert proc.returncode == 1 and proc.stdout == "" and lacks in proc.stderr, proc.stderr
    proc = run(pyhccl_cmd("install-toolkit", tmp_path / "dest", python=python), env=venv_env())
    assert proc.returncode == 1 and lacks in proc.stderr and not (tmp_path / "dest").exists()
    proc = run(pyhccl_cmd("info", python=python), env=venv_env())
    assert proc.returncode == 0 and f"toolkit: incomplete: {lacks}" in proc.stdout


def test_install_toolkit_refuses_what_it_must_not_overwrite(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    proc = run(pyhccl_cmd("install-toolkit", tmp_path / "busy"))
    assert proc.returncode == 1 and "is not empty and holds no pyhccl toolkit" in proc.stderr
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"
    (tmp_path / "file").write_text("x")
    proc = run(pyhccl_cmd("install-toolkit", tmp_path / "file"))
    assert proc.returncode == 1 and "is not a directory" in proc.stderr
    proc = run(pyhccl_cmd("install-toolkit"))
    assert proc.returncode == 2 and "install-toolkit takes one directory" in proc.stderr
    proc = run(pyhccl_cmd("install-toolkit", os.path.dirname(pyhccl.__file__)))
    assert proc.returncode == 1 and "own toolkit" in proc.stderr


def _make_venv(path):
    """A venv holding a copy of this pyhccl (numpy through a .pth to the running one)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)
    python = path / "bin" / "python"
    site = Path(run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                    env=venv_env()).stdout.strip())
    import numpy
    (site / "numpy-from-test.pth").write_text(str(Path(numpy.__file__).parents[1]) + "\n")
    shutil.copytree(Path(pyhccl.__file__).parent, site / "pyhccl",
                    ignore=shutil.ignore_patterns("__pycache__", "*.c", "*.pyx", "*.pxi"))
    return python, site


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.timeout(400)
def test_installed_toolkit_survives_moving_the_venv(tmp_path):
    python, site = _make_venv(tmp_path / "venv")
    dest = tmp_path / "opt" / "cann"
    proc = run(pyhccl_cmd("install-toolkit", dest, python=python), env=venv_env())
    assert proc.returncode == 0, proc.stderr
    assert f"export CANN_HOME={dest}" in proc.stdout
    # A second install over the first replaces it.
    assert run(pyhccl_cmd("install-toolkit", dest, python=python), env=venv_env()).returncode == 0
    origin = (dest / "share" / "pyhccl" / "origin").read_text()
    assert f"python {python}" in origin and f"package {site / 'pyhccl'}" in origin
    # Nothing in the copy points outside it.
    for path in dest.rglob("*"):
        if path.is_symlink():
            assert path.resolve().is_relative_to(dest.resolve()), path
    # The package inside the venv is a toolkit too: its cann_tool finds the venv's Python.
    inside = run([site / "pyhccl" / "bin" / "cann_tool", "info"],
                 env=venv_env(PATH="/usr/bin:/bin"))
    assert inside.returncode == 0 and f"Python:    {site.parents[2] / 'bin' / 'python3'}" \
        in inside.stdout, inside.stdout + inside.stderr

    shutil.move(tmp_path / "venv", tmp_path / "moved-venv")
    env = venv_env(PATH=f"{dest}/bin:/usr/bin:/bin", LD_LIBRARY_PATH=f"{dest}/lib")
    version = run(["cann_tool", "--version"], env=env)
    assert version.returncode == 0, version.stderr
    assert f"{dest}/lib/libhccl.so" in version.stdout
    check = run(["cann_tool", "check", "-n", "2"], env=env, timeout=180)
    assert check.returncode == 0, check.stdout + check.stderr
    # info needs a Python with pyhccl: the recorded one is gone, so it says how to choose one.
    env_no_python = dict(env, PATH=f"{dest}/bin")
    info = run([dest / "bin" / "cann_tool", "info"], env=env_no_python)
    assert info.returncode == 1 and "set PYHCCL_PYTHON" in info.stderr
    moved = tmp_path / "moved-venv" / "bin" / "python"
    info = run([dest / "bin" / "cann_tool", "info"], env=dict(env, PYHCCL_PYTHON=str(moved)))
    assert info.returncode == 0 and "Environment:" in info.stdout, info.stderr
    # The moved venv's own toolkit (its package directory) still runs the four steps.
    seed = ROOT / "examples" / "seed"
    proc = run(["bash", seed / "four_steps.sh"], timeout=300,
               env=venv_env(PYTHON=str(moved), RANKS="2", RUNS="1",
                            WORKDIR=str(tmp_path / "work"),
                            GROUP=f"pyhccl-test-toolkit.{os.getpid()}"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # With the venv gone entirely, the copy still builds and runs C programs.
    shutil.rmtree(tmp_path / "moved-venv")
    shutil.copy(seed / "aigc_hccl_allreduce_example.cpp", tmp_path)
    build = run(["g++", "-o", "prog", "aigc_hccl_allreduce_example.cpp", f"-I{dest}/include",
                 f"-L{dest}/lib", "-lacl_tdt", "-lacl_rt", "-lacl_mdl", "-std=c++11"],
                cwd=tmp_path, timeout=180)
    assert build.returncode == 0, build.stderr
    solo = run([tmp_path / "prog", "0", "1", f"pyhccl-test-toolkit.{os.getpid()}"], env=env,
               cwd=tmp_path)
    assert solo.returncode == 0 and "(first 5 elements): 0 1 2 3 4 " in solo.stdout, \
        solo.stdout + solo.stderr
