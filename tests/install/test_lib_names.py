"""The package's library directory holds every name CANN's build files link.

Newer CANN Makefiles link -lhccl -lacl_rt -lmsprofiler (-lhcomm from CANN 8.5), older
ones -lascendcl. tests/c/link_names.c is linked with each set against
`python -m pyhccl --library-dir`, run, and checks that its calls reach the real
libraries; loaders that dlopen() a name (ctypes here) must reach them too.
"""
import ctypes
import os
import shutil
import subprocess
import sys

import pytest

import pyhccl
from conftest import ROOT

SOURCE = ROOT / "tests" / "c" / "link_names.c"
LIBDIR = pyhccl.get_library_dir()
ALIASES = {"libacl_rt.so": "libascendcl.so", "libmsprofiler.so": "libascendcl.so",
           "libhcomm.so": "libhccl.so"}
FLAG_SETS = {
    "python -m pyhccl --libs": None,
    "older CANN": ["-lascendcl", "-lhccl"],
    "newer CANN": ["-lhccl", "-lacl_rt", "-lmsprofiler"],
    "CANN 8.5": ["-lhccl", "-lhcomm", "-lacl_rt", "-lmsprofiler"],
    "CANN 8.5, --as-needed": ["-Wl,--as-needed", "-lhccl", "-lhcomm", "-lacl_rt",
                              "-lmsprofiler"],
}

pytestmark = pytest.mark.skipif(not pyhccl.HOST_RUNTIME or shutil.which("gcc") is None,
                                reason="needs the host runtime's library directory and gcc")


def _pyhccl_flags(*which):
    out = subprocess.run([sys.executable, "-m", "pyhccl", *which], capture_output=True,
                         text=True, check=True).stdout
    return out.split()


@pytest.mark.parametrize("name", sorted(FLAG_SETS))
def test_cann_link_flags_build_and_run(tmp_path, name):
    libs = FLAG_SETS[name]
    if libs is None:
        link = _pyhccl_flags("--libs")
    else:
        link = [f"-L{LIBDIR}", *libs, f"-Wl,-rpath,{LIBDIR}"]
    exe = tmp_path / "link_names"
    cmd = ["gcc", "-std=c99", "-Wall", *_pyhccl_flags("--cflags"), str(SOURCE), "-o", str(exe),
           *link, "-ldl"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    env = dict(os.environ, HCCL_CONNECT_TIMEOUT="30", HCCL_EXEC_TIMEOUT="30")
    run = subprocess.run([str(exe), LIBDIR], capture_output=True, text=True, timeout=120,
                         env=env)
    assert run.returncode == 0 and "link names ok" in run.stdout, run.stdout + run.stderr


def test_every_name_is_a_real_shared_object():
    # Wheels carry no symlinks and loaders dlopen() the names: each must be an ELF file.
    for name in ["libascendcl.so", "libhccl.so", *ALIASES]:
        path = os.path.join(LIBDIR, name)
        assert not os.path.islink(path), path
        with open(path, "rb") as f:
            assert f.read(4) == b"\x7fELF", path


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_ctypes_reaches_the_real_library(alias):
    lib = ctypes.CDLL(os.path.join(LIBDIR, alias))
    real = ctypes.CDLL(os.path.join(LIBDIR, ALIASES[alias]))
    name = {"libacl_rt.so": "aclrtGetDeviceCount", "libmsprofiler.so": "aclprofInit",
            "libhcomm.so": "HcclGetErrorString"}[alias]
    via_alias = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    direct = ctypes.cast(getattr(real, name), ctypes.c_void_p).value
    assert via_alias == direct
    if alias == "libhcomm.so":
        lib.HcclGetErrorString.restype = ctypes.c_char_p
        assert lib.HcclGetErrorString(5)  # HCCL_E_NOT_SUPPORT has a message
