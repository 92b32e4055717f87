"""pyhccl helpers the examples share: start-up, weight broadcast, verdicts.

After start-up every wait goes through pyhccl, whose waits sleep, rather
than through MPI, whose blocking calls may poll a core while rank 0 alone
works (a reference run, a checkpoint load).
"""
import os

import numpy as np

import pyhccl

from .data import Corpus
from .model import Config
from .trainer import Settings, flatten, load_checkpoint, reference_run, unflatten

DEFAULT_CHECKPOINT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                  "out", "tinygpt.npz")


def start():
    """Return (pyhccl Comm over MPI.COMM_WORLD, a new stream on its device)."""
    from mpi4py import MPI
    from pyhccl.mpi import comm_from_mpi
    comm = comm_from_mpi(MPI.COMM_WORLD)
    return comm, pyhccl.Stream()


def log0(comm, *args, **kwargs):
    """Print on rank 0 only, flushed at once (progress lines of a job)."""
    if comm.rank == 0:
        print(*args, **kwargs, flush=True)


def on_device(stream, host, collective):
    """Copy `host` to a device buffer, run collective(buffer) on `stream`, return the result on the host."""
    dev = pyhccl.asarray(np.ascontiguousarray(host), stream=stream)
    collective(dev)
    out = dev.get(stream=stream)
    stream.synchronize()
    return out


def broadcast_array(comm, stream, array, dtype, root=0):
    """Return `array` (given on root, None elsewhere) on every rank: its length, then its values."""
    mine = comm.rank == root
    n = on_device(stream, np.array([array.size if mine else 0], np.int64),
                  lambda d: comm.broadcast(d, root, stream=stream))
    host = np.asarray(array, dtype).ravel() if mine else np.empty(int(n[0]), dtype)
    return on_device(stream, host, lambda d: comm.broadcast(d, root, stream=stream))


def broadcast_params(comm, stream, params=None, cfg=None, root=0):
    """Return (params, cfg) on every rank, from `root`'s (config first, then one flat vector)."""
    mine = comm.rank == root
    cfg = Config.from_array(broadcast_array(comm, stream, cfg.to_array() if mine else None, np.int64, root))
    vector = broadcast_array(comm, stream, flatten(params, cfg) if mine else None, np.float64, root)
    return unflatten(vector, cfg), cfg


def load_on_root(comm, path, steps, root=0):
    """Return (params, cfg) on root, (None, None) elsewhere: root loads `path`, or trains `steps` steps."""
    if comm.rank != root:
        return None, None
    if os.path.exists(path):
        params, cfg, meta = load_checkpoint(path)
        print(f"loaded {path} (trained {meta.get('steps', '?')} steps, "
              f"validation loss {meta.get('val_loss', float('nan')):.3f})", flush=True)
        return params, cfg
    print(f"no checkpoint at {path}: training {steps} steps in one process first "
          "(run examples/train.py to make one)", flush=True)
    return reference_run(Config(), Corpus(), Settings(steps=steps)), Config()


def load_or_train(comm, stream, path, steps):
    """Return (params, cfg) on every rank: rank 0 loads or trains them (load_on_root) and broadcasts."""
    params, cfg = load_on_root(comm, path, steps)
    return broadcast_params(comm, stream, params, cfg)


def all_agree(comm, stream, ok):
    """Return True on every rank if `ok` holds on every rank (an AllReduce of the verdicts)."""
    flag = on_device(stream, np.array([1 if ok else 0], np.int32),
                     lambda d: comm.all_reduce(d, op=pyhccl.MIN, stream=stream))
    return bool(flag[0])


def from_root(comm, stream, value, root=0):
    """Return root's float `value` on every rank (a broadcast of one number)."""
    buf = on_device(stream, np.array([value if comm.rank == root else 0.0], np.float64),
                    lambda d: comm.broadcast(d, root, stream=stream))
    return float(buf[0])
