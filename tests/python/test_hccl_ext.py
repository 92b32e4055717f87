"""Registered memory and communicators beyond the root info, from Python: symmetric
windows and their bad inputs, memory ranges and activated memory, Comm.split and
create_sub_comm (no MPI involved in them), comm_init_cluster_info (CANN rank tables)
and comm_init_all (one process, several devices)."""
import gc
import json
import os
import shutil
import socket
import tempfile
import threading

import numpy as np
import pytest

import pyhccl
from conftest import DEVICE, RANK, SIZE, WORLD, assert_all
from pyhccl.mpi import comm_from_mpi

G = 2 << 20  # the host runtime's granularity


@pytest.fixture
def vm():
    """A 4-granule reservation with 2 granules of physical memory mapped at its start."""
    res = pyhccl.reserve_mem_address(4 * G)
    phys = pyhccl.malloc_physical(2 * G)
    m = res.map(phys)
    yield res, phys, m
    gc.collect()
    m.unmap()
    phys.free()
    res.release()


def _sync():
    pyhccl.current_stream().synchronize()


# ---- symmetric windows -------------------------------------------------------

def test_collectives_on_a_symmetric_window(world, vm):
    res, phys, m = vm
    win = world.sym_win_register(m)
    assert win.registered and win.ptr == m.ptr and win.size == m.size and "registered" in repr(win)
    for n in (1, 7, 100003):
        send = m.as_array((n,), np.float32)
        recv = m.as_array((n,), np.float32, offset=n * 4)
        send.set(np.arange(n, dtype=np.float32) + RANK)
        world.all_reduce(send, recv)
        gathered = m.as_array((n * SIZE,), np.float32, offset=2 * n * 4)
        world.all_gather(send, gathered)
        world.broadcast(recv, SIZE - 1)
        _sync()
        base = np.arange(n, dtype=np.float32)
        ok = np.array_equal(recv.get(), base * SIZE + SIZE * (SIZE - 1) / 2)
        ok &= np.array_equal(gathered.get(), np.concatenate([base + r for r in range(SIZE)]))
        assert_all(ok, f"collectives on a window, n={n}")
        del send, recv, gathered
    # Registered memory cannot be unmapped (nor freed); after deregistration it can.
    gc.collect()
    with pytest.raises(pyhccl.AclError, match="HCCL registration"):
        m.unmap()
    win.deregister()
    assert not win.registered and win.handle == 0
    win.deregister()  # a second call does nothing


def test_window_bad_inputs_fail_on_every_rank(world, vm):
    res, phys, m = vm
    # Sizes that differ: every rank fails, with the same explanation.
    with pytest.raises(pyhccl.HcclError, match="window sizes differ|1 and hcclSymWinMax") as info:
        world.sym_win_register(m, (G if RANK == 0 else 2 * G) if SIZE > 1 else 0)
    assert info.value.code == 1
    # aclrtMalloc memory is not virtual memory: refused on every rank.
    plain = pyhccl.empty(1024, np.uint8)
    with pytest.raises(pyhccl.HcclError, match="rank 0: addr .* is aclrtMalloc memory"):
        world.sym_win_register(plain if RANK == 0 else m)
    # Overlapping windows.
    with world.sym_win_register(m, G) as w:
        with pytest.raises(pyhccl.HcclError, match="overlaps the window registered"):
            world.sym_win_register(m.ptr + G // 2, G)
        arr = m.as_array((16,), np.int32)
        arr.fill(RANK)
        world.all_reduce(arr)
        _sync()
        assert_all(np.all(arr.get() == SIZE * (SIZE - 1) // 2), "all_reduce after refusals")
        del arr
    assert not w.registered
    with pytest.raises(TypeError, match="size is needed"):
        world.sym_win_register(m.ptr)


def test_window_registered_by_some_ranks_only(vm):
    """The last rank runs an all_reduce instead: every rank fails at once, with a message."""
    res, phys, m = vm
    comm = comm_from_mpi(WORLD)
    try:
        arr = m.as_array((64,), np.float32)
        if SIZE > 1 and RANK == SIZE - 1:
            comm.all_reduce(arr)
            with pytest.raises(pyhccl.HcclError, match="HcclCommSymWinRegister"):
                _sync()
        elif SIZE > 1:
            with pytest.raises(pyhccl.HcclError, match="HcclAllReduce"):
                comm.sym_win_register(m)
        del arr
    finally:
        comm.destroy()


# ---- memory ranges -----------------------------------------------------------

def test_memory_range_and_activated_memory(world, vm):
    res, phys, m = vm
    with pytest.raises(pyhccl.HcclError, match="not inside a memory range"):
        world.activate_comm_memory(m)
    world.set_memory_range(res)
    try:
        with pytest.raises(pyhccl.HcclError, match="overlaps the memory range"):
            world.set_memory_range(res)
        world.activate_comm_memory(m)
        with pytest.raises(pyhccl.HcclError, match="overlaps memory already activated"):
            world.activate_comm_memory(m, G)
        with pytest.raises(pyhccl.AclError, match="in use"):
            m.unmap()
        with pytest.raises(pyhccl.HcclError, match="still activated"):
            world.unset_memory_range(res)
        arr = m.as_array((1000,), np.int64)
        arr.fill(1)
        world.all_reduce(arr)
        _sync()
        assert_all(np.all(arr.get() == SIZE), "all_reduce on activated memory")
        del arr
        world.deactivate_comm_memory(m)
        with pytest.raises(pyhccl.HcclError, match="not memory this communicator activated"):
            world.deactivate_comm_memory(m)
    finally:
        world.unset_memory_range(res)
    with pytest.raises(pyhccl.HcclError, match="no memory range was set"):
        world.unset_memory_range(res)


# ---- sub-communicators -------------------------------------------------------

def _sum_over(comm, value):
    a = np.array([value], np.int64)
    comm.all_reduce(a)
    _sync()
    return int(a[0])


def test_split_by_parity_in_reverse_order(world):
    sub = world.split(RANK % 2, key=-RANK)
    try:
        members = [r for r in range(SIZE) if r % 2 == RANK % 2]
        ok = sub.size == len(members) and sub.rank == sorted(members, reverse=True).index(RANK)
        ok &= _sum_over(sub, RANK) == sum(members)
        ok &= sub.name.startswith(world.name + "_sub_")
        assert_all(ok, "split by parity")
    finally:
        sub.destroy()


def test_split_leaves_out_ranks_without_color(world):
    sub = world.split(None if RANK == 0 else 7)
    try:
        if RANK == 0:
            assert_all(sub is None, "rank 0 has no color")
        else:
            assert_all(sub.size == SIZE - 1 and sub.rank == RANK - 1 and
                       _sum_over(sub, 1) == SIZE - 1, "the others")
    finally:
        if sub is not None:
            sub.destroy()


def test_create_sub_comm_and_bad_calls(world):
    last = SIZE - 1
    members = [last, 0] if SIZE > 1 else [0]
    sub = world.create_sub_comm(members if RANK in members else None, 0x5eed,
                                config={"name": "py-pair"})
    try:
        if RANK in members:
            assert_all(sub.name == "py-pair" and sub.rank == members.index(RANK) and
                       _sum_over(sub, 10 + RANK) == sum(10 + r for r in members), "pair")
        else:
            assert_all(sub is None, "outside the pair")
        with pytest.raises(pyhccl.HcclError, match="already used"):
            world.create_sub_comm(members if RANK in members else None, 0x5eed)
        with pytest.raises(ValueError, match="is not a rank of the communicator"):
            world.create_sub_comm([RANK, SIZE], 1)
        if SIZE > 1:
            with pytest.raises(ValueError, match="not in rank_ids"):
                world.create_sub_comm([r for r in range(SIZE) if r != RANK], 1)
    finally:
        if sub is not None:
            sub.destroy()
    # The parent still works.
    assert_all(_sum_over(world, 1) == SIZE, "parent after the sub-communicators")


# ---- rank tables and one process on several devices --------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_comm_init_cluster_info():
    if RANK == 0:
        where = tempfile.mkdtemp(prefix="pyhccl-rt-")
        port = _free_port()
        doc = {"status": "completed", "version": "1.2", "server_count": "1",
               "server_list": [{"server_id": "node_0", "host_ip": "127.0.0.1",
                                "device": [{"device_id": str(r), "rank_id": str(r),
                                            "super_device_id": str(r),
                                            **({"host_port": str(port)} if r == 0 else {})}
                                           for r in range(SIZE)]}]}
        with open(os.path.join(where, "rank_table.json"), "w") as f:
            json.dump(doc, f)
        with open(os.path.join(where, "bad.json"), "w") as f:
            f.write('{"status": "completed", "version": "1.0", "server_count": "1",\n'
                    ' "server_list": [{"server_id": "a", "device": [{"device_id": "0"}]}]}')
    else:
        where = None
    where = WORLD.bcast(where)
    try:
        path = os.path.join(where, "rank_table.json")
        comm = pyhccl.comm_init_cluster_info(path, RANK, config={"name": "from-table"})
        try:
            assert_all(comm.size == SIZE and comm.rank == RANK and comm.name == "from-table" and
                       _sum_over(comm, RANK + 1) == SIZE * (SIZE + 1) // 2, "rank table comm")
        finally:
            comm.destroy()
        with pytest.raises(pyhccl.HcclError, match=r"server_list\[0\]\.device\[0\]\.rank_id: "
                                                    r"missing \(required\) \(line 2"):
            pyhccl.comm_init_cluster_info(os.path.join(where, "bad.json"), 0)
        with pytest.raises(pyhccl.HcclError, match="cannot read the rank table") as info:
            pyhccl.comm_init_cluster_info(os.path.join(where, "missing.json"), 0)
        assert info.value.code == 10
    finally:
        WORLD.Barrier()
        if RANK == 0:
            shutil.rmtree(where, ignore_errors=True)


def test_comm_init_all_from_threads():
    devices = [(DEVICE + 2 * i) % pyhccl.device_count() for i in range(3)]
    comms = pyhccl.comm_init_all(devices)
    assert [c.rank for c in comms] == [0, 1, 2] and [c.device for c in comms] == devices
    results = [None] * 3

    def rank_thread(i):
        pyhccl.set_device(devices[i])
        s = pyhccl.Stream()
        a = np.array([100 + i], np.int64)
        comms[i].all_reduce(a, stream=s)
        s.synchronize()
        s.destroy()
        results[i] = int(a[0])

    threads = [threading.Thread(target=rank_thread, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    pyhccl.set_device(DEVICE)
    for c in comms:
        c.destroy()
    assert results == [303] * 3
    with pytest.raises(pyhccl.HcclError, match="listed twice"):
        pyhccl.comm_init_all([DEVICE, DEVICE])
