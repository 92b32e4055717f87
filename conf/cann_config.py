"""Feature flags for a build against a CANN toolkit (PYHCCL_CANN=<toolkit>).

A toolkit's headers may predate names that pyhccl declares (HCCL_DATA_TYPE_HIF8, the
symmetric-memory functions, ...). As mpi4py does for MPI versions, every name declared in
pyhccl/libacl.pxd and pyhccl/libhccl.pxd (constant, enum value, type, struct field,
function) is tested against the toolkit's headers, and one header is written:

    #define PYHCCL_HAVE_<name> 1                 for each name the headers declare
    #ifndef PYHCCL_HAVE_<name> ... #endif        a fallback for each optional name:
        constants and enum values  -> the value of pyhccl's reference headers (include/)
        functions                  -> a static function returning "not supported"
                                      (HCCL_E_NOT_SUPPORT, ACL_ERROR_API_NOT_SUPPORT)
        types                      -> the declaration of the .pxd

libhccl.pxd includes it after the toolkit's headers (only when PYHCCL_CANN is defined),
so the extension builds against an older toolkit and its callers get a clear error.
The headers of a CANN toolkit are C++ (HCCL's do not compile as C), so the checks and the
extension are compiled as C++.

    python conf/cann_config.py TOOLKIT_INCLUDE OUTDIR   # writes OUTDIR/pyhccl_cann_config.h
"""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PXDS = [os.path.join(HERE, "pyhccl", "libacl.pxd"), os.path.join(HERE, "pyhccl", "libhccl.pxd")]
REFERENCE_INCLUDE = os.path.join(HERE, "include")
HEADERS = ["acl/acl.h", "hccl/hccl.h"]
HEADER_NAME = "pyhccl_cann_config.h"

# Without these there is no HCCL to bind: fail with their names instead of faking them.
REQUIRED = {
    "aclError", "aclrtStream", "aclrtEvent", "aclrtContext", "HcclComm", "HcclResult",
    "HcclDataType", "HcclReduceOp", "HcclRootInfo", "HcclCommConfig", "HcclSendRecvItem",
    "HcclCommConfigInit", "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtMalloc",
    "aclrtFree", "aclrtMemcpy", "aclrtCreateStream", "aclrtSynchronizeStream",
    "HcclGetRootInfo", "HcclCommInitRootInfo", "HcclAllReduce", "HcclCommDestroy",
    "HcclGetErrorString",
}
NOT_SUPPORTED = {"HcclResult": "HCCL_E_NOT_SUPPORT", "aclError": "ACL_ERROR_API_NOT_SUPPORT"}
CTYPES = {"c_bool": "bool"}  # Cython aliases of C types in the .pxd files


class ConfigError(RuntimeError):
    """The toolkit cannot be used; the message says why."""


class Decl:
    """One declared name: kind is const, enumval, enum, typedef, funcptr, struct, field, func."""

    def __init__(self, kind, name, **kw):
        self.kind, self.name = kind, name
        self.ctype = kw.get("ctype")        # enumval: its enum; typedef: the base type
        self.ret = kw.get("ret")            # func, funcptr
        self.params = kw.get("params", [])  # func, funcptr: [(type, name)]
        self.fields = kw.get("fields", [])  # struct: C declarations
        self.union = kw.get("union", False)
        self.owner = kw.get("owner")        # field: its struct

    @property
    def flag(self):
        return "PYHCCL_HAVE_" + (f"{self.owner}_{self.name}" if self.kind == "field" else self.name)


# ---- the .pxd declarations ---------------------------------------------------------------

def _ctype(t):
    t = " ".join(t.split())
    for alias, real in CTYPES.items():
        t = re.sub(rf"\b{alias}\b", real, t)
    return t.strip()


def _params(text):
    text = text.strip()
    if text in ("", "void"):
        return []
    out = []
    for i, p in enumerate(x.strip() for x in text.split(",")):
        m = re.match(r"^(.*?[\s*])(\w+)$", p)
        out.append((_ctype(m.group(1)), m.group(2)) if m else (_ctype(p), f"a{i}"))
    return out


def _logical_lines(path):
    """(indent, text) of each declaration, joining lines until parentheses balance."""
    pending, indent = "", 0
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not pending:
            indent = len(line) - len(line.lstrip())
        pending = (pending + " " + line.strip()).strip()
        if pending.count("(") == pending.count(")"):
            yield indent, pending
            pending = ""


def parse_pxd(path):
    """Return the Decls of the `cdef extern from "..."` blocks of a .pxd file, in order."""
    decls, block, current = [], None, None
    for indent, text in _logical_lines(path):
        if indent == 0:
            block = text if re.match(r'cdef extern from "', text) else None
            current = None
            continue
        if block is None:
            continue
        if indent == 4:
            current = None
            if text == "enum:":
                current = ("const", None)
            elif m := re.match(r"ctypedef enum (\w+):$", text):
                decls.append(Decl("enum", m[1]))
                current = ("enumval", m[1])
            elif m := re.match(r"ctypedef (struct|union) (\w+):$", text):
                decls.append(Decl("struct", m[2], union=m[1] == "union"))
                current = ("field", decls[-1])
            elif '"' in text:
                continue  # ctypedef bint c_bool "bool": a Cython alias, not a C name
            elif m := re.match(r"ctypedef (.+?)\(\*(\w+)\)\((.*)\)$", text):
                decls.append(Decl("funcptr", m[2], ret=_ctype(m[1]), params=_params(m[3])))
            elif m := re.match(r"ctypedef (.*?[\s*])(\w+)$", text):
                decls.append(Decl("typedef", m[2], ctype=_ctype(m[1])))
            elif m := re.match(r"^(.*?[\s*])(\w+)\s*\((.*)\)$", text):
                decls.append(Decl("func", m[2], ret=_ctype(m[1]), params=_params(m[3])))
            else:
                raise ConfigError(f"{path}: cannot read declaration {text!r}")
        elif current is not None:
            kind, owner = current
            if kind == "const":
                decls.append(Decl("const", text))
            elif kind == "enumval":
                decls.append(Decl("enumval", text, ctype=owner))
            else:
                owner.fields.append(_ctype(text))
                name = re.match(r"^.*?(\w+)\s*(\[.*\])?$", text)[1]
                decls.append(Decl("field", name, owner=owner.name))
    return decls


def declarations():
    return [d for pxd in PXDS for d in parse_pxd(pxd)]


# ---- checks against the toolkit's headers ------------------------------------------------

def _check_line(i, d):
    if d.kind in ("const", "enumval"):
        return f"static const long long pyhccl_chk_{i} = (long long)({d.name});"
    if d.kind == "field":
        return f"typedef decltype((({d.owner} *)0)->{d.name}) pyhccl_chk_{i};"
    if d.kind == "func":
        args = ", ".join(f"std::declval<{t}>()" for t, _ in d.params)
        return f"typedef decltype({d.name}({args})) pyhccl_chk_{i};"
    return f"typedef {d.name} pyhccl_chk_{i};"


def _compile(cxx, source, include, workdir, out=None):
    path = os.path.join(workdir, "check.cc" if out is None else "probe.cc")
    with open(path, "w") as f:
        f.write(source)
    cmd = cxx + ["-std=c++11", "-I", include, path]
    cmd += ["-o", out] if out else ["-fsyntax-only", "-fmax-errors=0"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return path, proc


def _prologue():
    return "".join(f'#include "{h}"\n' for h in HEADERS) + "#include <utility>\n"


def probe(include, decls, cxx):
    """Return the set of Decls the headers under `include` declare (one compile per round)."""
    for h in HEADERS:
        if not os.path.exists(os.path.join(include, h)):
            raise ConfigError(f"{include}: no {h} (PYHCCL_CANN must be a CANN toolkit "
                              "with include/ and lib64/)")
    present = list(decls)
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(4):
            head = _prologue()
            first = head.count("\n") + 1
            body = "\n".join(_check_line(i, d) for i, d in enumerate(present))
            path, proc = _compile(cxx, head + body + "\n", include, tmp)
            if proc.returncode == 0:
                return set(present)
            bad, foreign = set(), []
            for m in re.finditer(r"^(.*?):(\d+):\d+: (?:fatal )?error: (.*)$", proc.stderr, re.M):
                if os.path.abspath(m[1]) == path and int(m[2]) >= first:
                    bad.add(int(m[2]) - first)
                else:
                    foreign.append(m[0])
            if foreign or not bad:
                raise ConfigError("the toolkit's headers do not compile as C++ with "
                                  f"{' '.join(cxx)}:\n" + "\n".join(foreign or [proc.stderr]))
            present = [d for i, d in enumerate(present) if i not in bad]
    raise ConfigError("could not settle which names the toolkit's headers declare")


def reference_values(decls, cxx):
    """Values of constants and enum values in pyhccl's reference headers, as C literals."""
    wanted = [d for d in decls if d.kind in ("const", "enumval")]
    enumvals = {d.name: d.ctype for d in wanted if d.kind == "enumval"}
    src = ['#include "acl/acl.h"', '#include "hccl/hccl.h"', "#include <cstdio>",
           "#include <type_traits>",
           "template <class T, bool E = std::is_enum<T>::value> struct U { typedef T type; };",
           "template <class T> struct U<T, true> "
           "{ typedef typename std::underlying_type<T>::type type; };",
           "template <class T> static void show(const char *n, T v) {",
           "  typedef typename U<T>::type I;",
           '  std::printf("%s %d %d %lld %llu\\n", n, (int)std::is_signed<I>::value, '
           "(int)sizeof(I), (long long)v, (unsigned long long)v);", "}", "int main() {"]
    src += [f'  show("{d.name}", {d.name});' for d in wanted] + ["  return 0;", "}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "probe")
        _, proc = _compile(cxx, "\n".join(src), REFERENCE_INCLUDE, tmp, out=exe)
        if proc.returncode != 0:
            raise ConfigError(f"cannot compile the value probe against {REFERENCE_INCLUDE}:\n"
                              + proc.stderr)
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        name, signed, size, s, u = line.split()
        if name in enumvals:
            values[name] = f"(({enumvals[name]})({s}))"
        elif signed == "1":
            values[name] = f"({s}ll)" if size == "8" else f"({s})"
        else:
            values[name] = f"{u}ull" if size == "8" else f"{u}u"
    return values


# ---- the header --------------------------------------------------------------------------

def _fallback(d, values):
    if d.kind in ("const", "enumval"):
        return [f"#define {d.name} {values[d.name]}"]
    if d.kind == "enum":
        return [f"typedef int {d.name};"]
    if d.kind == "typedef":
        return [f"typedef {d.ctype} {d.name};"]
    if d.kind == "funcptr":
        params = ", ".join(f"{t} {n}" for t, n in d.params) or "void"
        return [f"typedef {d.ret} (*{d.name})({params});"]
    if d.kind == "struct":
        kw = "union" if d.union else "struct"
        return [f"typedef {kw} {{"] + [f"    {f};" for f in d.fields] + [f"}} {d.name};"]
    if d.kind == "func":
        params = ", ".join(f"{t} {n}" for t, n in d.params) or "void"
        body = [f"    (void){n};" for _, n in d.params]
        if d.ret != "void":
            body.append(f"    return {NOT_SUPPORTED.get(d.ret, '0')};")
        return [f"static inline {d.ret} pyhccl_missing_{d.name}({params}) {{", *body, "}",
                f"#define {d.name} pyhccl_missing_{d.name}"]
    return []  # a field: no fallback (a struct's layout is the toolkit's)


def render(decls, present, values, toolkit):
    order = {"enum": 0, "typedef": 0, "funcptr": 0, "struct": 0,
             "const": 1, "enumval": 1, "field": 2, "func": 3}
    out = [f"/* Generated by conf/cann_config.py for {toolkit}. Do not edit. */",
           "#ifndef PYHCCL_CANN_CONFIG_H", "#define PYHCCL_CANN_CONFIG_H", "",
           "/* ---- what the toolkit's headers declare ---- */"]
    out += [f"#define {d.flag} 1" for d in decls if d in present]
    out += ["", "/* ---- fallbacks for what they lack (see conf/cann_config.py) ---- */"]
    for d in sorted(decls, key=lambda d: order[d.kind]):  # stable: types first, then values
        lines = _fallback(d, values)
        if lines and d.name not in REQUIRED:
            out += [f"#ifndef {d.flag}", *lines, "#endif"]
    return "\n".join(out + ["", "#endif", ""])


def configure(include, outdir, cxx=None, log=print):
    """Probe `include`, write outdir/pyhccl_cann_config.h; return the names it lacks."""
    cxx = (cxx or os.environ.get("CXX") or "g++").split()
    decls = declarations()
    present = probe(include, decls, cxx)
    missing = [d for d in decls if d not in present]
    required = sorted(d.name for d in missing if d.name in REQUIRED)
    if required:
        raise ConfigError(f"{include}: the toolkit's headers lack {', '.join(required)}, "
                          "which pyhccl needs")
    values = reference_values(decls, cxx)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, HEADER_NAME), "w") as f:
        f.write(render(decls, present, values, include))
    names = [f"{d.owner}.{d.name}" if d.kind == "field" else d.name for d in missing]
    log(f"{len(decls) - len(missing)} of {len(decls)} declared names found in "
        f"{include}" + (f"; fallbacks for {len(names)}: {', '.join(names)}" if names else ""))
    return names


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.rsplit("\n\n", 1)[-1])
    try:
        configure(sys.argv[1], sys.argv[2], log=lambda m: print("cann_config:", m))
    except ConfigError as exc:
        sys.exit(f"cann_config: {exc}")
