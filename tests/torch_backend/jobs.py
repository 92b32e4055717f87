"""Small torch.distributed jobs of their own, started as plain processes (tests marked solo)."""

import os
import socket
import subprocess
import sys
import textwrap
import time

HEADER = """
import datetime, os, sys, time, signal
import torch, torch.distributed as dist
import pyhccl.torch
rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
def say(*a):
    print(f"[rank {rank}]", *a, flush=True)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    """`n` processes running `body` (after HEADER), with torch's env:// variables set."""

    def __init__(self, body, n=2, env=None):
        port = free_port()
        code = HEADER + textwrap.dedent(body)
        self.procs = []
        for r in range(n):
            # Not the launcher of this suite's own job (torchrun's agent store, MPI's PMI).
            e = {k: v for k, v in os.environ.items()
                 if not k.startswith(("TORCHELASTIC_", "PMI_", "PMIX_", "OMPI_", "MPI_",
                                      "HYDRA_", "SLURM_"))}
            e.update(RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r),
                     LOCAL_WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                     HCCL_CONNECT_TIMEOUT="30", HCCL_EXEC_TIMEOUT="30",
                     PYTHONUNBUFFERED="1")
            e.update(env or {})
            self.procs.append(subprocess.Popen([sys.executable, "-c", code], env=e,
                                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                               text=True))

    def finish(self, timeout=60, upto=None):
        """Wait for the processes (killing stragglers); return [(returncode, output)].

        upto: wait only for ranks below it, then kill the others (ranks that sleep
        to play a missing peer).
        """
        deadline = time.monotonic() + timeout
        out = []
        for r, p in enumerate(self.procs):
            if upto is not None and r >= upto:
                deadline = 0
            try:
                text, _ = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                text, _ = p.communicate()
                text += "\n<killed: the job did not end in time>"
            out.append((p.returncode, text))
        return out
