"""Build and run the C/C++ checks of the host runtime (libascendcl.so).

tests/c/runtime_check.c drives the public ACL runtime API, tests/c/vmm_check.c its
virtual memory part; tests/c/hostrt_check.cc the internal interface libhccl uses
(csrc/runtime/hostrt.h). Each prints a final "... ok" line and exits non-zero on
the first failed check.
"""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT
from csources import sources

LIBDIR = ROOT / "build" / "lib"
LIB = LIBDIR / "libascendcl.so"

pytestmark = pytest.mark.skipif(
    not LIB.exists(), reason=f"{LIB} is missing (build it with `make -C csrc`)"
)


def _compile(compiler, source, out, extra):
    """tests/c/`source` and the files it is split into (csources.py), built as `out`."""
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    cmd = [
        compiler, *extra, "-g", "-Wall", "-I", str(ROOT / "include"), *map(str, sources(source)),
        "-o", str(out), "-L", str(LIBDIR), "-lascendcl", "-pthread",
        f"-Wl,-rpath,{LIBDIR}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr}"
    return out


def _run(exe, env_extra=None, expect="runtime ok"):
    env = dict(os.environ)
    env.pop("PYHCCL_DEVICE_COUNT", None)
    env.setdefault("PYHCCL_ARENA_BYTES", "4G")
    env.update(env_extra or {})
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, (
        f"{exe.name} exited with {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    assert expect in proc.stdout
    return proc


@pytest.fixture(scope="module")
def runtime_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("runtime_check") / "runtime_check"
    return _compile("gcc", "runtime_check.c", out, ["-std=c99"])


def test_runtime_check(runtime_check):
    _run(runtime_check)


def test_runtime_check_device_count_env(runtime_check):
    # aclrtGetDeviceCount follows PYHCCL_DEVICE_COUNT (the check needs >= 2 devices).
    _run(runtime_check, {"PYHCCL_DEVICE_COUNT": "2"})


def test_runtime_check_default_arena(runtime_check):
    # The default 64 GiB sparse arena (nothing is committed until touched).
    _run(runtime_check, {"PYHCCL_ARENA_BYTES": ""})


def test_vmm_check(tmp_path):
    exe = _compile("gcc", "vmm_check.c", tmp_path / "vmm_check", ["-std=c99"])
    _run(exe, expect="vmm ok")


def test_hostrt_interface(tmp_path):
    exe = _compile(
        "g++", "hostrt_check.cc", tmp_path / "hostrt_check",
        ["-std=c++17", "-I", str(ROOT / "csrc")],
    )
    _run(exe, expect="hostrt ok")
