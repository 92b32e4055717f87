"""The configure step of a PYHCCL_CANN build (conf/cann_config.py), without building.

It must find every name pyhccl declares in pyhccl's own headers, and exactly the names
removed from a copy reduced to an older toolkit's headers (tools/cann_build.py); the
header it writes must compile against those reduced headers and give the fallbacks.
"""
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

sys.path[:0] = [str(ROOT / "conf"), str(ROOT / "tools")]

import cann_build  # noqa: E402
import cann_config  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def _quiet(msg):
    pass


@pytest.fixture
def reduced_include(tmp_path):
    inc = tmp_path / "include"
    shutil.copytree(ROOT / "include", inc)
    cann_build.reduce_headers(str(inc))
    return inc


def test_declarations_cover_the_pxd_files():
    names = {d.name for d in cann_config.declarations()}
    for name in ("aclrtMalloc", "HcclAllReduce", "HcclCommConfigInit", "HCCL_DATA_TYPE_HIF8",
                 "HCCL_ROOT_INFO_BYTES", "HcclCommStateCallback", "aclrtPhysicalMemProp",
                 "hcclSymWinMaxMemSizePerRank"):
        assert name in names


def test_pyhccl_headers_declare_everything(tmp_path):
    assert cann_config.configure(str(ROOT / "include"), str(tmp_path), log=_quiet) == []


def test_reduced_headers_lack_exactly_what_was_removed(tmp_path, reduced_include):
    missing = cann_config.configure(str(reduced_include), str(tmp_path), log=_quiet)
    assert sorted(missing) == sorted(name for _, _, name in cann_build.REDUCTIONS)
    text = (tmp_path / cann_config.HEADER_NAME).read_text()
    assert "#define PYHCCL_HAVE_HcclAllReduce 1" in text
    assert "#define PYHCCL_HAVE_HCCL_DATA_TYPE_HIF8 1" not in text
    assert "#define HCCL_DATA_TYPE_HIF8 ((HcclDataType)(14))" in text


def test_fallbacks_compile_and_say_not_supported(tmp_path, reduced_include):
    cann_config.configure(str(reduced_include), str(tmp_path), log=_quiet)
    src = tmp_path / "use.cc"
    src.write_text(
        '#include "acl/acl.h"\n#include "hccl/hccl.h"\n#include "pyhccl_cann_config.h"\n'
        "static_assert(HCCL_DATA_TYPE_FP8E8M0 == 17, \"value of include/\");\n"
        "int main() { bool on; HcclCommSymWindow w = nullptr; void *p = nullptr;\n"
        "  return HcclGroupStatusGet(&on) == HCCL_E_NOT_SUPPORT &&\n"
        "         HcclCommSymWinDeregister(w) == HCCL_E_NOT_SUPPORT &&\n"
        "         aclrtReserveMemAddress(&p, 64, 0, nullptr, 0) == ACL_ERROR_API_NOT_SUPPORT\n"
        "         ? 0 : 1; }\n")
    exe = tmp_path / "use"
    # Only fallbacks are called, so no library is needed.
    proc = subprocess.run(["g++", "-std=c++11", "-Wall", "-Werror", "-I", str(reduced_include),
                           "-I", str(tmp_path), str(src), "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(exe)], timeout=60).returncode == 0


def test_missing_required_name_is_a_clear_error(tmp_path):
    inc = tmp_path / "include"
    shutil.copytree(ROOT / "include", inc)
    comm = inc / "hccl" / "hccl.h"
    text = comm.read_text()
    assert "HcclAllReduce(" in text
    comm.write_text(text.replace("HcclAllReduce(", "HcclAllReduceRenamed("))
    with pytest.raises(cann_config.ConfigError, match="HcclAllReduce"):
        cann_config.configure(str(inc), str(tmp_path / "out"), log=_quiet)


def test_not_a_toolkit_is_a_clear_error(tmp_path):
    with pytest.raises(cann_config.ConfigError, match="no acl/acl.h"):
        cann_config.configure(str(tmp_path), str(tmp_path / "out"), log=_quiet)


def test_reductions_each_match_once(tmp_path):
    # reduce_headers exits if a pattern stops matching (headers changed): keep them in step.
    inc = tmp_path / "include"
    shutil.copytree(ROOT / "include", inc)
    cann_build.reduce_headers(str(inc))
    assert "HCCL_DATA_TYPE_HIF8" not in (inc / "hccl" / "hccl_types.h").read_text()
    assert os.path.exists(inc / "hccl" / "hccl.h")
