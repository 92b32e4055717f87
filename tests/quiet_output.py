"""What ranks other than 0 print in a multi-rank pytest run (tests/conftest.py under MPI,
tests/torch_backend/conftest.py under torchrun or MPI): nothing, but a timeout's report
(pytest-timeout writes a "+++ Timeout +++" section, then kills the process) goes to
stderr so that a hang on any rank is explained. No MPI or torch import here."""
import sys


class QuietFile:
    """A file for pytest's TerminalWriter on rank `rank`."""

    def __init__(self, rank):
        self._rank = rank
        self._through = False

    def write(self, text):
        if not self._through and "Timeout" in text and "++++" in text:
            self._through = True
            sys.stderr.write(f"\n[rank {self._rank}] ")
        if self._through:
            sys.stderr.write(text)
        return len(text)

    def flush(self):
        if self._through:
            sys.stderr.flush()

    def isatty(self):
        return False
