"""The layers of csrc/hccl point down only (issue 18): an #include may name a file of
its own folder, of a layer below, or of a peer of the same rank, never one above.
A new folder under csrc/hccl must be placed in LAYERS first."""

import re
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.once      # a static check: no MPI needed

HCCL = ROOT / "csrc" / "hccl"

# Rank of each folder of csrc/hccl, highest first. What is not a folder here
# (runtime/, common/, acl/, the public include/hccl/*.h and csrc/hccl's own
# fail.h and codes.h) is the base, rank 0, which every layer may include.
LAYERS = {
    "tdt": 7,        # acltdt entry points, over launch's rendezvous
    "launch": 6,     # PyhcclRendezvous entry points, over api/checks.h
    "api": 5,        # HCCL entry points: build, check and enqueue requests
    "ranktable": 5,  # HcclCommInitClusterInfo: rank tables into comm_init
    "comm": 4,       # communicators, their op order, groups, windows
    "algo": 3,       # algorithms of each collective
    "op": 2,         # what an operation is (specs, OpDesc)
    "transport": 2,  # moving bytes between ranks
    "bootstrap": 2,  # set-up rendezvous and out-of-band exchanges
    "net": 1,        # sockets, addresses, interfaces
    "reduce": 1,     # reduction kernels
}

# Upward edges tolerated for now: none (algo/ reached into comm/ until issue 18).
ALLOWED_UP: set = set()

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of_include(name):
    """The layer folder an include names, or None for the base."""
    parts = name.split("/")
    if parts[0] == "hccl" and len(parts) > 2:
        return parts[1]
    return None


def includes():
    for path in sorted(HCCL.rglob("*")):
        if path.suffix in (".h", ".cc"):
            rel = path.relative_to(HCCL).as_posix()
            for inc in INCLUDE.findall(path.read_text()):
                yield rel, inc


def test_every_folder_has_a_layer():
    folders = {p.name for p in HCCL.iterdir() if p.is_dir()}
    missing = sorted(folders - set(LAYERS))
    assert not missing, f"csrc/hccl folders missing from LAYERS in {__file__}: {missing}"


def points_up(rel, inc):
    """True when file `rel` (relative to csrc/hccl) including `inc` reaches a higher layer."""
    src = rel.split("/")[0] if "/" in rel else None  # csrc/hccl/fail.h: the base
    dst = layer_of_include(inc)
    if dst is None or dst == src:
        return False
    assert dst in LAYERS, f"{rel} includes {inc}: folder {dst} is not in LAYERS"
    return LAYERS[dst] > LAYERS.get(src, 0)


def test_includes_point_down():
    up, stale = [], set(ALLOWED_UP)
    for rel, inc in includes():
        if not points_up(rel, inc):
            continue
        if (rel, inc) in ALLOWED_UP:
            stale.discard((rel, inc))
            continue
        up.append(f"csrc/hccl/{rel}: #include \"{inc}\"")
    assert not up, "includes pointing up the layers (see LAYERS):\n" + "\n".join(up)
    # An allowed edge that is gone leaves the list, so that it cannot come back unseen.
    assert not stale, f"ALLOWED_UP edges no longer present, remove them: {sorted(stale)}"


def test_the_walk_sees_includes_and_flags_upward_ones():
    found = set(includes())
    assert ("api/request.cc", "hccl/comm/enqueue.h") in found and len(found) > 300
    assert points_up("comm/host_call.cc", "hccl/api/enqueue.h")          # the edge issue 18 found
    assert points_up("transport/tcp/setup.cc", "hccl/algo/ctx.h")
    assert not points_up("api/request.cc", "hccl/comm/enqueue.h")
    assert not points_up("comm/exec.cc", "runtime/hostrt.h")
    assert not points_up("algo/tree.cc", "hccl/fail.h")
    assert points_up("fail.h", "hccl/reduce/reduce.h")
