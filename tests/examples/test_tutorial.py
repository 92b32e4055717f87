"""The tutorial's programs (docs/tutorial/*.py) run and check their own results, at every
rank count, in this process (each builds its own communicator over MPI.COMM_WORLD)."""

import glob
import importlib.util
import os
import re

import pytest

from conftest import ROOT, assert_all

pytestmark = pytest.mark.mpi

SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "docs", "tutorial", "*.py")))


def test_there_are_tutorial_programs():
    assert len(SCRIPTS) >= 4


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_tutorial_program(path, capsys):
    spec = importlib.util.spec_from_file_location("tutorial_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rc = module.main()
    capsys.readouterr()
    assert_all(rc == 0, f"{os.path.basename(path)} returned {rc}")


def tutorial_sections():
    """Return [(section number, [included program paths])] of docs/tutorial.rst, and the text."""
    with open(os.path.join(ROOT, "docs", "tutorial.rst")) as f:
        text = f.read()
    lines = text.splitlines()
    sections, number = [], None
    for i, line in enumerate(lines):
        match = re.match(r"(\d+)\. \S", line)
        if match and i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1]):
            number = int(match.group(1))
            sections.append((number, []))
        include = re.match(r"\.\. literalinclude:: (tutorial/\S+\.py)", line)
        if include:
            assert number is not None, f"{include.group(1)} is included before the first section"
            sections[-1][1].append(os.path.join(ROOT, "docs", include.group(1)))
    return sections, text


def test_tutorial_shows_whole_programs():
    """Copied code must run: whole files (imports included), not only main() (issue 19)."""
    sections, text = tutorial_sections()
    included = sorted(p for _, paths in sections for p in paths)
    assert included == SCRIPTS
    assert ":pyobject:" not in text and ":lines:" not in text


def test_program_step_numbers_match_their_sections():
    """Each program's docstring names the section that includes it (issue 19)."""
    sections, _ = tutorial_sections()
    wrong = []
    for number, paths in sections:
        for path in paths:
            with open(path) as f:
                first = f.readline()
            match = re.match(r'"""Tutorial section (\d+):', first)
            if not match or int(match.group(1)) != number:
                wrong.append(f"{os.path.basename(path)}: {first.strip()!r} is in section {number}")
    assert wrong == []
