"""Creating pyhccl process groups: registration, rendezvous through torch's Store, subgroups.

The default group meets through the Store torch hands the backend (whatever
the launcher: env://, tcp://, file://): its rank 0 creates the root info and
publishes it, the others read it, and all build one Comm. A subgroup
(new_group, DeviceMesh) is cut from the default group's communicator: its
first rank creates a root info and sends it to the other members over the
parent's connections (one batched send/receive between members only), as
HCCL's own sub-communicators do. torch calls the creator only on the members
of a group, so a call that needs every rank of the parent (HcclCreateSubComm,
split) cannot be used here.
"""

import atexit
import datetime
import math
import os
import weakref
from typing import Any, List, Optional

import numpy as np
import torch.distributed as dist

import pyhccl

from ._backend import ProcessGroupPyhccl
from ._core import BACKEND_NAME, GroupCore, _world, world_group

_ROOT_KEY = "pyhccl/root_info"
# Groups not yet destroyed, released at exit (a script that never calls
# destroy_process_group() still ends at once, and its peers hear of it).
_live: "weakref.WeakSet[ProcessGroupPyhccl]" = weakref.WeakSet()
_JOIN_KEY = "pyhccl/joins"


def _ensure_device() -> None:
    """Bind this process to its device once: LOCAL_RANK's, else device 0."""
    if pyhccl.get_device() is None:
        local = int(os.environ.get("LOCAL_RANK", "0") or 0)
        pyhccl.set_device(local % pyhccl.device_count())


def _config(timeout: Optional[datetime.timedelta]) -> Optional[pyhccl.CommConfig]:
    """init_process_group(timeout=) becomes the communicator's execution timeout."""
    if timeout is None:
        return None
    secs = timeout.total_seconds()
    if secs <= 0:
        return None
    return pyhccl.CommConfig(exec_timeout=max(1, math.ceil(secs)))


def _store_rendezvous(store: Any, rank: int, size: int,
                      config: Optional[pyhccl.CommConfig]) -> pyhccl.Comm:
    """All ranks build one Comm from a root info that rank 0 publishes in the Store."""
    # A store may outlive a group (file://, a re-initialised job): number the rounds.
    joined = store.add(_JOIN_KEY, 1)
    key = f"{_ROOT_KEY}/{(joined - 1) // size}"
    if rank == 0:
        data = bytes(pyhccl.RootInfo.create())
        store.set(key, data)
    else:
        data = bytes(store.get(key))
    comm = pyhccl.Comm(size, data, rank, config)
    if rank == 0:
        try:        # every rank has joined, so every rank has read it
            store.delete_key(key)
        except Exception:       # noqa: BLE001 (a store without delete keeps one key)
            pass
    return comm


def _sub_comm(parent: GroupCore, ranks: List[int], rank: int,
              config: Optional[pyhccl.CommConfig]) -> pyhccl.Comm:
    """A member's Comm of the group `ranks` (global ranks), its root info sent over `parent`."""
    buf = np.empty(pyhccl.ROOT_INFO_BYTES, dtype=np.uint8)
    leader = ranks[0]
    if len(ranks) == 1:
        buf[:] = np.frombuffer(bytes(pyhccl.RootInfo.create()), dtype=np.uint8)
    else:
        if parent._rank == leader:
            buf[:] = np.frombuffer(bytes(pyhccl.RootInfo.create()), dtype=np.uint8)
            items = [("send", buf, r) for r in ranks[1:]]
        else:
            items = [("recv", buf, leader)]
        with parent._lock:
            parent._begin("new_group")
            parent._call("new_group", lambda: parent._comm.batch_send_recv(
                items, stream=parent._stream))
            parent._enq += 1
        parent._sync("new_group", None)
        if parent._failed is not None:
            raise parent._failed
    return pyhccl.Comm(len(ranks), buf.tobytes(), rank, config)


def create_backend(dist_opts: Any, backend_opts: Any = None) -> ProcessGroupPyhccl:
    """The creator torch calls (extended API) on each member of a new group."""
    _ensure_device()
    rank, size = dist_opts.group_rank, dist_opts.group_size
    timeout = dist_opts.timeout
    ranks = list(dist_opts.global_ranks_in_group)
    config = _config(timeout)
    parent = world_group()
    if ranks and parent is not None and not parent._closed and \
            all(0 <= r < parent._size for r in ranks):
        comm = _sub_comm(parent, ranks, rank, config)
    else:
        comm = _store_rendezvous(dist_opts.store, rank, size, config)
    pg = ProcessGroupPyhccl(rank, size, comm, timeout, ranks)
    if not ranks:              # the default group
        _world[:] = [pg]
    _live.add(pg)
    return pg


@atexit.register
def _release_at_exit() -> None:
    for pg in list(_live):
        try:
            pg._release(abort=False)
        except Exception:       # noqa: BLE001 (exiting: nothing left to report to)
            pass


def _create_plain(store: Any, rank: int, size: int,
                  timeout: datetime.timedelta) -> ProcessGroupPyhccl:
    """The creator of torch releases without the extended API (no group ranks)."""
    class _Opts:
        pass
    o = _Opts()
    o.store, o.group_rank, o.group_size, o.timeout = store, rank, size, timeout  # type: ignore[attr-defined]
    o.global_ranks_in_group = []          # type: ignore[attr-defined]
    return create_backend(o)


def register() -> None:
    """Register the backend "pyhccl" with torch.distributed (once; "hccl" is torch_npu's)."""
    if BACKEND_NAME.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    try:
        dist.Backend.register_backend(BACKEND_NAME, create_backend, extended_api=True,
                                      devices=["cpu"])
    except TypeError:           # a torch without the extended API / devices arguments
        dist.Backend.register_backend(BACKEND_NAME, _create_plain)
