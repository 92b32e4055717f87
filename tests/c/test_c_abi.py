"""ABI checks of the public C headers (include/acl, include/hccl) and the
reduction kernels (csrc/hccl/reduce), compiled and run with the system gcc/g++.

They need no MPI: under mpiexec each rank runs them on its own (tmp_path is per
process)."""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT

INCLUDE = ROOT / "include"
CSRC = ROOT / "csrc"
CDIR = ROOT / "tests" / "c"
ABI_SOURCES = [CDIR / "abi_main.c", CDIR / "abi_tu2.c"]
HEADERS = [
    "acl/acl.h",
    "acl/acl_rt.h",
    "acl/acl_base.h",
    "acl/acl_base_rt.h",
    "acl/acl_prof.h",
    "hccl/hccl.h",
    "hccl/hccl_types.h",
    "hccl/hccl_comm.h",
]
WARN = ["-Wall", "-Wextra", "-Werror", "-pedantic"]

pytestmark = pytest.mark.skipif(
    shutil.which("gcc") is None or shutil.which("g++") is None, reason="gcc/g++ not found"
)


def _run(cmd, **kwargs):
    """Run cmd; fail the test with its output if it exits non-zero."""
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


def _build_and_run_abi(tmp_path, compiler, flags):
    """Compile the two ABI translation units, link them, run, expect 'abi ok'."""
    exe = tmp_path / "abi"
    _run([compiler, *flags, *WARN, f"-I{INCLUDE}", f"-I{CDIR}", *ABI_SOURCES, "-o", exe])
    out = _run([exe], timeout=60).stdout
    assert out.strip().splitlines()[-1] == "abi ok", out


def test_abi_c99(tmp_path):
    """Headers compile as C99 in two linked TUs and match docs/ABI.md section 7."""
    _build_and_run_abi(tmp_path, "gcc", ["-std=c99"])


def test_abi_c11(tmp_path):
    """Same as C11 (uses _Static_assert)."""
    _build_and_run_abi(tmp_path, "gcc", ["-std=c11"])


def test_abi_cxx11(tmp_path):
    """Same as C++11."""
    _build_and_run_abi(tmp_path, "g++", ["-std=c++11", "-x", "c++"])


@pytest.mark.parametrize("header", HEADERS)
@pytest.mark.parametrize(
    "lang", [("gcc", "-std=c99"), ("g++", "-std=c++11"), ("g++", "-std=c++17")], ids=lambda l: l[1]
)
def test_header_standalone(tmp_path, header, lang):
    """Every header compiles on its own (include order independent)."""
    compiler, std = lang
    src = tmp_path / "one.c"
    src.write_text(f'#include "{header}"\nint pyhccl_dummy(void);\n')
    xflag = ["-x", "c++"] if compiler == "g++" else []
    _run([compiler, std, *WARN, *xflag, f"-I{INCLUDE}", "-c", src, "-o", tmp_path / "one.o"])


def test_overrides(tmp_path):
    """ACL_FUNC_VISIBILITY, HCCL_API_VISIBILITY, HCOMM_WEAK_SYMBOL and
    OPEN_BUILD_PROJECT can be set by the includer."""
    src = tmp_path / "ov.c"
    src.write_text(
        '#include "hccl/hccl.h"\n'
        "int main(void) { return HcclGetRankSize != 0 ? 0 : 1; }\n"
    )
    flags = [
        "-DACL_FUNC_VISIBILITY=",
        "-DHCCL_API_VISIBILITY=",
        "-DHCOMM_WEAK_SYMBOL=__attribute__((weak))",
        "-DOPEN_BUILD_PROJECT",
    ]
    # The weak HcclGetRankSize links without a definition (address 0).
    _run(["gcc", "-std=c99", *WARN, "-Wno-address", *flags, f"-I{INCLUDE}", src, "-o", tmp_path / "ov"])
    proc = subprocess.run([tmp_path / "ov"], capture_output=True, timeout=60)
    assert proc.returncode == 1


def test_crc32c_check(tmp_path):
    """csrc/common/crc32c (the TCP transport's message check) against a bit-by-bit
    reference, on each of its paths (vpclmul, mixed, pclmul, sse4.2, table) that this CPU has."""
    exe = tmp_path / "crc32c_check"
    _run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{CSRC}", CDIR / "crc32c_check.cc",
          CSRC / "common" / "crc32c.cc", CSRC / "common" / "crc32c_fold.cc", "-o", exe])
    out = _run([exe], timeout=60).stdout
    lines = out.strip().splitlines()
    assert lines[-1] == "crc32c ok", out
    for path in ("vpclmul", "mixed", "pclmul", "sse4.2", "table"):  # each one checked or skipped
        assert any(line.startswith(f"crc32c: {path} ") for line in lines), out
    assert "crc32c: table checked" in lines, out


def test_yield_window_check(tmp_path):
    """csrc/common/yield_window.h: a wait's yield time stretches to twice the recent waits
    while they are short, never below PYHCCL_YIELD_US nor above 2 ms, and falls back when
    a peer is late for longer."""
    exe = tmp_path / "yield_window_check"
    _run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{CSRC}",
          CDIR / "yield_window_check.cc", "-o", exe])
    assert _run([exe], timeout=60).stdout.strip().splitlines()[-1] == "yield_window ok"


def test_crypto_check(tmp_path):
    """csrc/common's SHA-256 (FIPS 180-2 vectors) and HMAC-SHA256 (RFC 4231 cases 1-7),
    which prove the job secret on every hello without sending it."""
    exe = tmp_path / "crypto_check"
    _run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{CSRC}", CDIR / "crypto_check.cc",
          CSRC / "common" / "sha256.cc", CSRC / "common" / "hmac.cc", "-o", exe])
    out = _run([exe], timeout=60).stdout
    assert out.strip().splitlines()[-1] == "crypto ok", out


@pytest.fixture(scope="module")
def reduce_check_exe(tmp_path_factory):
    """tests/c/reduce_check.cc linked with csrc/hccl/reduce/*.cc (built once)."""
    sources = sorted((CSRC / "hccl" / "reduce").glob("*.cc"))
    if not sources:
        pytest.skip("csrc/hccl/reduce has no sources yet")
    exe = tmp_path_factory.mktemp("reduce") / "reduce_check"
    _run(
        ["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}", f"-I{CSRC}",
         CDIR / "reduce_check.cc", *sources, "-o", exe]
    )
    return exe


@pytest.mark.parametrize("portable", ["0", "1"], ids=["default", "portable"])
def test_reduce_check(reduce_check_exe, portable):
    """csrc/hccl/reduce against a straightforward reference, every dtype/op,
    with and without the AVX2 fp16/bf16 fast paths (PYHCCL_REDUCE_PORTABLE)."""
    env = dict(os.environ, PYHCCL_REDUCE_PORTABLE=portable)
    out = _run([reduce_check_exe], timeout=120, env=env).stdout
    assert out.strip().splitlines()[-1] == "reduce ok", out
