"""The tutorial's programs (docs/tutorial/*.py) run and check their own results, at every
rank count, in this process (each builds its own communicator over MPI.COMM_WORLD)."""

import glob
import importlib.util
import os

import pytest

from conftest import assert_all

pytestmark = pytest.mark.mpi

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
