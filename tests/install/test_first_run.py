"""The first run installs only what it needs (issue 19: make demo installed Sphinx, mypy,
scikit-learn, ... and took six minutes).

`make -n` shows what `make demo` and `make test-examples` (the start of `make test`)
would run on a fresh clone (a venv that does not exist yet); nothing is installed or built.
"""
import re
import shutil
import subprocess

import pytest
from conftest import ROOT

DEMO_NEEDS = {"mpich", "mpi4py", "numpy", "cython", "setuptools"}

pytestmark = [pytest.mark.once,
              pytest.mark.skipif(shutil.which("make") is None, reason="needs make")]


def names(path):
    """Return the package names a requirements file lists (lower case), and its -r includes."""
    found, includes = set(), []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            includes.append(line[3:].strip())
        elif line:
            found.add(re.split(r"[<>=!~\[; ]", line)[0].lower())
    return found, includes


def dry_run(target, tmp_path):
    out = subprocess.run(["make", "-n", "-C", str(ROOT), target, f"VENV={tmp_path / 'venv'}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_requirements_split_the_demo_from_the_tools():
    runtime, _ = names(ROOT / "requirements.txt")
    dev, includes = names(ROOT / "requirements-dev.txt")
    assert runtime == DEMO_NEEDS
    assert includes == ["requirements.txt"]
    assert {"pytest", "pytest-mpi", "pytest-timeout", "mypy", "sphinx", "scikit-learn"} <= dev


def test_make_demo_installs_only_the_runtime_requirements(tmp_path):
    demo = dry_run("demo", tmp_path)
    assert "-r requirements.txt" in demo
    assert "requirements-dev.txt" not in demo


def test_make_test_installs_the_tools_too(tmp_path):
    # make test runs test-examples first; `make -n test` itself would run its recipe, which
    # calls $(MAKE) (make executes such lines even with -n).
    test = dry_run("test-examples", tmp_path)
    assert "-r requirements.txt" in test and "-r requirements-dev.txt" in test
