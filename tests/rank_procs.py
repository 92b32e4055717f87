"""Ranks as plain processes, without MPI, for tests that need their own job (a fault, an
environment of their own): the program's root_info(path, rank) hands rank 0's root info
over in a file. Started from the first rank of the pytest run only."""
import os
import subprocess
import sys
import textwrap

JOIN = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import pyhccl

    def root_info(path, rank):
        if rank == 0:
            info = pyhccl.RootInfo.create()
            open(path + ".tmp", "wb").write(bytes(info))
            os.rename(path + ".tmp", path)
            return info
        while not os.path.exists(path):
            time.sleep(0.01)
        return pyhccl.RootInfo.from_bytes(open(path, "rb").read())
""")


def run_ranks(tmp_path, program, nranks, env=None, timeout=60, rank_env=None):
    """Run JOIN + `program` as ranks 0..nranks-1 (argv: rank, root info path), with this
    environment less MPI's and PYHCCL_'s, plus `env` and rank r's `rank_env[r]`; return
    their outputs."""
    script = tmp_path / "prog.py"
    script.write_text(JOIN + textwrap.dedent(program))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYHCCL_"))}
    base.update(env or {})
    procs = [subprocess.Popen([sys.executable, str(script), str(r), str(tmp_path / "root")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**base, **(rank_env or {}).get(r, {})})
             for r in range(nranks)]
    try:
        return [p.communicate(timeout=timeout)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
