"""INT128, HIF8 and the FP8 types in the data-movement collectives, from Python.

They move as raw bytes: a uint8 array with dtype=pyhccl.INT128 (16-byte elements) or
dtype=pyhccl.FP8E4M3 works everywhere; with ml_dtypes installed its float8 arrays are
recognised by themselves (host arrays and DeviceArrays). Every byte pattern is used.
Reductions of these types fail with HCCL_E_NOT_SUPPORT, as on CANN.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import pyhccl
from conftest import RANK, SIZE, assert_all

MOVED = [pyhccl.INT128, pyhccl.HIF8, pyhccl.FP8E4M3, pyhccl.FP8E5M2, pyhccl.FP8E8M0]
COUNTS = [0, 1, 7, 1001]


def pattern(rank, n, dt, tag):
    """n elements of dt (as uint8 bytes) that rank `rank` owns."""
    nbytes = n * dt.itemsize
    return ((np.arange(nbytes, dtype=np.uint64) * 131 + rank * 29 + tag * 53 + 1) % 256).astype(np.uint8)


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("dt", MOVED, ids=lambda d: d.name)
def test_all_gather(pair, dt, in_place):
    comm = pair.hccl
    for n in COUNTS:
        recv = np.zeros(n * dt.itemsize * comm.size, np.uint8)
        block = slice(comm.rank * n * dt.itemsize, (comm.rank + 1) * n * dt.itemsize)
        if in_place:
            recv[block] = pattern(comm.rank, n, dt, 1)
            send = recv[block]
        else:
            send = pattern(comm.rank, n, dt, 1)
        comm.all_gather(send, recv, dtype=dt)
        pyhccl.current_stream().synchronize()
        want = np.concatenate([pattern(r, n, dt, 1) for r in range(comm.size)])
        assert_all(np.array_equal(recv, want), f"all_gather {dt.name} n={n}")


@pytest.mark.parametrize("dt", MOVED, ids=lambda d: d.name)
def test_broadcast_scatter_all_to_all(pair, dt):
    comm = pair.hccl
    size, rank, es = comm.size, comm.rank, dt.itemsize
    for i, n in enumerate(COUNTS):
        root = i % size
        buf = pattern(root, n, dt, 2) if rank == root else np.zeros(n * es, np.uint8)
        comm.broadcast(buf, root, dtype=dt)
        whole = pattern(root, n * size, dt, 3)
        part = np.zeros(n * es, np.uint8)
        comm.scatter(whole if rank == root else None, part, root, dtype=dt)
        send = pattern(rank, n * size, dt, 4)
        recv = np.zeros(n * es * size, np.uint8)
        comm.all_to_all(send, recv, dtype=dt)
        pyhccl.current_stream().synchronize()
        ok = np.array_equal(buf, pattern(root, n, dt, 2))
        ok &= np.array_equal(part, whole[rank * n * es:(rank + 1) * n * es])
        want = np.concatenate([pattern(p, n * size, dt, 4)[rank * n * es:(rank + 1) * n * es]
                               for p in range(size)])
        ok &= np.array_equal(recv, want)
        assert_all(ok, f"broadcast/scatter/all_to_all {dt.name} n={n}")


@pytest.mark.parametrize("dt", MOVED, ids=lambda d: d.name)
def test_send_recv_ring(world, dt):
    nxt, prv = (RANK + 1) % SIZE, (RANK - 1) % SIZE
    for n in COUNTS:
        send = pattern(RANK, n, dt, 5)
        recv = np.zeros(n * dt.itemsize, np.uint8)
        with pyhccl.group():
            world.send(send, nxt, dtype=dt)
            world.recv(recv, prv, dtype=dt)
        pyhccl.current_stream().synchronize()
        assert_all(np.array_equal(recv, pattern(prv, n, dt, 5)), f"send/recv {dt.name} n={n}")


@pytest.mark.parametrize("dt", MOVED, ids=lambda d: d.name)
def test_reductions_are_refused(self_comm, dt):
    buf = np.zeros(4 * dt.itemsize, np.uint8)
    for call in (lambda: self_comm.all_reduce(buf, dtype=dt, op="max"),
                 lambda: self_comm.reduce(buf, dtype=dt),
                 lambda: self_comm.reduce_scatter(buf, buf[:4 * dt.itemsize], dtype=dt)):
        with pytest.raises(pyhccl.HcclError) as info:
            call()
        assert info.value.code == 5 and "CANN" in str(info.value)


def test_int128_needs_whole_elements(self_comm):
    with pytest.raises(ValueError, match="whole number of INT128 elements"):
        self_comm.broadcast(np.zeros(17, np.uint8), dtype=pyhccl.INT128)


def test_names_of_the_types():
    assert pyhccl.as_datatype("float8_e4m3fn") == pyhccl.FP8E4M3
    assert pyhccl.as_datatype("float8_e5m2") == pyhccl.FP8E5M2
    assert pyhccl.as_datatype("float8_e8m0fnu") == pyhccl.FP8E8M0
    assert pyhccl.as_datatype("hifloat8") == pyhccl.HIF8
    assert pyhccl.as_datatype("int128") == pyhccl.INT128


# ---- with ml_dtypes -----------------------------------------------------------

ML_FP8 = [("float8_e4m3fn", pyhccl.FP8E4M3), ("float8_e5m2", pyhccl.FP8E5M2),
          ("float8_e8m0fnu", pyhccl.FP8E8M0)]


@pytest.mark.parametrize("name,dt", ML_FP8, ids=[n for n, _ in ML_FP8])
def test_ml_dtypes_float8_arrays(pair, name, dt):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    comm = pair.hccl
    npdt = np.dtype(getattr(ml_dtypes, name))
    assert pyhccl.as_datatype(npdt) == dt
    n = 13
    mine = pattern(comm.rank, n, dt, 6).view(npdt)
    # A host array, gathered into a DeviceArray of the same type.
    out = pyhccl.empty(n * comm.size, npdt)
    assert out.dtype == npdt
    comm.all_gather(mine, out)
    # And back: a DeviceArray broadcast, read on the host.
    dev = pyhccl.array(mine)
    comm.broadcast(dev, 0)
    pyhccl.current_stream().synchronize()
    want = np.concatenate([pattern(r, n, dt, 6) for r in range(comm.size)])
    ok = np.array_equal(out.get().view(np.uint8), want)
    ok &= np.array_equal(dev.get().view(np.uint8), pattern(0, n, dt, 6))
    assert_all(ok, f"ml_dtypes {name}")
    with pytest.raises(pyhccl.HcclError, match="CANN"):
        comm.all_reduce(mine.copy())


def test_without_ml_dtypes_uint8_with_dtype_still_works(tmp_path):
    """Where ml_dtypes cannot be imported, FP8 moves as uint8 with dtype= and as DeviceArrays
    of pyhccl's tagged uint8 stand-ins."""
    blocker = tmp_path / "ml_dtypes"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('ml_dtypes is blocked for this test')\n")
    code = (
        "import numpy as np, pyhccl\n"
        "from pyhccl import RootInfo, Comm\n"
        "assert not pyhccl._core._HAVE_ML_DTYPES\n"
        "pyhccl.set_device(0)\n"
        "c = Comm(1, RootInfo.create(), 0)\n"
        "a = np.arange(64, dtype=np.uint8); b = np.zeros(64, np.uint8)\n"
        "c.all_gather(a, b, dtype=pyhccl.FP8E4M3); pyhccl.current_stream().synchronize()\n"
        "assert np.array_equal(a, b)\n"
        "d = pyhccl.zeros(8, pyhccl.FP8E4M3)\n"            # tagged uint8 stand-ins
        "assert d.hccl_dtype == pyhccl.FP8E4M3 and d.itemsize == 1\n"
        "g = pyhccl.empty(8, pyhccl.FP8E4M3)\n"
        "c.all_gather(d, g); pyhccl.current_stream().synchronize()\n"
        "assert not g.get().any()\n"
        "c.destroy(); print('ok')\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "PMIX_", "OMPI_", "MPI_", "HYDRA"))}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
