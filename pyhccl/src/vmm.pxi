# Virtual memory: address reservations, physical memory, and mappings of one
# into the other (aclrtReserveMemAddress, aclrtMallocPhysical, aclrtMapMem and
# their inverses). A mapping can be viewed as a DeviceArray, which keeps it
# (and so its reservation and physical memory) alive.


cdef size_t _vmm_size(object size, str api, str what) except 0:
    try:
        n = operator.index(size)
    except TypeError:
        raise TypeError(f"{api}: {what} must be an int, not {type(size).__name__}") from None
    if n <= 0:
        raise ValueError(f"{api}: {what} must be positive, not {n}")
    return n


cdef size_t _vmm_uint(object value, str api, str what) except? 0:
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{api}: {what} must be an int, not {type(value).__name__}") from None
    if n < 0:
        raise ValueError(f"{api}: {what} must be >= 0, not {n}")
    return n


cdef aclrtPhysicalMemProp _device_prop(int32_t device):
    cdef aclrtPhysicalMemProp prop
    memset(&prop, 0, sizeof(prop))
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED
    prop.memAttr = ACL_HBM_MEM_HUGE
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = <uint32_t>device
    return prop


cdef int32_t _vmm_device(object device, str api) except -1:
    if device is None:
        return _current_device()
    _ensure_init()
    return _check_device_id(device, api)


def mem_get_allocation_granularity(recommended=False, device=None):
    """Return the granularity of physical memory in bytes (aclrtMemGetAllocationGranularity).

    Sizes of PhysicalMemory and addresses of mappings are multiples of it.

    Args:
        recommended: the recommended granularity instead of the minimum one.
        device: device id (None: the current device).
    """
    cdef aclrtPhysicalMemProp prop = _device_prop(_vmm_device(device, "mem_get_allocation_granularity"))
    cdef aclrtMemGranularityOptions option = (ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED
                                              if recommended else
                                              ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM)
    cdef size_t granularity = 0
    with nogil:
        CHKACL(aclrtMemGetAllocationGranularity(&prop, option, &granularity),
               "aclrtMemGetAllocationGranularity")
    return granularity


cdef class PhysicalMemory:
    """Physical device memory (aclrtMallocPhysical), given addresses by AddressReservation.map().

    PhysicalMemory(size, device=None) allocates `size` bytes, a multiple of
    mem_get_allocation_granularity(), on `device` (None: the current device).
    free() releases it (aclrtFreePhysical); so does garbage collection once
    no mapping uses it. Also a context manager that frees on exit.
    """

    cdef aclrtDrvMemHandle _handle
    cdef size_t _size
    cdef int32_t _device
    cdef int _generation
    cdef bint _freed
    cdef object __weakref__

    def __cinit__(self, size, device=None):
        cdef size_t n = _vmm_size(size, "malloc_physical", "size")
        cdef int32_t dev = _vmm_device(device, "malloc_physical")
        cdef aclrtPhysicalMemProp prop = _device_prop(dev)
        cdef aclrtDrvMemHandle handle = NULL
        self._freed = True
        with nogil:
            CHKACL(aclrtMallocPhysical(&handle, n, &prop, 0), "aclrtMallocPhysical")
        self._handle = handle
        self._size = n
        self._device = dev
        self._generation = _generation
        self._freed = False

    def __dealloc__(self):
        cdef aclrtDrvMemHandle handle = self._handle
        if self._freed or handle == NULL or not _initialized or self._generation != _generation:
            return
        self._freed = True
        with nogil:
            aclrtFreePhysical(handle)

    @property
    def handle(self):
        """The aclrtDrvMemHandle as an int (0 once freed)."""
        return 0 if self._freed else <uintptr_t>self._handle

    @property
    def size(self):
        """Size in bytes."""
        return self._size

    @property
    def device(self):
        """Device id the memory was allocated on."""
        return self._device

    @property
    def freed(self):
        """True once free() has run."""
        return self._freed

    def __repr__(self):
        state = "freed" if self._freed else f"handle=0x{<uintptr_t>self._handle:x}"
        return f"PhysicalMemory(size={self._size}, device={self._device}, {state})"

    cdef int _check(self, str api) except -1:
        if self._freed:
            raise ValueError(f"{api}: the physical memory is freed")
        return 0

    def free(self):
        """Release the memory (aclrtFreePhysical); nothing if already freed.

        Raises:
            AclError: it is still mapped (unmap every mapping of it first).
        """
        if self._freed:
            return
        with nogil:
            CHKACL(aclrtFreePhysical(self._handle), "aclrtFreePhysical")
        self._freed = True

    def __enter__(self):
        self._check("__enter__")
        return self

    def __exit__(self, *exc):
        self.free()
        return False


cdef class AddressReservation:
    """A range of device addresses (aclrtReserveMemAddress) with no memory until mapped.

    AddressReservation(size, alignment=0, flags=0, expect_ptr=None) reserves
    `size` bytes. map() places PhysicalMemory in it; addresses with nothing
    mapped are no memory (copies into them raise AclError). release() gives
    the range back (aclrtReleaseMemAddress); so does garbage collection once
    no mapping uses it. Also a context manager that releases on exit.

    Args:
        size: bytes to reserve.
        alignment: 0 (the granularity) or a larger power of two.
        flags: 0 (normal pages) or 1 (huge pages).
        expect_ptr: an address (int) to reserve at, or None for any.
    """

    cdef void *_ptr
    cdef size_t _size
    cdef int _generation
    cdef bint _released
    cdef object __weakref__

    def __cinit__(self, size, alignment=0, flags=0, expect_ptr=None):
        cdef size_t n = _vmm_size(size, "reserve_mem_address", "size")
        cdef size_t align = _vmm_uint(alignment, "reserve_mem_address", "alignment")
        cdef uint64_t flg = _vmm_uint(flags, "reserve_mem_address", "flags")
        cdef void *expect = NULL
        cdef void *ptr = NULL
        self._released = True
        if expect_ptr is not None:
            expect = <void *><uintptr_t>_vmm_uint(expect_ptr, "reserve_mem_address", "expect_ptr")
        _ensure_init()
        with nogil:
            CHKACL(aclrtReserveMemAddress(&ptr, n, align, expect, flg), "aclrtReserveMemAddress")
        self._ptr = ptr
        self._size = n
        self._generation = _generation
        self._released = False

    def __dealloc__(self):
        cdef void *ptr = self._ptr
        if self._released or ptr == NULL or not _initialized or self._generation != _generation:
            return
        self._released = True
        with nogil:
            aclrtReleaseMemAddress(ptr)

    @property
    def ptr(self):
        """Start address of the range, as an int."""
        return <uintptr_t>self._ptr

    @property
    def size(self):
        """Size of the range in bytes."""
        return self._size

    @property
    def released(self):
        """True once release() has run."""
        return self._released

    def __repr__(self):
        state = "released" if self._released else "reserved"
        return f"AddressReservation(ptr=0x{<uintptr_t>self._ptr:x}, size={self._size}, {state})"

    cdef int _check(self, str api) except -1:
        if self._released:
            raise ValueError(f"{api}: the address reservation is released")
        return 0

    def map(self, PhysicalMemory physical not None, offset=0):
        """Map all of `physical` at ptr + offset (aclrtMapMem) and return the MemMapping.

        Args:
            physical: the memory to map (it stays alive while mapped).
            offset: bytes from the start of the range, a multiple of the granularity.

        Raises:
            AclError: misaligned, past the end of the range, or overlapping
                another mapping.
        """
        cdef MemMapping m
        cdef size_t off
        cdef char *at
        self._check("map_mem")
        physical._check("map_mem")
        off = _vmm_uint(offset, "map_mem", "offset")
        at = <char *>self._ptr + off
        with nogil:
            CHKACL(aclrtMapMem(at, physical._size, 0, physical._handle, 0), "aclrtMapMem")
        m = MemMapping.__new__(MemMapping)
        m._ptr = at
        m._size = physical._size
        m._offset = off
        m._reservation = self
        m._physical = physical
        m._generation = _generation
        m._unmapped = False
        return m

    def release(self):
        """Give the range back (aclrtReleaseMemAddress); nothing if already released.

        Raises:
            AclError: something is still mapped in it (unmap it first).
        """
        if self._released:
            return
        with nogil:
            CHKACL(aclrtReleaseMemAddress(self._ptr), "aclrtReleaseMemAddress")
        self._released = True

    def __enter__(self):
        self._check("__enter__")
        return self

    def __exit__(self, *exc):
        self.release()
        return False


cdef class _MappedMemory(_Memory):
    """Device memory of a mapping, seen by DeviceArray; never freed by it."""

    cdef MemMapping _mapping

    def __dealloc__(self):
        self.ptr = NULL          # the base class must not aclrtFree it
        if self._mapping is not None:
            self._mapping._views -= 1


cdef class MemMapping:
    """PhysicalMemory mapped into an AddressReservation (aclrtMapMem); see AddressReservation.map().

    Keeps both alive while mapped. unmap() undoes it (aclrtUnmapMem); so do
    garbage collection and the end of a `with` block. as_array() views the
    mapped bytes as a DeviceArray usable wherever aclrtMalloc memory is
    (copies, collectives).
    """

    cdef void *_ptr
    cdef size_t _size
    cdef size_t _offset
    cdef AddressReservation _reservation
    cdef PhysicalMemory _physical
    cdef int _generation
    cdef bint _unmapped
    cdef Py_ssize_t _views
    cdef object __weakref__

    def __cinit__(self):
        self._unmapped = True    # until AddressReservation.map() fills it in

    def __dealloc__(self):
        cdef void *ptr = self._ptr
        if self._unmapped or ptr == NULL or not _initialized or self._generation != _generation:
            return
        self._unmapped = True
        with nogil:
            aclrtUnmapMem(ptr)

    @property
    def ptr(self):
        """Start address of the mapping, as an int."""
        return <uintptr_t>self._ptr

    @property
    def size(self):
        """Size of the mapping in bytes (that of its PhysicalMemory)."""
        return self._size

    @property
    def offset(self):
        """Bytes from the start of its reservation."""
        return self._offset

    @property
    def reservation(self):
        """The AddressReservation it lies in."""
        return self._reservation

    @property
    def physical(self):
        """The PhysicalMemory it maps."""
        return self._physical

    @property
    def mapped(self):
        """True until unmap()."""
        return not self._unmapped

    def __repr__(self):
        state = "unmapped" if self._unmapped else "mapped"
        return f"MemMapping(ptr=0x{<uintptr_t>self._ptr:x}, size={self._size}, {state})"

    def as_array(self, shape=None, dtype=np.uint8, offset=0):
        """Return a DeviceArray over the mapped bytes (no copy).

        The array keeps the mapping alive; unmap() refuses while any such
        array (or a view of it) exists.

        Args:
            shape: dimensions (None: as many elements as fit after `offset`).
            dtype: element type.
            offset: bytes from the start of the mapping to element 0.
        """
        cdef _MappedMemory mem
        cdef Py_ssize_t off, n, itemsize
        cdef tuple shp
        if self._unmapped:
            raise ValueError("as_array: the memory is unmapped")
        dt, hdt = _array_dtype(dtype, "as_array")
        itemsize = dt.itemsize
        off = _vmm_uint(offset, "as_array", "offset")
        if <size_t>off > self._size:
            raise ValueError(f"as_array: offset {off} is outside the mapping ({self._size} bytes)")
        if shape is None:
            shp = ((<Py_ssize_t>self._size - off) // itemsize,)
        else:
            shp = _norm_shape(shape, "as_array")
        n = _prod(shp) * itemsize
        if n > <Py_ssize_t>self._size - off:
            raise ValueError(f"as_array: shape {shp} of {_dtype_name(dt)} needs {n} bytes, "
                             f"the mapping has {<Py_ssize_t>self._size - off} after offset {off}")
        mem = _MappedMemory.__new__(_MappedMemory)
        mem.ptr = <char *>self._ptr + off
        mem.nbytes = n
        mem.device = self._physical._device
        mem.generation = _generation
        mem.device_generation = _device_generation.get(mem.device, 0)
        mem._mapping = self
        self._views += 1
        return _new_view(mem, 0, shp, _c_strides(shp, itemsize), dt, hdt)

    def unmap(self):
        """Unmap the memory (aclrtUnmapMem); nothing if already unmapped.

        Raises:
            BufferError: DeviceArrays from as_array() still exist (also those
                held by unsynchronised streams).
            AclError: a queued copy still uses the memory.
        """
        if self._unmapped:
            return
        if self._views > 0:
            raise BufferError(f"unmap_mem: {self._views} DeviceArray(s) from as_array() (or "
                              "DLPack exports of them) still use the mapping; delete them and "
                              "synchronize their streams first")
        with nogil:
            CHKACL(aclrtUnmapMem(self._ptr), "aclrtUnmapMem")
        self._unmapped = True

    def __enter__(self):
        if self._unmapped:
            raise ValueError("__enter__: the memory is unmapped")
        return self

    def __exit__(self, *exc):
        self.unmap()
        return False


def reserve_mem_address(size, alignment=0, flags=0, expect_ptr=None):
    """Reserve a range of device addresses (aclrtReserveMemAddress); see AddressReservation."""
    return AddressReservation(size, alignment, flags, expect_ptr)


def release_mem_address(AddressReservation reservation not None):
    """Give a reserved range back (aclrtReleaseMemAddress); see AddressReservation.release()."""
    reservation.release()


def malloc_physical(size, device=None):
    """Allocate physical device memory (aclrtMallocPhysical); see PhysicalMemory."""
    return PhysicalMemory(size, device)


def free_physical(PhysicalMemory physical not None):
    """Release physical memory (aclrtFreePhysical); see PhysicalMemory.free()."""
    physical.free()


def map_mem(AddressReservation reservation not None, PhysicalMemory physical not None, offset=0):
    """Map `physical` into `reservation` at `offset` (aclrtMapMem); see AddressReservation.map()."""
    return reservation.map(physical, offset)


def unmap_mem(MemMapping mapping not None):
    """Unmap a mapping (aclrtUnmapMem); see MemMapping.unmap()."""
    mapping.unmap()
