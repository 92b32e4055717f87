# Comm: an HCCL communicator, its state and life (construction, destroy, abort)
# and what can be asked of it. Its collectives come from its base _Collectives
# (src/collectives.pxi).


Topology = collections.namedtuple(
    "Topology", "hosts host_names host local_rank local_size transports", module="pyhccl")
Topology.__doc__ = """Where a communicator's ranks run (Comm.topology).

hosts: the ranks of each host; host_names: each host's name; host, local_rank,
local_size: this rank's host, its index there and that host's rank count;
transports: how this rank reaches every rank ("shm", "tcp", "self")."""


cdef class Comm(_Collectives):
    """An HCCL communicator over `nranks` ranks (HcclCommInitRootInfo[Config]).

    Collective and blocking: every rank calls Comm(nranks, root_info, rank)
    with the same root info (made by RootInfo.create() on one rank) and its
    own rank. The communicator is bound to the current device. Destroy it
    with destroy() (or use it as a context manager); pyhccl.mpi.comm_from_mpi
    builds one from an mpi4py communicator.

    Args:
        nranks: number of ranks.
        root_info: a RootInfo, or its 4108 bytes.
        rank: this rank, 0 <= rank < nranks.
        config: None, a CommConfig or a dict of its options.

    Raises:
        TypeError, ValueError: bad nranks, rank, root_info or config.
        HcclError: initialisation failed (e.g. timeout joining the root).
    """

    cdef HcclComm _handle
    cdef uint32_t _rank
    cdef uint32_t _size
    cdef int32_t _device
    cdef object _name
    cdef uint64_t _splits      # split() calls so far (numbers their subCommIds)
    cdef object _rendezvous    # from_env: the group rendezvous, closed by destroy()
    cdef object __weakref__

    def __cinit__(self, nranks, root_info, rank, config=None):
        cdef HcclComm handle = NULL
        cdef HcclCommConfig cconf
        cdef RootInfo ri
        cdef HcclRootInfo info
        cdef uint32_t n, r
        cdef bint use_config
        if type(root_info) is _Adopt:     # a handle made in C (split, rank tables, ...)
            self._handle = <HcclComm><uintptr_t>root_info.handle
            self._device = root_info.device
            self._rank = rank
            self._size = nranks
            _live_comms.add(self)
            return
        try:
            n_py = operator.index(nranks)
        except TypeError:
            raise TypeError(f"Comm: nranks must be an int, not {type(nranks).__name__}") from None
        if not 0 < n_py <= 0xffffffff:
            raise ValueError(f"Comm: nranks must be between 1 and 2**32 - 1, not {n_py}")
        n = n_py
        try:
            r_py = operator.index(rank)
        except TypeError:
            raise TypeError(f"Comm: rank must be an int, not {type(rank).__name__}") from None
        if not 0 <= r_py < n:
            raise ValueError(f"Comm: rank {r_py} out of range for {_n_ranks(n)}")
        r = r_py
        if isinstance(root_info, RootInfo):
            ri = <RootInfo>root_info
        else:
            ri = RootInfo.from_bytes(root_info)
        cfg = _as_config(config, "Comm")
        use_config = cfg is not None
        if use_config:
            _fill_config(&cconf, cfg, "Comm")
        memcpy(info.internal, <const char *>ri._data, sizeof(info))
        self._device = _current_device()
        handle = _init_interruptibly(n, &info, r, &cconf if use_config else NULL, self._device)
        self._handle = handle
        self._rank = r
        self._size = n
        _live_comms.add(self)

    def __dealloc__(self):
        # Destroying may be collective: never here. Warn about the leak instead.
        if self._handle != NULL and _initialized:
            try:
                warnings.warn(f"pyhccl.Comm (rank {self._rank} of {self._size}) was "
                              "collected without destroy()", ResourceWarning, stacklevel=2)
            except Exception:
                pass

    cdef int _check(self, str api) except -1:
        if self._handle == NULL:
            raise ValueError(f"{api}: the communicator is destroyed")
        return 0

    # ---- properties and management -----------------------------------------

    @property
    def handle(self):
        """The HcclComm handle as an int (0 once destroyed)."""
        return <uintptr_t>self._handle

    @property
    def rank(self):
        """This rank's index in the communicator (HcclGetRankId)."""
        return self._rank

    @property
    def size(self):
        """Number of ranks (HcclGetRankSize)."""
        return self._size

    @property
    def device(self):
        """Device the communicator is bound to."""
        return self._device

    @property
    def name(self):
        """The communicator's name (HcclGetCommName)."""
        cdef char buf[256]
        if self._name is None:
            self._check("name")
            memset(buf, 0, sizeof(buf))
            with nogil:
                CHKHCCL(HcclGetCommName(self._handle, buf), "HcclGetCommName")
            self._name = buf.decode("utf-8", "replace")
        return self._name

    @property
    def is_destroyed(self):
        """True after destroy()."""
        return self._handle == NULL

    def __repr__(self):
        if self._handle == NULL:
            return "Comm(destroyed)"
        return f"Comm(rank={self._rank}, size={self._size}, device={self._device})"

    def get_rank_id(self):
        """Return this rank from HCCL (HcclGetRankId)."""
        cdef uint32_t r = 0
        self._check("get_rank_id")
        with nogil:
            CHKHCCL(HcclGetRankId(self._handle, &r), "HcclGetRankId")
        return r

    def get_rank_size(self):
        """Return the number of ranks from HCCL (HcclGetRankSize)."""
        cdef uint32_t n = 0
        self._check("get_rank_size")
        with nogil:
            CHKHCCL(HcclGetRankSize(self._handle, &n), "HcclGetRankSize")
        return n

    def async_error(self):
        """Return the communicator's asynchronous error as an HcclError, or None.

        Calls HcclGetCommAsyncError; the error is returned, not raised.
        """
        cdef HcclResult res = HCCL_SUCCESS
        self._check("async_error")
        with nogil:
            CHKHCCL(HcclGetCommAsyncError(self._handle, &res), "HcclGetCommAsyncError")
        if res == HCCL_SUCCESS:
            return None
        return HcclError(<int>res, f"asynchronous error: {_hccl_describe(res)}",
                         "HcclGetCommAsyncError")

    def abort(self):
        """Abort the communicator (PyhcclCommAbort, like NCCL's ncclCommAbort).

        Local and immediate: every pending and later operation of it fails at
        once on this rank (HcclError HCCL_E_UNAVAIL from synchronize), and its
        peers' pending operations fail within about a second, naming this
        rank. destroy() then returns at once. A rank interrupted by Ctrl-C
        aborts its communicators this way.

        Raises:
            ValueError: the communicator is destroyed.
            HcclError: the runtime has no abort (a CANN build).
        """
        self._check("abort")
        with nogil:
            CHKHCCL(PyhcclCommAbort(self._handle), "PyhcclCommAbort")

    @property
    def topology(self):
        """Where the ranks run (PyhcclCommGetTopology): a Topology.

        Ranks share a host when they can share memory: the same host name,
        boot id and network namespace. hosts[h] lists the ranks of host h
        (hosts numbered in the order of their lowest rank); host, local_rank
        and local_size describe this rank; transports[p] says how this rank
        reaches rank p ("shm", "tcp" or "self").

        Raises:
            ValueError: the communicator is destroyed.
            HcclError: the runtime cannot tell (a CANN build).
        """
        cdef PyhcclTopology t
        cdef uint32_t[::1] host_of = np.zeros(self._size, np.uint32)
        cdef char name[256]
        self._check("topology")
        with nogil:
            CHKHCCL(PyhcclCommGetTopology(self._handle, &t, &host_of[0], self._size),
                    "PyhcclCommGetTopology")
        hosts = [[] for _ in range(t.nHosts)]
        for r in range(self._size):
            hosts[host_of[r]].append(r)
        names = []
        for h in range(t.nHosts):
            with nogil:
                CHKHCCL(PyhcclCommGetHostName(self._handle, h, name, sizeof(name)),
                        "PyhcclCommGetHostName")
            names.append(name.decode("utf-8", "replace"))
        transports = []
        for p in range(self._size):
            with nogil:
                CHKHCCL(PyhcclCommGetTransport(self._handle, p, name, sizeof(name)),
                        "PyhcclCommGetTransport")
            transports.append(name.decode())
        return Topology(hosts, names, t.hostId, t.localRank, t.localSize, transports)

    def flight_record(self):
        """The communicator's last operations, oldest first (PyhcclCommGetFlightRecord).

        Returns:
            A list of dicts with keys seq (collective number, 0 for send/recv),
            op ("HcclAllReduce", ...), count, dtype (DataType), root,
            reduce_op (ReduceOp), state ("queued", "running", "done",
            "failed"), enqueue_us, start_us, end_us (monotonic clock; None
            until reached) and algorithm ("board", "flat", "hier", "ring", ...).

        Raises:
            ValueError: the communicator is destroyed.
            HcclError: the runtime keeps no record (a CANN build).
        """
        cdef PyhcclOpRecord recs[64]
        cdef uint32_t count = 0
        self._check("flight_record")
        with nogil:
            CHKHCCL(PyhcclCommGetFlightRecord(self._handle, recs, 64, &count),
                    "PyhcclCommGetFlightRecord")
        states = ("queued", "running", "done", "failed")
        out = []
        for i in range(count):
            out.append({
                "seq": recs[i].seq,
                "op": recs[i].opName.decode(),
                "count": recs[i].count,
                "dtype": DataType(recs[i].dataType),
                "root": recs[i].root,
                "reduce_op": ReduceOp(recs[i].reduceOp),
                "state": states[recs[i].state],
                "enqueue_us": recs[i].enqueueUs,
                "start_us": recs[i].startUs or None,
                "end_us": recs[i].endUs or None,
                "algorithm": recs[i].algorithm.decode(),
            })
        return out

    def destroy(self, timeout=None):
        """Destroy the communicator (HcclCommDestroy); a second call does nothing.

        Work already enqueued should be synchronised first. Every rank should
        destroy its communicator.

        Args:
            timeout: None: wait for the enqueued work as HcclCommDestroy does
                (each operation is bounded by the exec timeout). Seconds:
                wait at most that long, then abort what is still in flight
                (it fails at once here; peers learn that this rank left) and
                raise (PyhcclCommDestroyTimeout). The communicator is
                destroyed either way. At interpreter exit pyhccl destroys
                the communicators left with PYHCCL_EXIT_TIMEOUT (1 s).

        Raises:
            HcclError: HCCL_E_TIMEOUT naming the operations abandoned; or, when
                a message this rank sent was never received (its peer failed
                or left first), the peer's error: the send itself succeeded.
        """
        cdef HcclComm handle = self._handle
        cdef int32_t ms = -1
        if timeout is not None:
            ms = _timeout_ms(timeout, "destroy")
        if handle == NULL:
            return
        self._handle = NULL
        _live_comms.discard(self)
        try:
            if ms < 0:
                with nogil:
                    CHKHCCL(HcclCommDestroy(handle), "HcclCommDestroy")
            else:
                with nogil:
                    CHKHCCL(PyhcclCommDestroyTimeout(handle, ms), "PyhcclCommDestroyTimeout")
        finally:
            if self._rendezvous is not None:  # rank 0: its group's name is free again
                self._rendezvous.close()
                self._rendezvous = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False

    @classmethod
    def from_env(cls, rank=None, world_size=None, *, group=None, device=None, config=None):
        """Build a communicator with no MPI, from a launcher's variables or arguments.

        See pyhccl.launch.comm_from_env: torchrun's RANK/WORLD_SIZE, Slurm's,
        Open MPI's and MPICH's variables, or rank= and world_size=; ranks meet
        by group name on one host, or at MASTER_ADDR:MASTER_PORT across hosts.
        """
        from pyhccl.launch import comm_from_env
        return comm_from_env(rank, world_size, group=group, device=device, config=config)

    def _keep_rendezvous(self, rendezvous):
        """Close `rendezvous` (a _Rendezvous) when the communicator is destroyed."""
        self._rendezvous = rendezvous

    @classmethod
    def from_mpi(cls, mpi_comm=None, device=None, config=None):
        """Build a communicator over an mpi4py communicator (see pyhccl.mpi.comm_from_mpi)."""
        from pyhccl.mpi import comm_from_mpi
        return comm_from_mpi(mpi_comm, device=device, config=config)

    # ---- sub-communicators and registered memory (src/hcclext.pxi) ---------

    def create_sub_comm(self, rank_ids, sub_comm_id=0xFFFFFFFF, config=None):
        """Create a sub-communicator of the ranks in `rank_ids` (HcclCreateSubCommConfig).

        Collective over this communicator: members pass the same `rank_ids`
        (a rank's index in it is its rank in the new communicator) and the
        same `sub_comm_id` (unique within this communicator); the other ranks
        pass rank_ids=None and get None. Several disjoint groups may be
        created in one call, each with its own id.

        Returns:
            the new Comm on members, None elsewhere.
        """
        return _comm_create_sub(self, rank_ids, sub_comm_id, config)

    def split(self, color, key=0, config=None):
        """Split into sub-communicators by `color`, ordered by (`key`, rank), like MPI_Comm_split.

        Collective over this communicator; needs no MPI (the colors and keys
        travel over this communicator). Ranks with color None or negative
        get None.

        Returns:
            the Comm of this rank's color, or None.
        """
        return _comm_split(self, color, key, config)

    def sym_win_register(self, mem, size=None):
        """Register `mem` as a symmetric window (HcclCommSymWinRegister; collective).

        `mem` is a MemMapping (or a DeviceArray or address inside one, with
        `size`); every rank registers the same size. Collectives whose
        buffers lie in windows read peers' windows directly, at every size.
        The memory cannot be unmapped until the window is deregistered.

        Returns:
            SymWindow.
        """
        return _sym_win_register(self, mem, size)

    def set_memory_range(self, mem, size=None):
        """Declare a reserved address range to HCCL (HcclCommSetMemoryRange).

        `mem` is an AddressReservation (or its address, with `size`); the
        range is known to every communicator of the process.
        """
        _set_memory_range(self, mem, size)

    def unset_memory_range(self, mem):
        """Remove a range set by set_memory_range() (HcclCommUnsetMemoryRange)."""
        _unset_memory_range(self, mem)

    def activate_comm_memory(self, mapping, size=None):
        """Activate a mapping inside a memory range as this communicator's memory (HcclCommActivateCommMemory).

        It stays mapped (unmap() fails) until deactivate_comm_memory() or
        destroy().
        """
        _activate_comm_memory(self, mapping, size)

    def deactivate_comm_memory(self, mapping):
        """Undo activate_comm_memory() (HcclCommDeactivateCommMemory)."""
        _deactivate_comm_memory(self, mapping)
