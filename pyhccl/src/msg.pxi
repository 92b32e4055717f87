# The message layer: one collective's arguments, resolved and checked once.
#
# As mpi4py's msgbuffer.pxi does for MPI: a Comm method (src/collectives.pxi)
# asks _msg(self) for a _Msg and calls its method of the same name, which
# checks the communicator, then the op, root (or peer) and stream, then
# resolves the buffers (counts and dtype derived from them, src/buffer.pxi) and
# checks them against each other, all before any C call, and guards host
# buffers (src/host_reads.pxi). The Comm method then enqueues the C call
# without the GIL from the message's C fields, and m.kept() keeps the Python
# buffers alive until the stream has run it. The counts and displacements of
# the V collectives are parsed in src/counts.pxi.

cdef enum:
    _OP = 1          # reducing: check `op`
    _ROOT = 2        # rooted: check `root`
    _PEER = 4        # point to point: check `peer` (a root by another name)


@cython.final
@cython.freelist(4)
cdef class _Msg:
    """One call's checked arguments (C fields) and the Python objects behind them."""

    cdef Comm c
    cdef str api
    cdef Stream s
    cdef _Buf sb, rb
    cdef object result          # what the Comm method returns
    cdef object keep            # what stays alive until the stream ran the call
    cdef object arrays          # the uint64 count / displacement arrays of a V call
    # what the C call takes
    cdef HcclComm comm
    cdef aclrtStream stream
    cdef void *sptr
    cdef void *rptr
    cdef uint64_t count
    cdef HcclDataType dt
    cdef HcclDataType rdt
    cdef HcclReduceOp op
    cdef uint32_t root
    cdef const void *scounts
    cdef const void *sdispls
    cdef const void *rcounts
    cdef const void *rdispls
    cdef HcclSendRecvItem *items
    cdef uint32_t nitems

    def __dealloc__(self):
        free(self.items)

    cdef object kept(self):
        """After the C call: keep the buffers alive until the stream has run it;
        returns what the Comm method returns."""
        _keep(self.s, self.keep)
        return self.result

    # ---- the common part -------------------------------------------------

    cdef int _open(self, str api, int what, object op, object root, object stream) except -1:
        """Check the communicator, then op, root or peer, and stream, in that order."""
        cdef Comm c = self.c
        c._check(api)
        self.api = api
        self.comm = c._handle
        if what & _OP:
            self.op = <HcclReduceOp>_as_op(op, api)
        if what & (_ROOT | _PEER):
            self.root = _as_rank(c, root, api, "peer" if what & _PEER else "root")
        self.s = _comm_stream(c, stream, api)
        self.stream = self.s._handle
        return 0

    cdef inline _Buf _buf(self, object obj, str name, bint writable, object dtype,
                          bint any_order=False):
        return _as_buf(obj, self.api, name, writable, dtype, self.c._device, any_order)

    cdef int _two(self, _Buf sb, _Buf rb) except -1:
        """The call reads `sb` and writes `rb`, and returns rb's object."""
        self.sb = sb
        self.rb = rb
        self.sptr = sb.ptr
        self.rptr = rb.ptr
        self.dt = <HcclDataType>sb.hdt
        self.rdt = <HcclDataType>rb.hdt
        self.result = rb.obj
        self.keep = (sb.keep, rb.keep)
        return 0

    cdef int _one(self, _Buf b) except -1:
        """The call reads or writes `b` alone, and returns its object."""
        self._two(b, b)
        self.keep = b.keep
        return 0

    # ---- buffer rules shared by several collectives ------------------------

    cdef int _same_size(self, object sendbuf, object recvbuf, bint out_writable,
                        object dtype) except -1:
        """all_reduce / reduce: equal buffers; recvbuf None: in place."""
        cdef str api = self.api
        cdef _Buf sb, rb
        if recvbuf is None:
            sb = self._buf(sendbuf, "sendbuf", out_writable, dtype, True)
            return self._two(sb, sb)
        sb = self._buf(sendbuf, "sendbuf", False, dtype, True)
        rb = self._buf(recvbuf, "recvbuf", out_writable, dtype, True)
        _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
        _check_same_layout(sb, rb, api, "sendbuf", "recvbuf")
        if rb.count != sb.count:
            raise ValueError(f"{api}: recvbuf has {rb.count} elements, sendbuf "
                             f"{sb.count}; they must be equal")
        _check_no_overlap(sb, rb, api, -1)
        return self._two(sb, rb)

    cdef int _blocks(self, _Buf sb, _Buf rb, bint gather) except -1:
        """Check buffers where one holds `size` blocks the size of the other.

        gather: recvbuf is the larger one (all_gather); else sendbuf is
        (reduce_scatter, scatter). In place when the block is this rank's
        block of the larger buffer.
        """
        cdef str api = self.api
        cdef uint32_t size = self.c._size
        cdef _Buf whole = rb if gather else sb
        cdef _Buf block = sb if gather else rb
        cdef str wname = "recvbuf" if gather else "sendbuf"
        cdef str bname = "sendbuf" if gather else "recvbuf"
        _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
        if whole.count != block.count * size:
            raise ValueError(f"{api}: {wname} has {whole.count} elements; it must have "
                             f"{bname}'s {block.count} x {_n_ranks(size)} = "
                             f"{block.count * size}")
        _check_no_overlap(block, whole, api, self.c._rank * block.nbytes)
        return self._two(sb, rb)

    cdef int _not_in_place(self) except -1:
        cdef _Buf sb = self.sb, rb = self.rb
        if sb.nbytes and rb.nbytes and sb.ptr == rb.ptr:
            raise ValueError(f"{self.api}: in place is not supported; use separate buffers")
        return _check_no_overlap(sb, rb, self.api, -1)

    # ---- one per collective ----------------------------------------------

    cdef _Msg all_reduce(self, sendbuf, recvbuf, op, stream, dtype):
        self._open("all_reduce", _OP, op, None, stream)
        self._same_size(sendbuf, recvbuf, True, dtype)
        self.count = self.sb.count
        if _CHECK_HOST_READS:
            _host_guard(self.s, (self.sb,), ((self.rb, self.sb.nbytes),))
        return self

    cdef _Msg reduce(self, sendbuf, recvbuf, op, root, stream, dtype):
        self._open("reduce", _OP | _ROOT, op, root, stream)
        cdef bint at_root = self.root == self.c._rank
        self._same_size(sendbuf, recvbuf, at_root, dtype)
        self.count = self.sb.count
        if _CHECK_HOST_READS:
            _host_guard(self.s, (self.sb,), ((self.rb, self.sb.nbytes),) if at_root else ())
        return self

    cdef _Msg broadcast(self, buf, root, stream, dtype):
        self._open("broadcast", _ROOT, None, root, stream)
        cdef bint at_root = self.root == self.c._rank
        cdef _Buf b = self._buf(buf, "buf", not at_root, dtype, True)
        self._one(b)
        self.count = b.count
        if _CHECK_HOST_READS:     # the root reads buf, the others' is written
            if at_root:
                _host_guard(self.s, (b,), ())
            else:
                _host_guard(self.s, (), ((b, b.nbytes),))
        return self

    cdef _Msg all_gather(self, sendbuf, recvbuf, stream, dtype):
        self._open("all_gather", 0, None, None, stream)
        cdef _Buf sb = self._buf(sendbuf, "sendbuf", False, dtype)
        cdef _Buf rb = self._buf(recvbuf, "recvbuf", True, dtype)
        self._blocks(sb, rb, True)
        self.count = sb.count
        if _CHECK_HOST_READS:
            _host_guard(self.s, (sb,), ((rb, sb.nbytes * self.c._size),))
        return self

    cdef _Msg reduce_scatter(self, sendbuf, recvbuf, op, stream, dtype):
        self._open("reduce_scatter", _OP, op, None, stream)
        cdef _Buf sb = self._buf(sendbuf, "sendbuf", False, dtype)
        cdef _Buf rb = self._buf(recvbuf, "recvbuf", True, dtype)
        self._blocks(sb, rb, False)
        self.count = rb.count
        if _CHECK_HOST_READS:
            _host_guard(self.s, (sb,), ((rb, rb.nbytes),))
        return self

    cdef _Msg scatter(self, sendbuf, recvbuf, root, stream, dtype):
        self._open("scatter", _ROOT, None, root, stream)
        cdef _Buf rb = self._buf(recvbuf, "recvbuf", True, dtype)
        cdef _Buf sb
        if sendbuf is None and self.root != self.c._rank:
            self._two(rb, rb)
        else:
            sb = self._buf(sendbuf, "sendbuf", False, dtype)
            self._blocks(sb, rb, False)
        self.count = rb.count
        self.dt = <HcclDataType>rb.hdt
        if _CHECK_HOST_READS:
            _host_guard(self.s, (self.sb,), ((rb, rb.nbytes),))
        return self

    cdef _Msg gather(self, sendbuf, recvbuf, root, stream, dtype):
        self._open("gather", _ROOT, None, root, stream)
        cdef bint at_root = self.root == self.c._rank
        cdef _Buf sb = self._buf(sendbuf, "sendbuf", False, dtype)
        cdef _Buf rb
        if recvbuf is None and not at_root:
            self._two(sb, sb)
            self.result = None
        else:
            rb = self._buf(recvbuf, "recvbuf", at_root, dtype)
            self._blocks(sb, rb, True)
        self.count = sb.count
        if _CHECK_HOST_READS:     # recvbuf is written on the root only
            _host_guard(self.s, (sb,), ((self.rb, sb.nbytes * self.c._size),) if at_root else ())
        return self

    cdef _Msg all_to_all(self, sendbuf, recvbuf, stream, dtype):
        self._open("all_to_all", 0, None, None, stream)
        cdef str api = self.api
        cdef uint32_t size = self.c._size
        cdef _Buf sb = self._buf(sendbuf, "sendbuf", False, dtype)
        cdef _Buf rb = self._buf(recvbuf, "recvbuf", True, dtype)
        _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
        if sb.count != rb.count:
            raise ValueError(f"{api}: sendbuf has {sb.count} elements, recvbuf "
                             f"{rb.count}; they must be equal")
        if sb.count % size:
            raise ValueError(f"{api}: {sb.count} elements do not split into "
                             f"{size} equal blocks")
        if sb.ptr == rb.ptr and sb.nbytes > 0:
            raise ValueError(f"{api}: in place is not supported; use separate buffers")
        _check_no_overlap(sb, rb, api, -1)
        self._two(sb, rb)
        self.count = sb.count // size            # per block
        if _CHECK_HOST_READS:
            _host_guard(self.s, (sb,), ((rb, sb.nbytes),))
        return self

    cdef _Msg send(self, buf, peer, stream, dtype):
        self._open("send", _PEER, None, peer, stream)
        cdef _Buf b = self._buf(buf, "buf", False, dtype)
        self._one(b)
        self.count = b.count
        if _CHECK_HOST_READS:
            _host_guard(self.s, (b,), ())
        return self

    cdef _Msg recv(self, buf, peer, stream, dtype):
        self._open("recv", _PEER, None, peer, stream)
        cdef _Buf b = self._buf(buf, "buf", True, dtype)
        self._one(b)
        self.count = b.count
        if _CHECK_HOST_READS:
            _host_guard(self.s, (), ((b, b.nbytes),))
        return self

    cdef _Msg barrier(self, stream):
        self._open("barrier", 0, None, None, stream)
        return self

    # ---- variable-size collectives (counts: src/counts.pxi) ----------------

    cdef int _v_bufs(self, str api, int what, object op, object stream, object sendbuf,
                     object recvbuf, object dtype) except -1:
        self._open(api, what, op, None, stream)
        cdef _Buf sb = self._buf(sendbuf, "sendbuf", False, dtype)
        cdef _Buf rb = self._buf(recvbuf, "recvbuf", True, dtype)
        _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
        return self._two(sb, rb)

    cdef int _v_done(self, tuple arrays) except -1:
        """Hold the uint64 arrays for the call; host buffers are recorded, never filled."""
        self.arrays = arrays
        if _CHECK_HOST_READS:
            _host_guard(self.s, (self.sb, self.rb), ())
        return 0

    cdef _Msg all_gather_v(self, sendbuf, recvbuf, recv_counts, recv_displs, stream, dtype):
        self._v_bufs("all_gather_v", 0, None, stream, sendbuf, recvbuf, dtype)
        cdef str api = self.api
        cdef Comm c = self.c
        cdef _Buf sb = self.sb, rb = self.rb
        counts = _as_counts(recv_counts, c._size, api, "recv_counts")
        displs = _as_displs(recv_displs, counts, c._size, api, "recv_displs")
        if sb.count != counts[c._rank]:
            raise ValueError(f"{api}: sendbuf has {sb.count} elements but recv_counts[{c._rank}] "
                             f"(this rank's block) is {int(counts[c._rank])}; they must be equal")
        _check_extent(rb, counts, displs, api, "recvbuf", "recv_counts", "recv_displs")
        _check_disjoint(counts, displs, api, "recvbuf", "recv_displs")
        _check_no_overlap(sb, rb, api, int(displs[c._rank]) * _DT_ITEMSIZE[rb.hdt])
        self.count = sb.count
        self.rcounts = _u64_ptr(counts)
        self.rdispls = _u64_ptr(displs)
        self._v_done((counts, displs))
        return self

    cdef _Msg reduce_scatter_v(self, sendbuf, recvbuf, send_counts, send_displs, op, stream,
                               dtype):
        self._v_bufs("reduce_scatter_v", _OP, op, stream, sendbuf, recvbuf, dtype)
        cdef str api = self.api
        cdef Comm c = self.c
        cdef _Buf sb = self.sb, rb = self.rb
        counts = _as_counts(send_counts, c._size, api, "send_counts")
        displs = _as_displs(send_displs, counts, c._size, api, "send_displs")
        if rb.count != counts[c._rank]:
            raise ValueError(f"{api}: recvbuf has {rb.count} elements but send_counts[{c._rank}] "
                             f"(this rank's block) is {int(counts[c._rank])}; they must be equal")
        _check_extent(sb, counts, displs, api, "sendbuf", "send_counts", "send_displs")
        _check_no_overlap(rb, sb, api, int(displs[c._rank]) * _DT_ITEMSIZE[sb.hdt])
        self.count = rb.count
        self.scounts = _u64_ptr(counts)
        self.sdispls = _u64_ptr(displs)
        self._v_done((counts, displs))
        return self

    cdef _Msg all_to_all_v(self, sendbuf, recvbuf, send_counts, recv_counts, send_displs,
                           recv_displs, stream, dtype):
        self._v_bufs("all_to_all_v", 0, None, stream, sendbuf, recvbuf, dtype)
        cdef str api = self.api
        cdef Py_ssize_t n = self.c._size
        scounts = _as_counts(send_counts, n, api, "send_counts")
        rcounts = _as_counts(recv_counts, n, api, "recv_counts")
        sdispls = _as_displs(send_displs, scounts, n, api, "send_displs")
        rdispls = _as_displs(recv_displs, rcounts, n, api, "recv_displs")
        _check_extent(self.sb, scounts, sdispls, api, "sendbuf", "send_counts", "send_displs")
        _check_extent(self.rb, rcounts, rdispls, api, "recvbuf", "recv_counts", "recv_displs")
        _check_disjoint(rcounts, rdispls, api, "recvbuf", "recv_displs")
        self._not_in_place()
        self.scounts = _u64_ptr(scounts)
        self.sdispls = _u64_ptr(sdispls)
        self.rcounts = _u64_ptr(rcounts)
        self.rdispls = _u64_ptr(rdispls)
        self._v_done((scounts, sdispls, rcounts, rdispls))
        return self

    cdef _Msg all_to_all_vc(self, sendbuf, recvbuf, matrix, stream, dtype):
        self._v_bufs("all_to_all_vc", 0, None, stream, sendbuf, recvbuf, dtype)
        cdef str api = self.api
        cdef Comm c = self.c
        m = _as_counts(matrix, c._size, api, "send_count_matrix", True)
        _check_matrix_fits(m, c._size, c._rank, self.sb, self.rb, api)
        self._not_in_place()
        self.scounts = _u64_ptr(m)
        self._v_done((m,))
        return self

    cdef _Msg batch_send_recv(self, items, stream, dtype):
        self._open("batch_send_recv", 0, None, None, stream)
        cdef str api = self.api
        cdef list bufs, is_recv, peers, kinds
        bufs, is_recv, peers, kinds = _batch_items(self.c, items, dtype, api)
        _check_p2p_overlap(bufs, is_recv, api)
        cdef Py_ssize_t n = len(bufs), i
        cdef _Buf b
        self.items = <HcclSendRecvItem *>malloc(max(n, 1) * sizeof(HcclSendRecvItem))
        if self.items == NULL:
            raise MemoryError()
        self.nitems = <uint32_t>n
        for i in range(n):
            b = <_Buf>bufs[i]
            self.items[i].sendRecvType = <HcclSendRecvType><int>kinds[i]
            self.items[i].buf = b.ptr
            self.items[i].count = b.count
            self.items[i].dataType = <HcclDataType>b.hdt
            self.items[i].remoteRank = <uint32_t>peers[i]
        if _CHECK_HOST_READS:
            _host_guard(self.s, tuple(bufs),
                        tuple((x, (<_Buf>x).nbytes) for x, r in zip(bufs, is_recv) if r))
        self.keep = tuple((<_Buf>x).keep for x in bufs)
        return self


cdef inline _Msg _msg(object comm):
    """A new, empty message for one call on `comm`, a Comm (checked: the
    collectives live in its base class, src/collectives.pxi)."""
    cdef _Msg m = _Msg.__new__(_Msg)
    m.c = <Comm?>comm
    return m


cdef int _as_rank(Comm c, object x, str api, str what) except -1:
    """A root or peer argument: an int in 0 .. size - 1."""
    try:
        r = operator.index(x)
    except TypeError:
        raise TypeError(f"{api}: {what} must be an int, not {type(x).__name__}") from None
    if not 0 <= r < c._size:
        raise ValueError(f"{api}: {what} {r} out of range for a communicator "
                         f"of size {c._size}")
    return r


cdef Stream _comm_stream(Comm c, object stream, str api):
    """The stream argument (None: the current stream), on the communicator's device."""
    cdef Stream s = _resolve_stream(stream, api)
    cdef int32_t dev = s._resolve_device()
    if dev != c._device:
        if s._is_default:
            raise ValueError(f"{api}: the current device is {dev} but the communicator "
                             f"is on device {c._device}; set_device({c._device}) "
                             "or pass a stream of that device")
        raise ValueError(f"{api}: stream is on device {dev}, the communicator on "
                         f"device {c._device}")
    return s


cdef str _n_ranks(Py_ssize_t n):
    """'1 rank', '4 ranks'."""
    return f"{n} rank" if n == 1 else f"{n} ranks"
