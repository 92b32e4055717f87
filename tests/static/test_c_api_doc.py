"""docs/C_API.md covers the C API: every declared function, its library, the env variables.

Pure file reading plus `nm`: no communication, so it runs the same on every rank.
"""

import re
import shutil
import subprocess

import pytest
from conftest import ROOT

INCLUDE = ROOT / "include"
CSRC = ROOT / "csrc"
DOC = ROOT / "docs" / "C_API.md"
LIB_DIRS = [ROOT / "build" / "lib", ROOT / "pyhccl" / "lib"]
LIBRARIES = ("libascendcl.so", "libhccl.so")
HEADER_ONLY = "header (static inline)"

FUNCTION_ROW = re.compile(r"^\|\s*`((?:acl|Hccl|Pyhccl)\w*)`\s*\|\s*([^|]*?)\s*\|\s*(.*?)\s*\|\s*$")
ENV_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|")
TOTALS = re.compile(r"\*\*Totals:\*\* (\d+) functions: (\d+) work \((\d+) of them partially\), "
                    r"(\d+) not supported\.")
# getenv("X") and the helpers of csrc/common/env.h and bootstrap/wire.cc.
ENV_READ = re.compile(r"\b(?:getenv|env_int|env_bytes|env_str|env_seconds)\s*\(\s*\"([A-Za-z0-9_]+)\"")


def _strip_c(text):
    """Remove comments and preprocessor lines from C source."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)


def _file_scope(text):
    """Text outside braces, except extern "C" blocks; a function body becomes ';'."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            before = "".join(out).rstrip()
            i += 1
            if before.endswith('extern "C"'):
                out.append(";")
                continue
            depth = 1
            while i < n and depth:
                depth += text[i] == "{"
                depth -= text[i] == "}"
                i += 1
            if before.endswith(")"):
                out.append(";")      # a function definition ends here
            continue
        out.append(";" if c == "}" else c)
        i += 1
    return "".join(out)


def declared_functions():
    """{name: (header, is_inline)} for every function declared in include/acl and include/hccl."""
    found = {}
    for header in sorted(INCLUDE.glob("acl/**/*.h")) + sorted(INCLUDE.glob("hccl/**/*.h")):
        for stmt in _file_scope(_strip_c(header.read_text())).split(";"):
            s = " ".join(stmt.split())
            if not s or s.startswith("typedef") or "(" not in s:
                continue
            m = re.search(r"([A-Za-z_]\w*)\s*\($", s[: s.index("(") + 1])
            if m:
                found[m.group(1)] = (header.relative_to(INCLUDE).as_posix(),
                                     bool(re.search(r"\binline\b", s)))
    return found


def doc_text():
    assert DOC.is_file(), f"{DOC} is missing"
    return DOC.read_text()


def doc_rows():
    """[(function, library, status)] of every function row of docs/C_API.md."""
    rows = []
    for line in doc_text().splitlines():
        m = FUNCTION_ROW.match(line)
        if m:
            rows.append(m.groups())
    return rows


def exported(lib):
    """Names of the dynamic symbols `lib` defines."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()}


def env_reads():
    """Environment variables read anywhere in csrc/."""
    names = set()
    for path in sorted(CSRC.rglob("*")):
        if path.suffix in (".cc", ".h"):
            names.update(ENV_READ.findall(path.read_text()))
    return names


def test_header_parser_finds_the_api():
    decl = declared_functions()
    for name in ("aclInit", "aclrtMemcpyAsync", "aclprofStart", "aclDataTypeSize",
                 "HcclAllReduce", "HcclCommInitRootInfo", "HcclGetCommConfig"):
        assert name in decl
    assert decl["HcclCommConfigInit"][1], "HcclCommConfigInit should be seen as inline"
    assert sum(inline for _, inline in decl.values()) == 1
    assert not [n for n in decl if not n.startswith(("acl", "Hccl", "Pyhccl"))]


def test_every_declared_function_has_one_row():
    names = [name for name, _, _ in doc_rows()]
    missing = sorted(set(declared_functions()) - set(names))
    assert not missing, f"docs/C_API.md has no row for {missing}"
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"docs/C_API.md has several rows for {dupes}"


def test_every_row_names_a_declared_function():
    unknown = sorted({name for name, _, _ in doc_rows()} - set(declared_functions()))
    assert not unknown, f"docs/C_API.md documents undeclared functions {unknown}"


def test_rows_have_library_and_status():
    decl = declared_functions()
    bad = []
    for name, lib, status in doc_rows():
        if name not in decl:
            continue
        # the acltdt communicator API (acl/acl_tdt.h) maps onto HCCL: it lives in libhccl
        want = HEADER_ONLY if decl[name][1] else (
            "libascendcl.so" if name.startswith("acl") and not name.startswith("acltdt")
            else "libhccl.so")
        if lib != want:
            bad.append(f"{name}: library {lib!r}, expected {want!r}")
        if not (status == "works" or status.startswith(("works:", "works, partial:",
                                                        "not supported:"))):
            bad.append(f"{name}: status {status!r}")
    assert not bad, "\n".join(bad)


def test_totals_match_rows():
    m = TOTALS.search(doc_text())
    assert m, "docs/C_API.md lacks the **Totals:** line"
    rows = doc_rows()
    works = [s for _, _, s in rows if s.startswith("works")]
    partial = [s for s in works if s.startswith("works, partial:")]
    unsupported = [s for _, _, s in rows if s.startswith("not supported")]
    counted = (len(rows), len(works), len(partial), len(unsupported))
    assert tuple(int(g) for g in m.groups()) == counted, \
        f"**Totals:** line says {m.group(0)!r}; rows give functions/works/partial/unsupported {counted}"


def test_declared_functions_are_exported():
    libs = {}
    for name in LIBRARIES:
        path = next((d / name for d in LIB_DIRS if (d / name).is_file()), None)
        if path is None:
            pytest.skip(f"{name} is not built (make -C csrc)")
        libs[name] = path
    if shutil.which("nm") is None:
        pytest.skip("nm is not installed")
    symbols = {name: exported(path) for name, path in libs.items()}
    documented = {name: lib for name, lib, _ in doc_rows()}
    bad = []
    for name, (_, inline) in sorted(declared_functions().items()):
        where = sorted(lib for lib, syms in symbols.items() if name in syms)
        if inline:
            if where:
                bad.append(f"{name} is header-only but exported by {where}")
        elif not where:
            bad.append(f"{name} is exported by neither library")
        elif documented.get(name) not in where:
            bad.append(f"{name} is exported by {where}, documented in {documented.get(name)}")
    assert not bad, "\n".join(bad)


def test_environment_variables_are_documented():
    if not CSRC.is_dir():
        pytest.skip("csrc/ is not present")
    read = env_reads()
    assert "HCCL_EXEC_TIMEOUT" in read and "PYHCCL_DEVICE_COUNT" in read, "env scan found too little"
    documented = {m.group(1) for m in map(ENV_ROW.match, doc_text().splitlines()) if m}
    assert not sorted(read - documented), \
        f"read in csrc/ but not in docs/C_API.md's tables: {sorted(read - documented)}"
    assert not sorted(documented - read), \
        f"documented in docs/C_API.md but not read in csrc/: {sorted(documented - read)}"


# HCCL_* variables that CANN's HCCL defines and we honour; our own tuning knobs use PYHCCL_*.
REAL_HCCL_VARIABLES = {"HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_IF_IP",
                       "HCCL_IF_BASE_PORT", "HCCL_DETERMINISTIC", "HCCL_BUFFSIZE", "HCCL_ALGO",
                       "HCCL_SOCKET_IFNAME", "HCCL_SOCKET_FAMILY"}


# CANN's logging variables, honoured as CANN documents them.
CANN_LOG_VARIABLES = {"ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_SLOG_PRINT_TO_STDOUT", "ASCEND_PROCESS_LOG_PATH"}
# torch's launcher variables: where rank 0 of ranks started by hand listens (docs/LAUNCH.md).
TORCH_LAUNCH_VARIABLES = {"MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE"}


def test_only_real_hccl_variables_use_the_hccl_prefix():
    if not CSRC.is_dir():
        pytest.skip("csrc/ is not present")
    read = env_reads()
    invented = sorted(v for v in read if v.startswith("HCCL_") and v not in REAL_HCCL_VARIABLES)
    assert not invented, f"tuning variables must use the PYHCCL_ prefix: {invented}"
    bad = sorted(v for v in read if not v.startswith(("HCCL_", "PYHCCL_"))
                 and v not in CANN_LOG_VARIABLES | TORCH_LAUNCH_VARIABLES)
    assert not bad, f"environment variables without an HCCL_/PYHCCL_ prefix: {bad}"
