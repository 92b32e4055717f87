"""Static checks, run once per `make test` (marked `once`): the stub of the extension
matches it (mypy's stubtest), mypy --strict passes on the package, on every example and on
the correct calls of tests/mypy_cases, and flags each mistake of its misuse script, and the
Sphinx docs build without a warning."""

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

MYPY_CACHE = os.path.join(ROOT, "build", "mypy_cache")

pytestmark = pytest.mark.once


def run(*args, timeout=300):
    """Run a Python module of this interpreter from the checkout; return (rc, output)."""
    # Not the launcher's variables: a child that imports mpi4py would try to join this job.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "PMIX_", "HYDRA_", "MPIR_", "OMPI_", "PRTE_"))}
    proc = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def mypy(*paths):
    pytest.importorskip("mypy")
    return run("mypy", "--strict", "--cache-dir", MYPY_CACHE, "--no-error-summary",
               "--hide-error-context", "--show-error-codes", *paths)


def test_stub_matches_the_extension():
    pytest.importorskip("mypy")
    rc, out = run("mypy.stubtest", "pyhccl._core", "--allowlist",
                  os.path.join("tests", "stubtest_allowlist.txt"))
    assert rc == 0, out


def test_package_passes_mypy_strict():
    rc, out = mypy("-p", "pyhccl")
    assert rc == 0, out


def strict_programs(folder):
    return sorted(os.path.join(folder, f) for f in os.listdir(os.path.join(ROOT, folder))
                  if f.endswith(".py"))


def test_tutorial_programs_pass_mypy_strict():
    programs = strict_programs(os.path.join("docs", "tutorial"))
    assert programs
    rc, out = mypy(*programs)
    assert rc == 0, out


def test_examples_pass_mypy_strict():
    """Whatever examples/*.py exist, and their tinygpt package, type-check in strict mode (issue 9)."""
    programs = strict_programs("examples")
    assert programs
    # tinygpt is named too: mypy keeps quiet about modules it only follows imports into when
    # they lie under a folder on sys.path, as the checkout is through the editable install.
    rc, out = mypy(*programs, os.path.join("examples", "tinygpt"))
    assert rc == 0, out


def test_mypy_reports_every_misuse():
    path = os.path.join("tests", "mypy_cases", "misuse.py")
    with open(os.path.join(ROOT, path)) as f:
        expected = {(i, m.group(1)) for i, line in enumerate(f, 1)
                    for m in [re.search(r"# E: ([\w-]+)$", line.rstrip())] if m}
    rc, out = mypy(path)
    reported = {(int(m.group(1)), m.group(2))
                for m in re.finditer(r"misuse\.py:(\d+): error: .*\[([\w-]+)\]", out)}
    assert rc == 1
    assert reported == expected, out


def test_good_cases_pass_mypy_strict():
    """Correct calls (every collective with each kind of buffer, op and dtype) type-check, and
    their assert_type()s hold: a collective returns the type of the buffer it was given."""
    folder = os.path.join("tests", "mypy_cases")
    programs = [p for p in strict_programs(folder) if os.path.basename(p) != "misuse.py"]
    assert programs
    rc, out = mypy(*programs)
    assert rc == 0, out


def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    rc, out = run("sphinx.cmd.build", "-W", "--keep-going", "-q", "-b", "html",
                  "-d", str(tmp_path / "doctrees"), "docs", str(tmp_path / "html"), timeout=600)
    assert rc == 0, out
    assert (tmp_path / "html" / "api.html").exists()
    assert (tmp_path / "html" / "tutorial.html").exists()
