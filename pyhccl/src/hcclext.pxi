# Communicators beyond the root info (sub-communicators, Comm.split, rank tables,
# one process on several devices) and registered memory (symmetric windows,
# memory ranges, activated memory). Comm's methods for these delegate here.


class _Adopt:
    """Tells Comm() to wrap a handle the C library already created."""

    __slots__ = ("handle", "device")

    def __init__(self, handle, device):
        self.handle = handle
        self.device = device


cdef Comm _adopt_comm(HcclComm handle, int32_t device):
    cdef uint32_t n = 0, r = 0
    with nogil:
        CHKHCCL(HcclGetRankSize(handle, &n), "HcclGetRankSize")
        CHKHCCL(HcclGetRankId(handle, &r), "HcclGetRankId")
    return Comm(n, _Adopt(<uintptr_t>handle, device), r)


cdef object _config_or_none(object config, str api, HcclCommConfig *out):
    cfg = _as_config(config, api)
    if cfg is None:
        return False
    _fill_config(out, cfg, api)
    return True


def _comm_create_sub(Comm comm, rank_ids, sub_comm_id, config):
    cdef str api = "create_sub_comm"
    comm._check(api)
    cdef HcclCommConfig cconf
    cdef bint use_config = _config_or_none(config, api, &cconf)
    cdef HcclComm parent = comm._handle
    cdef HcclComm sub = NULL
    cdef uint32_t *ids = NULL
    cdef uint32_t n = 0, me = 0
    cdef uint64_t sid = 0xFFFFFFFF
    members = None
    if rank_ids is not None:
        members = [operator.index(r) for r in rank_ids]
        if not members:
            raise ValueError(f"{api}: rank_ids is empty (pass None on ranks outside the group)")
        for r in members:
            if not 0 <= r < comm._size:
                raise ValueError(f"{api}: rank {r} is not a rank of the communicator "
                                 f"({comm._size} ranks)")
        if comm._rank not in members:
            raise ValueError(f"{api}: this rank ({comm._rank}) is not in rank_ids; pass None "
                             "on ranks outside the group")
        me = members.index(comm._rank)
        n = len(members)
        sid = operator.index(sub_comm_id)
        if not 0 <= sid < 2 ** 64:
            raise ValueError(f"{api}: sub_comm_id {sid} is not a 64-bit unsigned integer")
        ids = <uint32_t *>malloc(n * sizeof(uint32_t))
        if ids == NULL:
            raise MemoryError()
        for i, r in enumerate(members):
            ids[i] = r
    try:
        with nogil:
            CHKHCCL(HcclCreateSubCommConfig(&parent, n, ids, sid, me,
                                            &cconf if use_config else NULL, &sub),
                    "HcclCreateSubCommConfig")
    finally:
        free(ids)
    if sub == NULL:
        return None
    return _adopt_comm(sub, comm._device)


def _comm_split(Comm comm, color, key, config):
    cdef str api = "split"
    comm._check(api)
    if color is not None:
        color = operator.index(color)
        if color < 0:
            color = None
    key = operator.index(key)
    # Every rank learns every rank's (color, key) over the communicator itself
    # (device buffers: host arrays are the host runtime's extension).
    s = current_stream()
    mine = asarray(np.array([-1 if color is None else color, key], dtype=np.int64))
    everyone = empty(2 * comm._size, np.int64)
    comm.all_gather(mine, everyone, stream=s)
    s.synchronize()
    pairs = everyone.get().reshape(comm._size, 2)
    colors = sorted({int(c) for c, _ in pairs if c >= 0})
    # One split call = one subCommId per color, unique within this parent.
    comm._splits += 1
    if color is None:
        return _comm_create_sub(comm, None, 0xFFFFFFFF, config)
    group = sorted((int(k), r) for r, (c, k) in enumerate(pairs) if c == color)
    sub_id = (comm._splits << 32) | colors.index(color)
    return _comm_create_sub(comm, [r for _, r in group], sub_id, config)


def comm_init_cluster_info(path, rank, config=None):
    """Create this rank's communicator from a CANN rank table file (HcclCommInitClusterInfo).

    Collective and blocking: every rank of the table calls it with the same
    file (byte for byte: the job's secret is derived from it) and its own
    rank_id. Rank 0 listens on its server's host_ip (or server_id, or
    127.0.0.1 for one server) at its host_port, HCCL_IF_BASE_PORT or 60000.

    Args:
        path: the rank table (JSON, version 1.0 or 1.2).
        rank: this process's rank_id in it.
        config: None, a CommConfig or a dict (HcclCommInitClusterInfoConfig).

    Returns:
        Comm on the current device.

    Raises:
        HcclError: the table is unreadable or invalid (the message names the
            file, the field and the rank), or set-up failed.
    """
    _ensure_init()
    cdef HcclCommConfig cconf
    cdef bint use_config = _config_or_none(config, "comm_init_cluster_info", &cconf)
    cdef bytes p = os.fsencode(path)
    cdef const char *cpath = p
    cdef uint32_t r = operator.index(rank)
    cdef HcclComm handle = NULL
    cdef int32_t device = _current_device()
    with nogil:
        if use_config:
            CHKHCCL(HcclCommInitClusterInfoConfig(cpath, r, &cconf, &handle),
                    "HcclCommInitClusterInfoConfig")
        else:
            CHKHCCL(HcclCommInitClusterInfo(cpath, r, &handle), "HcclCommInitClusterInfo")
    return _adopt_comm(handle, device)


def comm_init_all(devices):
    """Create one communicator per device in this process (HcclCommInitAll).

    Rank i of one job lives on devices[i]; each is set up on a thread of its
    own. Run collectives on them from one thread per device (the ranks must
    enter each collective together).

    Args:
        devices: distinct device ids.

    Returns:
        list of Comm, rank i on devices[i].
    """
    _ensure_init()
    devs = [operator.index(d) for d in devices]
    cdef uint32_t n = len(devs)
    if n == 0:
        raise ValueError("comm_init_all: devices is empty")
    cdef int32_t *cdevs = <int32_t *>malloc(n * sizeof(int32_t))
    cdef HcclComm *comms = <HcclComm *>malloc(n * sizeof(HcclComm))
    if cdevs == NULL or comms == NULL:
        free(cdevs)
        free(comms)
        raise MemoryError()
    try:
        for i, d in enumerate(devs):
            cdevs[i] = d
        with nogil:
            CHKHCCL(HcclCommInitAll(n, cdevs, comms), "HcclCommInitAll")
        return [_adopt_comm(comms[i], devs[i]) for i in range(n)]
    finally:
        free(cdevs)
        free(comms)


cdef tuple _mem_range(object mem, object size, str api):
    """(address, bytes) of a MemMapping, AddressReservation, DeviceArray or int."""
    cdef DeviceArray a
    if isinstance(mem, (MemMapping, AddressReservation)):
        ptr, n = mem.ptr, mem.size
    elif isinstance(mem, DeviceArray):
        a = <DeviceArray>mem
        if not a._contig:
            raise BufferError(f"{api}: the array is not contiguous")
        ptr, n = <uintptr_t>(<char *>a._mem.ptr + a._offset), a._size * a._itemsize
    elif isinstance(mem, int):
        if size is None:
            raise TypeError(f"{api}: a size is needed with an address")
        ptr, n = mem, None
    else:
        raise TypeError(f"{api}: expected a MemMapping, AddressReservation, DeviceArray or an "
                        f"address, not {type(mem).__name__}")
    if size is not None:
        size = operator.index(size)
        if size < 0 or (n is not None and size > n):
            raise ValueError(f"{api}: size {size} is outside the memory ({n} bytes)")
        n = size
    return ptr, n


cdef class SymWindow:
    """A symmetric window of a communicator (HcclCommSymWinRegister); see Comm.sym_win_register().

    deregister() releases it (collective: every rank deregisters its window of
    the same registration); until then its memory cannot be unmapped.
    """

    cdef HcclCommSymWindow _handle
    cdef object _comm
    cdef object _mem
    cdef uintptr_t _ptr
    cdef uint64_t _size

    def __dealloc__(self):
        # Deregistering is collective: never here.
        if self._handle != NULL and _initialized:
            try:
                warnings.warn("pyhccl.SymWindow was collected without deregister()",
                              ResourceWarning, stacklevel=2)
            except Exception:
                pass

    @property
    def ptr(self):
        """Start address of the window, as an int."""
        return self._ptr

    @property
    def size(self):
        """Size of the window in bytes."""
        return self._size

    @property
    def registered(self):
        """True until deregister()."""
        return self._handle != NULL

    @property
    def handle(self):
        """The HcclCommSymWindow handle as an int (0 once deregistered)."""
        return <uintptr_t>self._handle

    def deregister(self):
        """Deregister the window (HcclCommSymWinDeregister; collective); a second call does nothing."""
        cdef HcclCommSymWindow h = self._handle
        if h == NULL:
            return
        with nogil:
            CHKHCCL(HcclCommSymWinDeregister(h), "HcclCommSymWinDeregister")
        self._handle = NULL
        self._mem = None

    def __repr__(self):
        state = "registered" if self._handle != NULL else "deregistered"
        return f"SymWindow(ptr=0x{self._ptr:x}, size={self._size}, {state})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.deregister()
        return False


def _sym_win_register(Comm comm, mem, size):
    cdef str api = "sym_win_register"
    comm._check(api)
    ptr, n = _mem_range(mem, size, api)
    cdef void *addr = <void *><uintptr_t>ptr
    cdef uint64_t nbytes = n
    cdef HcclCommSymWindow h = NULL
    cdef HcclComm c = comm._handle
    with nogil:
        CHKHCCL(HcclCommSymWinRegister(c, addr, nbytes, &h, 1), "HcclCommSymWinRegister")
    cdef SymWindow w = SymWindow.__new__(SymWindow)
    w._handle = h
    w._comm = comm
    w._mem = mem
    w._ptr = ptr
    w._size = nbytes
    return w


def _set_memory_range(Comm comm, mem, size):
    comm._check("set_memory_range")
    ptr, n = _mem_range(mem, size, "set_memory_range")
    cdef void *p = <void *><uintptr_t>ptr
    cdef size_t nbytes = n
    cdef HcclComm c = comm._handle
    with nogil:
        CHKHCCL(HcclCommSetMemoryRange(c, p, nbytes, 0, 0), "HcclCommSetMemoryRange")


def _unset_memory_range(Comm comm, mem):
    comm._check("unset_memory_range")
    cdef void *p = <void *><uintptr_t>(mem if isinstance(mem, int) else mem.ptr)
    cdef HcclComm c = comm._handle
    with nogil:
        CHKHCCL(HcclCommUnsetMemoryRange(c, p), "HcclCommUnsetMemoryRange")


def _activate_comm_memory(Comm comm, MemMapping mapping, size):
    comm._check("activate_comm_memory")
    ptr, n = _mem_range(mapping, size, "activate_comm_memory")
    cdef void *p = <void *><uintptr_t>ptr
    cdef size_t nbytes = n
    cdef aclrtDrvMemHandle h = <aclrtDrvMemHandle><uintptr_t>mapping.physical.handle
    cdef HcclComm c = comm._handle
    with nogil:
        CHKHCCL(HcclCommActivateCommMemory(c, p, nbytes, 0, h, 0), "HcclCommActivateCommMemory")


def _deactivate_comm_memory(Comm comm, mem):
    comm._check("deactivate_comm_memory")
    cdef void *p = <void *><uintptr_t>(mem if isinstance(mem, int) else mem.ptr)
    cdef HcclComm c = comm._handle
    with nogil:
        CHKHCCL(HcclCommDeactivateCommMemory(c, p), "HcclCommDeactivateCommMemory")
