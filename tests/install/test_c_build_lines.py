"""The C build lines the docs give work as written (issue 19).

examples/allreduce.c's build comment once used a relative rpath (pyhccl/lib),
so the program ran only from the repository root; the README's C line used
cc, which cannot build an MPI program. Each line is taken from the file,
built into a temporary directory and run from there, as a 1-process MPI job
(MPICH's singleton start: no launcher).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pyhccl
from conftest import ROOT

BIN = Path(sys.executable).parent
FLAGS = "$(python -m pyhccl --cflags --libs)"

pytestmark = [pytest.mark.once,
              pytest.mark.skipif(not pyhccl.HOST_RUNTIME or not (BIN / "mpicc").exists(),
                                 reason="needs the host runtime and the venv's mpicc")]


def pyhccl_flags():
    out = subprocess.run([sys.executable, "-m", "pyhccl", "--cflags", "--libs"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def build_line(text, start):
    """Return the words of the first line of `text` that starts with `start` (comment marks cut)."""
    for line in text.splitlines():
        line = re.sub(r"^\s*(\*|#)?\s*", "", line)
        if line.startswith(start):
            return line.split("#")[0].split()
    raise AssertionError(f"no line starting with {start!r}")


def build_and_run(words, tmp_path):
    """Build with `words` (FLAGS expanded, -o into tmp_path) from the repository root, run from tmp_path."""
    flags = FLAGS.split()
    for i in range(len(words)):
        if words[i:i + len(flags)] == flags:
            words = words[:i] + pyhccl_flags() + words[i + len(flags):]
            break
    exe = tmp_path / "prog"
    if "-o" in words:
        words[words.index("-o") + 1] = str(exe)
    else:
        words += ["-o", str(exe)]
    words[0] = str(BIN / words[0])
    proc = subprocess.run(words, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, f"{shlex.join(words)}\n{proc.stderr}"
    # Not this test's MPI job: a program started without a launcher runs as its own 1-rank job.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "MPI_", "HYDRA_", "PMIX_", "OMPI_"))}
    run = subprocess.run([str(exe)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    return run


def test_allreduce_c_build_comment_runs_from_any_directory(tmp_path):
    text = (ROOT / "examples" / "allreduce.c").read_text()
    run = build_and_run(build_line(text, "mpicc "), tmp_path)
    assert run.returncode == 0 and "result verified" in run.stdout, run.stdout + run.stderr


def test_readme_builds_mpi_programs_with_mpicc(tmp_path):
    readme = (ROOT / "README.md").read_text()
    words = build_line(readme, "mpicc prog.c ")
    build_line(readme, "cc prog.c ")                  # the line for programs without MPI stays
    (tmp_path / "src").mkdir()
    shutil.copy(ROOT / "examples" / "allreduce.c", tmp_path / "src" / "prog.c")
    words[1] = str(tmp_path / "src" / "prog.c")
    run = build_and_run(words + ["-lm"], tmp_path)
    assert run.returncode == 0 and "result verified" in run.stdout, run.stdout + run.stderr
