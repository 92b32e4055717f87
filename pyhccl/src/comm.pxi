# Comm: an HCCL communicator and its collectives.
#
# Each collective resolves its buffers (counts and dtype derived from them),
# checks every argument before calling C, enqueues the C call without the GIL,
# and keeps its Python buffers alive on the stream until the work completes.


Topology = collections.namedtuple(
    "Topology", "hosts host_names host local_rank local_size transports", module="pyhccl")
Topology.__doc__ = """Where a communicator's ranks run (Comm.topology).

hosts: the ranks of each host; host_names: each host's name; host, local_rank,
local_size: this rank's host, its index there and that host's rank count;
transports: how this rank reaches every rank ("shm", "tcp", "self")."""


cdef class Comm:
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

    cdef Stream _stream(self, object stream, str api):
        cdef Stream s = _resolve_stream(stream, api)
        cdef int32_t dev = s._resolve_device()
        if dev != self._device:
            if s._is_default:
                raise ValueError(f"{api}: the current device is {dev} but the communicator "
                                 f"is on device {self._device}; set_device({self._device}) "
                                 "or pass a stream of that device")
            raise ValueError(f"{api}: stream is on device {dev}, the communicator on "
                             f"device {self._device}")
        return s

    cdef int _check_root(self, object root, str api, str what) except -1:
        try:
            r = operator.index(root)
        except TypeError:
            raise TypeError(f"{api}: {what} must be an int, not {type(root).__name__}") from None
        if not 0 <= r < self._size:
            raise ValueError(f"{api}: {what} {r} out of range for a communicator "
                             f"of size {self._size}")
        return r

    cdef tuple _same_size_bufs(self, object sendbuf, object recvbuf, str api,
                               bint out_writable, object dtype):
        """(sendbuf, recvbuf) _Bufs of all_reduce / reduce; recvbuf None: in place."""
        cdef _Buf sb, rb
        if recvbuf is None:
            sb = _as_buf(sendbuf, api, "sendbuf", out_writable, dtype, self._device, True)
            return sb, sb
        sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, self._device, True)
        rb = _as_buf(recvbuf, api, "recvbuf", out_writable, dtype, self._device, True)
        _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
        _check_same_layout(sb, rb, api, "sendbuf", "recvbuf")
        if rb.count != sb.count:
            raise ValueError(f"{api}: recvbuf has {rb.count} elements, sendbuf "
                             f"{sb.count}; they must be equal")
        _check_no_overlap(sb, rb, api, -1)
        return sb, rb

    cdef int _check_blocks(self, _Buf sb, _Buf rb, bint gather, str api) except -1:
        """Check buffers where one holds `size` blocks the size of the other.

        gather: recvbuf is the larger one (all_gather); else sendbuf is
        (reduce_scatter, scatter). In place when the block is this rank's
        block of the larger buffer.
        """
        cdef _Buf whole = rb if gather else sb
        cdef _Buf block = sb if gather else rb
        cdef str wname = "recvbuf" if gather else "sendbuf"
        cdef str bname = "sendbuf" if gather else "recvbuf"
        _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
        if whole.count != block.count * self._size:
            raise ValueError(f"{api}: {wname} has {whole.count} elements; it must have "
                             f"{bname}'s {block.count} x {_n_ranks(self._size)} = "
                             f"{block.count * self._size}")
        _check_no_overlap(block, whole, api, self._rank * block.nbytes)
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

    # ---- collectives -------------------------------------------------------

    def all_reduce(self, sendbuf, recvbuf=None, op=SUM, *, stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op` into `recvbuf` on every rank.

        Collective: every rank calls it, in the same order. Asynchronous: it
        enqueues the work on `stream` (None: the current stream) and returns;
        synchronise the stream before reading the result. In place when
        `recvbuf` is None or the same buffer as `sendbuf`. The buffers must
        have the same size and dtype. Element order does not matter, so any
        contiguous layout (C or Fortran order, a transposed view) is
        accepted; elements are paired by memory position, so both buffers,
        and every rank, must use the same layout. Calls HcclAllReduce.

        Args:
            sendbuf: input (DeviceArray or contiguous host array).
            recvbuf: output of the same size and dtype, or None (in place).
            op: ReduceOp, "sum"/"prod"/"max"/"min" or an mpi4py op.
            stream: the Stream to enqueue on (keyword only).
            dtype: reinterpret both buffers as this DataType (e.g. BFLOAT16
                on uint16 arrays).

        Returns:
            The output buffer (recvbuf, or sendbuf when in place).

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclAllReduce refused the call.
        """
        cdef str api = "all_reduce"
        self._check(api)
        cdef int cop = _as_op(op, api)
        cdef Stream s = self._stream(stream, api)
        cdef _Buf sb, rb
        sb, rb = self._same_size_bufs(sendbuf, recvbuf, api, True, dtype)
        if _CHECK_HOST_READS:
            _host_guard(s, (sb,), ((rb, sb.nbytes),))
        with nogil:
            CHKHCCL(HcclAllReduce(sb.ptr, rb.ptr, sb.count, <HcclDataType>sb.hdt,
                                  <HcclReduceOp>cop, self._handle, s._handle),
                    "HcclAllReduce")
        _keep(s, (sb.keep, rb.keep))
        return rb.obj

    def broadcast(self, buf, root=0, *, stream=None, dtype=None):
        """Copy `buf` of rank `root` into `buf` on every other rank.

        Collective: every rank calls it, in the same order, with the same
        root. Asynchronous: it enqueues the work on `stream` (None: the
        current stream) and returns; synchronise the stream before reading
        the result. Always in place: `buf` is the input on the root and the
        output elsewhere (so it must be writable there). Any contiguous
        layout (C or Fortran order) is accepted; every rank must use the
        same one. Calls HcclBroadcast.

        Returns:
            buf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclBroadcast refused the call.
        """
        cdef str api = "broadcast"
        self._check(api)
        cdef uint32_t r = self._check_root(root, api, "root")
        cdef Stream s = self._stream(stream, api)
        cdef _Buf b = _as_buf(buf, api, "buf", r != self._rank, dtype, self._device, True)
        if _CHECK_HOST_READS:     # the root reads buf, the others' is written
            _host_guard(s, (b,), ()) if r == self._rank else \
                _host_guard(s, (), ((b, b.nbytes),))
        with nogil:
            CHKHCCL(HcclBroadcast(b.ptr, b.count, <HcclDataType>b.hdt, r, self._handle,
                                  s._handle), "HcclBroadcast")
        _keep(s, b.keep)
        return b.obj

    def all_gather(self, sendbuf, recvbuf, *, stream=None, dtype=None):
        """Gather `sendbuf` of every rank into `recvbuf` on every rank, in rank order.

        Collective: every rank calls it, in the same order. Asynchronous: it
        enqueues the work on `stream` (None: the current stream) and returns;
        synchronise the stream before reading the result. `recvbuf` holds
        size * len(sendbuf) elements; rank i's data lands at offset
        i * len(sendbuf). In place when `sendbuf` is exactly that slice of
        `recvbuf` on this rank. Calls HcclAllGather.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclAllGather refused the call.
        """
        cdef str api = "all_gather"
        self._check(api)
        cdef Stream s = self._stream(stream, api)
        cdef _Buf sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, self._device)
        cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, self._device)
        self._check_blocks(sb, rb, True, api)
        if _CHECK_HOST_READS:
            _host_guard(s, (sb,), ((rb, sb.nbytes * self._size),))
        with nogil:
            CHKHCCL(HcclAllGather(sb.ptr, rb.ptr, sb.count, <HcclDataType>sb.hdt,
                                  self._handle, s._handle), "HcclAllGather")
        _keep(s, (sb.keep, rb.keep))
        return rb.obj

    def reduce_scatter(self, sendbuf, recvbuf, op=SUM, *, stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op` and scatter the result: rank i gets block i.

        Collective: every rank calls it, in the same order. Asynchronous: it
        enqueues the work on `stream` (None: the current stream) and returns;
        synchronise the stream before reading the result. `sendbuf` holds
        size * len(recvbuf) elements. In place when `recvbuf` is exactly this
        rank's block of `sendbuf`. Calls HcclReduceScatter.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclReduceScatter refused the call.
        """
        cdef str api = "reduce_scatter"
        self._check(api)
        cdef int cop = _as_op(op, api)
        cdef Stream s = self._stream(stream, api)
        cdef _Buf sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, self._device)
        cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, self._device)
        self._check_blocks(sb, rb, False, api)
        if _CHECK_HOST_READS:
            _host_guard(s, (sb,), ((rb, rb.nbytes),))
        with nogil:
            CHKHCCL(HcclReduceScatter(sb.ptr, rb.ptr, rb.count, <HcclDataType>sb.hdt,
                                      <HcclReduceOp>cop, self._handle, s._handle),
                    "HcclReduceScatter")
        _keep(s, (sb.keep, rb.keep))
        return rb.obj

    def reduce(self, sendbuf, recvbuf=None, op=SUM, root=0, *, stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op` into `recvbuf` on rank `root`.

        Collective: every rank calls it, in the same order, with the same
        root. Asynchronous: it enqueues the work on `stream` (None: the
        current stream) and returns; synchronise the stream before reading
        the result. In place when `recvbuf` is None or `sendbuf`. `recvbuf`
        is only written on the root. Like all_reduce(), any contiguous
        layout is accepted (the same on both buffers and every rank).
        Calls HcclReduce.

        Returns:
            The output buffer (recvbuf, or sendbuf when in place).

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclReduce refused the call.
        """
        cdef str api = "reduce"
        self._check(api)
        cdef int cop = _as_op(op, api)
        cdef uint32_t r = self._check_root(root, api, "root")
        cdef Stream s = self._stream(stream, api)
        cdef _Buf sb, rb
        sb, rb = self._same_size_bufs(sendbuf, recvbuf, api, r == self._rank, dtype)
        if _CHECK_HOST_READS:
            _host_guard(s, (sb,), ((rb, sb.nbytes),) if r == self._rank else ())
        with nogil:
            CHKHCCL(HcclReduce(sb.ptr, rb.ptr, sb.count, <HcclDataType>sb.hdt,
                               <HcclReduceOp>cop, r, self._handle, s._handle), "HcclReduce")
        _keep(s, (sb.keep, rb.keep))
        return rb.obj

    def scatter(self, sendbuf, recvbuf, root=0, *, stream=None, dtype=None):
        """Split `sendbuf` of rank `root` into size blocks; rank i receives block i in `recvbuf`.

        Collective: every rank calls it, in the same order, with the same
        root. Asynchronous: it enqueues the work on `stream` (None: the
        current stream) and returns; synchronise the stream before reading
        the result. `sendbuf` (size * len(recvbuf) elements) is read on the
        root only; other ranks may pass None. Calls HcclScatter.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclScatter refused the call.
        """
        cdef str api = "scatter"
        self._check(api)
        cdef uint32_t r = self._check_root(root, api, "root")
        cdef Stream s = self._stream(stream, api)
        cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, self._device)
        cdef _Buf sb
        if sendbuf is None and r != self._rank:
            sb = rb
        else:
            sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, self._device)
            self._check_blocks(sb, rb, False, api)
        if _CHECK_HOST_READS:
            _host_guard(s, (sb,), ((rb, rb.nbytes),))
        with nogil:
            CHKHCCL(HcclScatter(sb.ptr, rb.ptr, rb.count, <HcclDataType>rb.hdt, r,
                                self._handle, s._handle), "HcclScatter")
        _keep(s, (sb.keep, rb.keep))
        return rb.obj

    def all_to_all(self, sendbuf, recvbuf, *, stream=None, dtype=None):
        """Send block j of `sendbuf` to rank j; receive rank i's block into block i of `recvbuf`.

        Collective: every rank calls it, in the same order. Asynchronous: it
        enqueues the work on `stream` (None: the current stream) and returns;
        synchronise the stream before reading the result. Both buffers hold
        size equal blocks; not in place. Calls HcclAlltoAll.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclAlltoAll refused the call.
        """
        cdef str api = "all_to_all"
        self._check(api)
        cdef Stream s = self._stream(stream, api)
        cdef _Buf sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, self._device)
        cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, self._device)
        cdef uint64_t per
        _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
        if sb.count != rb.count:
            raise ValueError(f"{api}: sendbuf has {sb.count} elements, recvbuf "
                             f"{rb.count}; they must be equal")
        if sb.count % self._size:
            raise ValueError(f"{api}: {sb.count} elements do not split into "
                             f"{self._size} equal blocks")
        if sb.ptr == rb.ptr and sb.nbytes > 0:
            raise ValueError(f"{api}: in place is not supported; use separate buffers")
        _check_no_overlap(sb, rb, api, -1)
        per = sb.count // self._size
        if _CHECK_HOST_READS:
            _host_guard(s, (sb,), ((rb, sb.nbytes),))
        with nogil:
            CHKHCCL(HcclAlltoAll(sb.ptr, per, <HcclDataType>sb.hdt, rb.ptr, per,
                                 <HcclDataType>rb.hdt, self._handle, s._handle),
                    "HcclAlltoAll")
        _keep(s, (sb.keep, rb.keep))
        return rb.obj

    def send(self, buf, peer, *, stream=None, dtype=None):
        """Send `buf` to rank `peer`, which calls recv() with as many elements.

        Point to point, asynchronous: it enqueues the send on `stream` (None:
        the current stream) and returns; `buf` must not change until the
        stream has run it. Calls HcclSend.

        Pairing rules:

        - Sends from rank A to rank B match B's receives from A in order:
          the first send with the first receive, and so on (per
          communicator).
        - A send and its receive must have the same count and dtype; a
          mismatch fails the operation (HCCL_E_PARA at the receiver,
          reported by synchronize()).
        - A send completes when its receiver has taken the data, except
          for what fits in the pair's channel (PYHCCL_SLOTS x
          PYHCCL_SLOT_BYTES, 1 MiB by default, on one host; the socket
          buffers between hosts): a message up to that size may complete
          before the receive is posted, a larger one waits for it. Later
          operations of the communicator (this rank's receives included)
          wait for the send. If the receiver runs something else instead
          (a collective), the send still succeeded here: the mismatch fails
          the receiver's operation, and this rank's destroy() raises
          HcclError ("rank N never received this rank's last message(s)")
          on one host (PYHCCL_LINGER_MS).
        - So a ring, or any cycle, of blocking sends (every rank sends to
          the next, then receives from the previous) never completes with
          large messages: post its sends and receives together, inside
          ``with pyhccl.group():`` or as one batch_send_recv(). On one host
          such a deadlock is detected: synchronize() raises HcclError
          ("deadlock: ranks 0 -> 1 -> ... each wait in a blocking send")
          on every rank of the cycle within a second; between hosts it
          waits for HCCL_EXEC_TIMEOUT, and the timeout's message names
          group().

        Returns:
            buf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclSend refused the call.
        """
        cdef str api = "send"
        self._check(api)
        cdef uint32_t p = self._check_root(peer, api, "peer")
        cdef Stream s = self._stream(stream, api)
        cdef _Buf b = _as_buf(buf, api, "buf", False, dtype, self._device)
        if _CHECK_HOST_READS:
            _host_guard(s, (b,), ())
        with nogil:
            CHKHCCL(HcclSend(b.ptr, b.count, <HcclDataType>b.hdt, p, self._handle,
                             s._handle), "HcclSend")
        _keep(s, b.keep)
        return b.obj

    def recv(self, buf, peer, *, stream=None, dtype=None):
        """Receive into `buf` from rank `peer`, which calls send() with as many elements.

        Point to point, asynchronous: it enqueues the receive on `stream`
        (None: the current stream) and returns; synchronise the stream before
        reading `buf`. The pairing rules of send() apply: receives match the
        peer's sends in order, with the same count and dtype; a receive
        completes when the data has arrived. A receive posted after a send
        on this rank runs only once that send completed, so a ring (or any
        cycle) of send-then-recv with messages larger than the channel
        (1 MiB by default) is a deadlock: post it inside
        ``with pyhccl.group():`` (or as one batch_send_recv()). Calls
        HcclRecv.

        Returns:
            buf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclRecv refused the call.
        """
        cdef str api = "recv"
        self._check(api)
        cdef uint32_t p = self._check_root(peer, api, "peer")
        cdef Stream s = self._stream(stream, api)
        cdef _Buf b = _as_buf(buf, api, "buf", True, dtype, self._device)
        if _CHECK_HOST_READS:
            _host_guard(s, (), ((b, b.nbytes),))
        with nogil:
            CHKHCCL(HcclRecv(b.ptr, b.count, <HcclDataType>b.hdt, p, self._handle,
                             s._handle), "HcclRecv")
        _keep(s, b.keep)
        return b.obj

    def barrier(self, *, stream=None):
        """Block the stream until every rank has reached the barrier.

        Collective: every rank calls it, in the same order. Asynchronous: it
        enqueues the barrier on `stream` (None: the current stream) and
        returns; synchronise the stream to wait for it. Calls HcclBarrier.

        Raises:
            TypeError: `stream` is not a Stream.
            ValueError: the communicator or the stream is destroyed, or the
                stream is on another device.
            HcclError: HcclBarrier refused the call.
        """
        cdef str api = "barrier"
        self._check(api)
        cdef Stream s = self._stream(stream, api)
        with nogil:
            CHKHCCL(HcclBarrier(self._handle, s._handle), "HcclBarrier")

    def all_gather_v(self, sendbuf, recvbuf, recv_counts, recv_displs=None, *, stream=None,
                     dtype=None):
        """Gather blocks of different sizes: rank i's `sendbuf` lands at recv_displs[i] in `recvbuf`.

        Collective: every rank calls it, in the same order, with the same
        recv_counts and recv_displs. Asynchronous: it enqueues the work on
        `stream` (None: the current stream) and returns; synchronise the
        stream before reading the result. Calls HcclAllGatherV.

        Args:
            sendbuf: this rank's block, recv_counts[rank] elements.
            recvbuf: output holding every block (writable).
            recv_counts: elements from each rank (a sequence or numpy array
                of size ints).
            recv_displs: where each rank's block starts in recvbuf, in
                elements; None packs the blocks in rank order. The blocks
                must not overlap and must fit in recvbuf.
            stream: the Stream to enqueue on (keyword only).
            dtype: reinterpret both buffers as this DataType.

        In place when `sendbuf` is exactly this rank's block of `recvbuf`.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclAllGatherV refused the call.
        """
        return _all_gather_v(self, sendbuf, recvbuf, recv_counts, recv_displs, stream, dtype)

    def reduce_scatter_v(self, sendbuf, recvbuf, send_counts, send_displs=None, op=SUM, *,
                         stream=None, dtype=None):
        """Reduce `sendbuf` over all ranks with `op`; rank i gets the block of send_counts[i] at send_displs[i].

        Collective: every rank calls it, in the same order, with the same
        send_counts and send_displs. Asynchronous: it enqueues the work on
        `stream` (None: the current stream) and returns; synchronise the
        stream before reading the result. Calls HcclReduceScatterV.

        Args:
            sendbuf: input holding every rank's block.
            recvbuf: output, send_counts[rank] elements (writable).
            send_counts: elements of each rank's block (size ints).
            send_displs: where each block starts in sendbuf, in elements;
                None packs them in rank order. Blocks must fit in sendbuf.
            op: ReduceOp, "sum"/"prod"/"max"/"min" or an mpi4py op.
            stream: the Stream to enqueue on (keyword only).
            dtype: reinterpret both buffers as this DataType.

        In place when `recvbuf` is exactly this rank's block of `sendbuf`.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclReduceScatterV refused the call.
        """
        return _reduce_scatter_v(self, sendbuf, recvbuf, send_counts, send_displs, op,
                                 stream, dtype)

    def all_to_all_v(self, sendbuf, recvbuf, send_counts, recv_counts, send_displs=None,
                     recv_displs=None, *, stream=None, dtype=None):
        """Send send_counts[j] elements to each rank j; receive recv_counts[i] from each rank i.

        Collective: every rank calls it, in the same order; send_counts[j]
        on rank i must equal recv_counts[i] on rank j (a mismatch fails the
        operation, reported by synchronize()). Asynchronous: it enqueues the
        work on `stream` (None: the current stream) and returns; synchronise
        the stream before reading the result. Not in place. Calls
        HcclAlltoAllV.

        Args:
            sendbuf: input; the block for rank j starts at send_displs[j].
            recvbuf: output; the block from rank i lands at recv_displs[i]
                (blocks must not overlap).
            send_counts, recv_counts: elements per peer (size ints each).
            send_displs, recv_displs: block offsets in elements; None packs
                the blocks in rank order.
            stream: the Stream to enqueue on (keyword only).
            dtype: reinterpret both buffers as this DataType.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclAlltoAllV refused the call.
        """
        return _all_to_all_v(self, sendbuf, recvbuf, send_counts, recv_counts, send_displs,
                             recv_displs, stream, dtype)

    def all_to_all_vc(self, sendbuf, recvbuf, send_count_matrix, *, stream=None, dtype=None):
        """All-to-all from a matrix of counts: rank i sends matrix[i][j] elements to rank j.

        Collective: every rank calls it, in the same order, with the same
        matrix. Asynchronous: it enqueues the work on `stream` (None: the
        current stream) and returns; synchronise the stream before reading
        the result. Blocks are packed in rank order in both buffers: this
        rank sends row `rank` and receives column `rank`. Not in place.
        Calls HcclAlltoAllVC.

        Args:
            sendbuf: input, at least sum(matrix[rank]) elements.
            recvbuf: output, at least sum of column `rank` elements.
            send_count_matrix: size x size ints (nested sequences, a 2-d
                array, or a flat sequence of size * size), row = sender.
            stream: the Stream to enqueue on (keyword only).
            dtype: reinterpret both buffers as this DataType.

        Returns:
            recvbuf.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclAlltoAllVC refused the call.
        """
        return _all_to_all_vc(self, sendbuf, recvbuf, send_count_matrix, stream, dtype)

    def batch_send_recv(self, items, *, stream=None, dtype=None):
        """Run a batch of sends and receives that progress together (HcclBatchSendRecv).

        Point to point, asynchronous: it enqueues the whole batch on `stream`
        (None: the current stream) and returns; synchronise the stream before
        reading the received buffers. All items progress together, so a ring
        or any pattern of exchanges cannot deadlock inside one batch. Items
        between a pair of ranks match in order (as send() and recv() do),
        with equal counts and dtypes; sending to this rank itself works when the
        matching receive is in the same batch.

        Args:
            items: iterable of (kind, buf, peer) tuples; kind is "send" or
                "recv", peer the other rank. A received-into buffer must not
                overlap any other buffer of the batch.
            stream: the Stream to enqueue on (keyword only).
            dtype: reinterpret every buffer as this DataType.

        Raises:
            TypeError, ValueError, BufferError: bad arguments (before any C call).
            HcclError: HcclBatchSendRecv refused the call.
        """
        return _batch_send_recv(self, items, stream, dtype)


cdef str _n_ranks(Py_ssize_t n):
    """'1 rank', '4 ranks'."""
    return f"{n} rank" if n == 1 else f"{n} ranks"
