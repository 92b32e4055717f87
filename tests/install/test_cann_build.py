"""Checks of a build against a CANN toolkit (PYHCCL_CANN); skipped in the default build.

`make test-cann` lays the host runtime out as a toolkit (tools/cann_build.py), builds a
copy of the bindings against it, and runs these there, once with pyhccl's headers and
once with headers reduced to an older toolkit's. The names the reduced headers lack
must get the fallbacks of conf/cann_config.py: constants keep their values, functions
return "not supported".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import pyhccl

try:
    from pyhccl import _build_config as cfg
except ImportError:
    cfg = None

pytestmark = pytest.mark.skipif(
    cfg is None or cfg.BUILD != "cann",
    reason="needs a PYHCCL_CANN build (make test-cann builds one)")

FALLBACK_CHECK = r"""
#include "acl/acl.h"
#include "hccl/hccl.h"
#include "pyhccl_cann_config.h"
#include <cstdio>
#define CHECK(c) do { if (!(c)) { std::printf("failed: %s\n", #c); return 1; } } while (0)
int main() {
    CHECK(HCCL_DATA_TYPE_INT128 == 12 && HCCL_DATA_TYPE_HIF8 == 14);
    CHECK(HCCL_DATA_TYPE_FP8E4M3 == 15 && HCCL_DATA_TYPE_FP8E5M2 == 16);
    CHECK(HCCL_DATA_TYPE_FP8E8M0 == 17 && HCCL_DATA_TYPE_RESERVED == 255);
    CHECK(sizeof(HcclCommSymWindow) == sizeof(void *));
    bool on = true;
#ifdef PYHCCL_HAVE_HcclGroupStatusGet
    CHECK(HcclGroupStatusGet(&on) == HCCL_SUCCESS && !on);   /* the runtime's own */
#else
    CHECK(HcclGroupStatusGet(&on) == HCCL_E_NOT_SUPPORT);    /* the fallback */
#endif
#ifndef PYHCCL_HAVE_aclrtReserveMemAddress
    void *p = nullptr;
    CHECK(aclrtReserveMemAddress(&p, 4096, 0, nullptr, 0) == ACL_ERROR_API_NOT_SUPPORT);
#endif
    std::printf("fallbacks ok\n");
    return 0;
}
"""


def _layout():
    path = os.path.join(cfg.CANN_ROOT, "pyhccl_layout.json")
    if not os.path.exists(path):
        pytest.skip("not a layout made by tools/cann_build.py")
    with open(path) as f:
        return json.load(f)


def _header():
    with open(cfg.CONFIG_HEADER) as f:
        return f.read()


def test_extension_is_the_cann_build():
    assert pyhccl.HOST_RUNTIME is False
    assert pyhccl._core.__file__.startswith(os.path.dirname(os.path.dirname(cfg.__file__)))
    assert "hccl" in cfg.LIBRARIES and {"acl_rt", "ascendcl"} & set(cfg.LIBRARIES)
    for name in ("hcomm", "acl_rt"):  # linked where the toolkit has them
        has = os.path.exists(os.path.join(cfg.LIBRARY_DIR, f"lib{name}.so"))
        assert (name in cfg.LIBRARIES) == has, name


def test_runtime_loaded_from_the_toolkit():
    with open("/proc/self/maps") as f:
        mapped = {line.split()[-1] for line in f if line.rstrip().endswith(".so")}
    for name in ("libhccl.so", "libascendcl.so"):
        paths = {p for p in mapped if os.path.basename(p) == name}
        assert paths == {os.path.join(cfg.LIBRARY_DIR, name)}, (name, paths)


def test_missing_names_are_those_removed():
    # The fields of a missing struct go with it.
    missing = [n for n in cfg.MISSING if "." not in n or n.split(".")[0] not in cfg.MISSING]
    assert sorted(missing) == sorted(_layout()["removed"])


def test_flags_in_config_header():
    text = _header()
    removed = set(_layout()["removed"])
    for name in ("HcclAllReduce", "HcclCommConfigInit", "aclrtMalloc", "HCCL_DATA_TYPE_BFP16"):
        assert f"#define PYHCCL_HAVE_{name} 1" in text
    for name in ("HCCL_DATA_TYPE_HIF8", "HcclCommSymWinRegister", "aclrtReserveMemAddress"):
        assert (f"#define PYHCCL_HAVE_{name} 1" in text) == (name not in removed)


def test_datatype_values_without_toolkit_support():
    assert (pyhccl.INT128, pyhccl.HIF8, pyhccl.FP8E4M3, pyhccl.FP8E5M2, pyhccl.FP8E8M0) == \
        (12, 14, 15, 16, 17)


def test_fallbacks_from_cxx():
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    # Not tmp_path: ranks sharing pytest's base directory race to clean it up.
    with tempfile.TemporaryDirectory() as tmp:
        _fallbacks_from_cxx(Path(tmp))


def _fallbacks_from_cxx(tmp_path):
    src, exe = tmp_path / "fallbacks.cc", tmp_path / "fallbacks"
    src.write_text(FALLBACK_CHECK)
    cmd = ["g++", "-std=c++11", "-DPYHCCL_CANN", "-I", cfg.INCLUDE_DIR,
           "-I", os.path.dirname(cfg.CONFIG_HEADER), str(src), "-o", str(exe),
           "-L", cfg.LIBRARY_DIR, *("-l" + n for n in cfg.LIBRARIES),
           f"-Wl,-rpath,{cfg.LIBRARY_DIR}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "fallbacks ok" in run.stdout, run.stdout + run.stderr


def test_libs_flags_name_the_toolkit():
    out = subprocess.run([sys.executable, "-m", "pyhccl", "--libs", "--cflags"],
                         capture_output=True, text=True, check=True).stdout
    assert f"-I{cfg.INCLUDE_DIR}" in out and f"-L{cfg.LIBRARY_DIR}" in out
    assert " ".join("-l" + n for n in cfg.LIBRARIES) in out
