"""python -m pyhccl info: every section, the environment in effect, and its variable list
kept equal to docs/C_API.md's environment table."""

import os
import re
import subprocess
import sys

import pytest

import pyhccl
from pyhccl import info
from conftest import ROOT

pytestmark = pytest.mark.once      # no MPI needed: once per make test



def documented_variables():
    with open(os.path.join(ROOT, "docs", "C_API.md")) as f:
        text = f.read()
    table = text[text.index("### Environment variables"):]
    return {m.group(1): m.group(2).strip() for m in
            re.finditer(r"^\| `([A-Z0-9_]+)` \| ([^|]*) \|", table, re.M)}


def test_variables_match_the_docs():
    documented = documented_variables()
    assert [name for name, _, _ in info.ENV_VARS] == list(documented)
    for name, default, _ in info.ENV_VARS:
        assert default.replace("`", "") == documented[name].replace("`", ""), name


def test_info_report():
    env = dict(os.environ, PYHCCL_SLOT_BYTES="2M")
    env.pop("HCCL_BUFFSIZE", None)
    proc = subprocess.run([sys.executable, "-m", "pyhccl", "info"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for section in ("Package:", "Runtime:", "Transports:", "Environment:", "MPI:"):
        assert f"\n{section}\n" in f"\n{out}", section
    assert re.search(rf"pyhccl: {re.escape(pyhccl.__version__)}\n", out)
    assert re.search(r"device count: \d+\n", out)
    assert f"library dir: {pyhccl.get_library_dir()}" in out
    if pyhccl.HOST_RUNTIME:
        assert "build: host runtime" in out
        assert re.search(r"libhccl\.so: /\S+/libhccl\.so", out)
    assert "PYHCCL_SLOT_BYTES: 2M (set; default 128K)" in out
    assert "HCCL_BUFFSIZE: 200 (default)" in out
    assert re.search(r"MPI library: \S+", out) and "mpi4py: " in out
