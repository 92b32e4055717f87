"""Virtual memory: reservations, physical memory, mappings viewed as DeviceArrays,
their bad inputs, and collectives on mapped memory (world and one-rank communicators)."""

import gc
import time

import numpy as np
import pytest

import pyhccl
from conftest import DEVICE, SIZE, WORLD, all_true, assert_all, comm_with_algo

G = 2 << 20  # the host runtime's granularity


@pytest.fixture
def vm():
    """An 8 MiB reservation with 4 MiB of physical memory mapped at offset 2 MiB."""
    res = pyhccl.reserve_mem_address(4 * G)
    phys = pyhccl.malloc_physical(2 * G)
    m = res.map(phys, offset=G)
    yield res, phys, m
    gc.collect()
    m.unmap()
    phys.free()
    res.release()


def test_granularity():
    g = pyhccl.mem_get_allocation_granularity()
    assert g == G
    assert pyhccl.mem_get_allocation_granularity(recommended=True) >= g
    assert pyhccl.mem_get_allocation_granularity(device=DEVICE) == g
    with pytest.raises(pyhccl.AclError, match="prop->location.id"):
        pyhccl.mem_get_allocation_granularity(device=10 ** 6)


def test_objects_and_properties(vm):
    res, phys, m = vm
    assert res.size == 4 * G and res.ptr % G == 0 and not res.released
    assert phys.size == 2 * G and phys.device == DEVICE and phys.handle != 0 and not phys.freed
    assert m.ptr == res.ptr + G and m.size == phys.size and m.offset == G and m.mapped
    assert m.reservation is res and m.physical is phys
    assert "reserved" in repr(res) and "mapped" in repr(m) and "PhysicalMemory" in repr(phys)


def test_mapped_array_works_like_device_memory(vm, stream):
    _, _, m = vm
    n = m.size // 4
    a = m.as_array((n,), np.float32)
    assert a.ptr == m.ptr and a.nbytes == m.size and a.device == DEVICE
    host = np.arange(n, dtype=np.float32)
    a.set(host)
    np.testing.assert_array_equal(a.get(), host)
    # Async copies on a stream, both ways, and device-to-device with aclrtMalloc memory.
    b = pyhccl.empty(n, np.float32)
    b.copy_from(a, stream=stream)
    a.fill(3, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(b.get(), host)
    assert (a.get() == 3).all()
    # Views, reshapes and an offset view of the same bytes.
    v = m.as_array((4, 8), np.int32, offset=64)
    v.fill(-1)
    raw = m.as_array(dtype=np.int32)
    assert raw.shape == (n,)
    three = np.float32(3).view(np.int32)
    assert (raw.get()[16:48] == -1).all() and raw.get()[15] == three and raw.get()[48] == three
    del a, v, raw


def test_physical_memory_keeps_its_bytes_across_mappings():
    phys = pyhccl.malloc_physical(G)
    with pyhccl.reserve_mem_address(2 * G) as r1, pyhccl.reserve_mem_address(G) as r2:
        with r1.map(phys, offset=G) as m1:
            a = m1.as_array(dtype=np.uint8)
            a.fill(0x5A)
            with r2.map(phys) as m2:          # the same memory at a second address
                b = m2.as_array(dtype=np.uint8)
                assert (b.get() == 0x5A).all()
                del b
            del a
        with r1.map(phys) as m3:
            c = m3.as_array(dtype=np.uint8)
            assert (c.get() == 0x5A).all()
            del c
    phys.free()
    assert phys.freed and phys.handle == 0


def test_bad_arguments():
    with pytest.raises(TypeError, match="malloc_physical: size must be an int"):
        pyhccl.malloc_physical(2.0 * G)
    with pytest.raises(ValueError, match="malloc_physical: size must be positive"):
        pyhccl.malloc_physical(0)
    with pytest.raises(pyhccl.AclError, match="not a multiple of the allocation granularity"):
        pyhccl.malloc_physical(G + 4096)
    with pytest.raises(ValueError, match="reserve_mem_address: size must be positive"):
        pyhccl.reserve_mem_address(-1)
    with pytest.raises(pyhccl.AclError, match="alignment"):
        pyhccl.reserve_mem_address(G, alignment=3)
    with pytest.raises(pyhccl.AclError, match="flags"):
        pyhccl.reserve_mem_address(G, flags=2)
    with pytest.raises(ValueError, match="reserve_mem_address: alignment must be >= 0"):
        pyhccl.reserve_mem_address(G, alignment=-1)
    with pytest.raises(TypeError):
        pyhccl.map_mem(None, pyhccl.malloc_physical(G))


def test_bad_maps(vm):
    res, phys, m = vm
    other = pyhccl.malloc_physical(G)
    try:
        with pytest.raises(pyhccl.AclError, match="aclrtMapMem: .*overlaps the mapping"):
            res.map(other, offset=2 * G)              # inside the existing mapping
        with pytest.raises(pyhccl.AclError, match="aclrtMapMem: virPtr .* is not aligned"):
            res.map(other, offset=4096)
        with pytest.raises(pyhccl.AclError, match="runs past the end of its reservation"):
            res.map(phys, offset=3 * G)
        with pytest.raises(ValueError, match="map_mem: offset must be >= 0"):
            res.map(other, offset=-G)
        # Freeing or releasing what is still mapped is refused, and nothing changes.
        with pytest.raises(pyhccl.AclError, match="aclrtFreePhysical: .*still mapped"):
            phys.free()
        with pytest.raises(pyhccl.AclError, match="aclrtReleaseMemAddress: .*still has 1 mapping"):
            res.release()
        assert not phys.freed and not res.released and m.mapped
        m2 = pyhccl.map_mem(res, other)               # the free slot at offset 0
        pyhccl.unmap_mem(m2)
        pyhccl.unmap_mem(m2)                          # a second unmap does nothing
        with pytest.raises(ValueError, match="as_array: the memory is unmapped"):
            m2.as_array()
    finally:
        pyhccl.free_physical(other)
    with pytest.raises(ValueError, match="map_mem: the physical memory is freed"):
        res.map(other)
    with pytest.raises(ValueError, match="as_array: shape"):
        m.as_array((m.size,), np.float32)
    with pytest.raises(ValueError, match="as_array: offset"):
        m.as_array(offset=m.size + 1)


def test_unmap_memory_in_use(vm, stream):
    res, _, m = vm
    a = m.as_array(dtype=np.float32)
    with pytest.raises(BufferError, match="unmap_mem: 1 DeviceArray"):
        m.unmap()
    # Work queued on a stream keeps its arrays, so the mapping stays in use
    # until the stream is synchronised.
    stream.launch_host_func(time.sleep, 0.2)
    a.fill(1, stream=stream)
    del a
    with pytest.raises(BufferError, match="unmap_mem"):
        m.unmap()
    stream.synchronize()
    gc.collect()
    # A zero-copy DLPack export (host runtime) keeps its array, and so the mapping, in use.
    exported = np.from_dlpack(m.as_array(dtype=np.float32))
    with pytest.raises(BufferError, match="unmap_mem"):
        m.unmap()
    assert (exported == 1).all()
    del exported
    gc.collect()
    m.unmap()
    assert not m.mapped
    m.unmap()
    # Remapped later, the memory is usable again (the fixture unmaps the new mapping).
    m2 = res.map(m.physical, offset=G)
    m2.as_array(dtype=np.uint8).fill(0)


def test_released_and_freed_objects_are_refused():
    res = pyhccl.reserve_mem_address(G)
    pyhccl.release_mem_address(res)
    res.release()                                     # idempotent
    assert res.released
    with pytest.raises(ValueError, match="map_mem: the address reservation is released"):
        res.map(pyhccl.malloc_physical(G))
    # expect_ptr: the freed range can be reserved again at the same address.
    again = pyhccl.reserve_mem_address(G, expect_ptr=res.ptr)
    assert again.ptr == res.ptr
    with pytest.raises(pyhccl.AclError, match="in use"):
        pyhccl.reserve_mem_address(G, expect_ptr=again.ptr)
    again.release()


def test_garbage_collection_releases_everything():
    res = pyhccl.reserve_mem_address(2 * G)
    ptr = res.ptr
    m = res.map(pyhccl.malloc_physical(G))
    a = m.as_array(dtype=np.uint8)
    del res, m                                        # the array keeps all three alive
    a.fill(7)
    assert (a.get() == 7).all()
    del a
    gc.collect()
    # Unmapped, freed and released: the address can be reserved again.
    again = pyhccl.reserve_mem_address(2 * G, expect_ptr=ptr)
    again.release()


@pytest.mark.mpi
@pytest.mark.parametrize("n", [1, 7, 1 << 20])
def test_collectives_on_mapped_memory(pair, n):
    comm, mpi = pair
    rank, size = mpi.Get_rank(), mpi.Get_size()
    nbytes = n * 4 * (size + 1)
    phys_size = -(-nbytes // G) * G
    with pyhccl.reserve_mem_address(phys_size) as res, pyhccl.malloc_physical(phys_size) as phys:
        with res.map(phys) as m:
            a = m.as_array((n,), np.float32)
            a.set(np.arange(n, dtype=np.float32) + rank)
            comm.all_reduce(a, op=pyhccl.SUM)         # in place
            # all_gather within the same mapping (send and recv share one file)
            g = m.as_array((size * n,), np.float32, offset=n * 4)
            comm.all_gather(a, g)
            comm.broadcast(a, root=size - 1)
            pyhccl.default_stream().synchronize()
            expect = np.arange(n, dtype=np.float32) * size + sum(range(size))
            ok = np.array_equal(a.get(), expect) and np.array_equal(g.get(), np.tile(expect, size))
            del a, g
    assert_all(ok, "collective result on mapped memory")


@pytest.mark.mpi
def test_forced_single_copy_on_mapped_memory():
    # Peers read this rank's mapped memory directly (the single-copy path).
    comm = comm_with_algo("allreduce:single,allgather:single")
    try:
        n = 1 << 20
        size = -(-(SIZE + 1) * n * 4 // G) * G
        with pyhccl.reserve_mem_address(size) as res, pyhccl.malloc_physical(size) as phys:
            with res.map(phys) as m:
                a = m.as_array((n,), np.float32)
                g = m.as_array((SIZE * n,), np.float32, offset=4 * n)
                a.set(np.full(n, WORLD.rank + 1, np.float32))
                comm.all_reduce(a, op=pyhccl.SUM)
                comm.all_gather(a, g)
                pyhccl.default_stream().synchronize()
                total = SIZE * (SIZE + 1) // 2
                ok = (a.get() == total).all() and (g.get() == total).all()
                del a, g
        assert_all(ok, "single-copy collective on mapped memory")
    finally:
        comm.destroy()


@pytest.mark.mpi
@pytest.mark.skipif(SIZE == 1, reason="needs peers")
def test_single_copy_after_physical_memory_is_replaced():
    """A freed physical handle's fd number names a new file: peers map the new one (by inode)."""
    comm = comm_with_algo("allreduce:single")
    oks = []
    try:
        n = 1 << 18
        for it in range(3):
            with pyhccl.reserve_mem_address(2 * G) as res, pyhccl.malloc_physical(2 * G) as phys:
                with res.map(phys) as m:
                    a = m.as_array((n,), np.float32)
                    a.set(np.full(n, WORLD.rank + it, np.float32))
                    comm.all_reduce(a, op=pyhccl.SUM)
                    pyhccl.default_stream().synchronize()
                    oks.append(bool((a.get() == SIZE * it + SIZE * (SIZE - 1) // 2).all()))
                    del a
    finally:
        comm.destroy()
    assert all_true(all(oks)), "stale peer mapping of a replaced physical handle"
