# Variable-size collectives (AllGatherV, ReduceScatterV, AlltoAllV, AlltoAllVC)
# and BatchSendRecv: their count and displacement arguments, their checks and
# their C calls. The Comm methods in comm.pxi (with the docstrings) call these.
#
# Counts and displacements are in elements, one per rank; the C library copies
# them during the call, so the temporary uint64 arrays may go right after it.


cdef object _as_counts(object x, Py_ssize_t n, str api, str name, bint matrix=False):
    """`x` as a C-contiguous uint64 array of `n` (or n x n) non-negative ints."""
    cdef Py_ssize_t want = n * n if matrix else n
    what = f"an {n} x {n} matrix of ints" if matrix else f"a sequence of {n} ints"
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{api}: {name} must be {what}, not {type(x).__name__}")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        raise TypeError(f"{api}: {name} must be {what}") from None
    if arr.dtype.kind == "O":                  # ints beyond int64, or mixed objects
        try:
            vals = [operator.index(v) for v in arr.ravel()]
        except TypeError:
            raise TypeError(f"{api}: {name} must hold ints") from None
        if any(v < 0 or v >= 1 << 64 for v in vals):
            raise ValueError(f"{api}: {name} holds a value outside 0 .. 2**64-1")
        arr = np.array(vals, np.uint64).reshape(arr.shape)
    elif arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.uint64)            # np.asarray([]) is float64
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"{api}: {name} must hold ints, not {arr.dtype}")
    if matrix and arr.ndim == 2:
        if arr.shape != (n, n):
            raise ValueError(f"{api}: {name} has shape {arr.shape}; it must be "
                             f"({n}, {n}), one row per sending rank")
    elif arr.ndim != 1:
        raise ValueError(f"{api}: {name} must be {what}, not a {arr.ndim}-d array")
    elif arr.shape[0] != want:
        raise ValueError(f"{api}: {name} has {arr.shape[0]} entries; it must have "
                         + (f"{n} x {n} = {want}" if matrix else f"one per rank ({n})"))
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        bad = int(np.argmax(arr.ravel() < 0))
        raise ValueError(f"{api}: {name}[{bad}] is {arr.ravel()[bad]}; counts and "
                         "displacements must be >= 0")
    return np.ascontiguousarray(arr.reshape(want), dtype=np.uint64)


cdef object _as_displs(object x, object counts, Py_ssize_t n, str api, str name):
    """Displacements `x`, or (None) the blocks packed in rank order."""
    if x is None:
        d = np.zeros(n, np.uint64)
        if n > 1:
            d[1:] = np.cumsum(counts[:-1], dtype=np.uint64)
        return d
    return _as_counts(x, n, api, name)


cdef int _check_extent(_Buf b, object counts, object displs, str api, str bname,
                       str cname, str dname) except -1:
    """Every non-empty block [displs[i], displs[i] + counts[i]) lies inside `b`."""
    for i in range(len(counts)):
        c = int(counts[i])
        if c == 0:
            continue
        end = int(displs[i]) + c
        if end > b.count:
            raise ValueError(f"{api}: block {i} of {bname} ({dname}[{i}] = {int(displs[i])}, "
                             f"{cname}[{i}] = {c}) ends at element {end}, past the "
                             f"{b.count} elements of {bname}")
    return 0


cdef int _check_disjoint(object counts, object displs, str api, str bname,
                         str dname) except -1:
    """The blocks written into `bname` do not overlap (each rank needs its own place)."""
    blocks = sorted((int(displs[i]), int(counts[i]), i)
                    for i in range(len(counts)) if counts[i] > 0)
    for (d0, c0, i0), (d1, c1, i1) in zip(blocks, blocks[1:]):
        if d0 + c0 > d1:
            raise ValueError(f"{api}: blocks {i0} and {i1} of {bname} overlap (elements "
                             f"[{d0}, {d0 + c0}) and [{d1}, {d1 + c1}) by {dname}); each "
                             "rank's block needs its own place")
    return 0


cdef inline const void *_u64_ptr(object arr):
    return <const void *>cnp.PyArray_DATA(<cnp.ndarray>arr)


cdef object _all_gather_v(Comm c, object sendbuf, object recvbuf, object recv_counts,
                          object recv_displs, object stream, object dtype):
    cdef str api = "all_gather_v"
    c._check(api)
    cdef Stream s = c._stream(stream, api)
    cdef _Buf sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, c._device)
    cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, c._device)
    _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
    counts = _as_counts(recv_counts, c._size, api, "recv_counts")
    displs = _as_displs(recv_displs, counts, c._size, api, "recv_displs")
    if sb.count != counts[c._rank]:
        raise ValueError(f"{api}: sendbuf has {sb.count} elements but recv_counts[{c._rank}] "
                         f"(this rank's block) is {int(counts[c._rank])}; they must be equal")
    _check_extent(rb, counts, displs, api, "recvbuf", "recv_counts", "recv_displs")
    _check_disjoint(counts, displs, api, "recvbuf", "recv_displs")
    _check_no_overlap(sb, rb, api, int(displs[c._rank]) * _DT_ITEMSIZE[rb.hdt])
    cdef const void *pc = _u64_ptr(counts)
    cdef const void *pd = _u64_ptr(displs)
    if _CHECK_HOST_READS:
        _host_guard(s, (sb, rb), ())
    with nogil:
        CHKHCCL(HcclAllGatherV(sb.ptr, sb.count, rb.ptr, pc, pd, <HcclDataType>sb.hdt,
                               c._handle, s._handle), "HcclAllGatherV")
    _keep(s, (sb.keep, rb.keep))
    return rb.obj


cdef object _reduce_scatter_v(Comm c, object sendbuf, object recvbuf, object send_counts,
                              object send_displs, object op, object stream, object dtype):
    cdef str api = "reduce_scatter_v"
    c._check(api)
    cdef int cop = _as_op(op, api)
    cdef Stream s = c._stream(stream, api)
    cdef _Buf sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, c._device)
    cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, c._device)
    _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
    counts = _as_counts(send_counts, c._size, api, "send_counts")
    displs = _as_displs(send_displs, counts, c._size, api, "send_displs")
    if rb.count != counts[c._rank]:
        raise ValueError(f"{api}: recvbuf has {rb.count} elements but send_counts[{c._rank}] "
                         f"(this rank's block) is {int(counts[c._rank])}; they must be equal")
    _check_extent(sb, counts, displs, api, "sendbuf", "send_counts", "send_displs")
    _check_no_overlap(rb, sb, api, int(displs[c._rank]) * _DT_ITEMSIZE[sb.hdt])
    cdef const void *pc = _u64_ptr(counts)
    cdef const void *pd = _u64_ptr(displs)
    if _CHECK_HOST_READS:
        _host_guard(s, (sb, rb), ())
    with nogil:
        CHKHCCL(HcclReduceScatterV(sb.ptr, pc, pd, rb.ptr, rb.count, <HcclDataType>sb.hdt,
                                   <HcclReduceOp>cop, c._handle, s._handle),
                "HcclReduceScatterV")
    _keep(s, (sb.keep, rb.keep))
    return rb.obj


cdef int _check_not_in_place(_Buf sb, _Buf rb, str api) except -1:
    if sb.nbytes and rb.nbytes and sb.ptr == rb.ptr:
        raise ValueError(f"{api}: in place is not supported; use separate buffers")
    return _check_no_overlap(sb, rb, api, -1)


cdef object _all_to_all_v(Comm c, object sendbuf, object recvbuf, object send_counts,
                          object recv_counts, object send_displs, object recv_displs,
                          object stream, object dtype):
    cdef str api = "all_to_all_v"
    c._check(api)
    cdef Stream s = c._stream(stream, api)
    cdef _Buf sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, c._device)
    cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, c._device)
    _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
    scounts = _as_counts(send_counts, c._size, api, "send_counts")
    rcounts = _as_counts(recv_counts, c._size, api, "recv_counts")
    sdispls = _as_displs(send_displs, scounts, c._size, api, "send_displs")
    rdispls = _as_displs(recv_displs, rcounts, c._size, api, "recv_displs")
    _check_extent(sb, scounts, sdispls, api, "sendbuf", "send_counts", "send_displs")
    _check_extent(rb, rcounts, rdispls, api, "recvbuf", "recv_counts", "recv_displs")
    _check_disjoint(rcounts, rdispls, api, "recvbuf", "recv_displs")
    _check_not_in_place(sb, rb, api)
    cdef const void *psc = _u64_ptr(scounts)
    cdef const void *psd = _u64_ptr(sdispls)
    cdef const void *prc = _u64_ptr(rcounts)
    cdef const void *prd = _u64_ptr(rdispls)
    if _CHECK_HOST_READS:
        _host_guard(s, (sb, rb), ())
    with nogil:
        CHKHCCL(HcclAlltoAllV(sb.ptr, psc, psd, <HcclDataType>sb.hdt, rb.ptr, prc, prd,
                              <HcclDataType>rb.hdt, c._handle, s._handle), "HcclAlltoAllV")
    _keep(s, (sb.keep, rb.keep))
    return rb.obj


cdef object _all_to_all_vc(Comm c, object sendbuf, object recvbuf, object matrix,
                           object stream, object dtype):
    cdef str api = "all_to_all_vc"
    c._check(api)
    cdef Stream s = c._stream(stream, api)
    cdef _Buf sb = _as_buf(sendbuf, api, "sendbuf", False, dtype, c._device)
    cdef _Buf rb = _as_buf(recvbuf, api, "recvbuf", True, dtype, c._device)
    _check_same_dtype(sb, rb, api, "sendbuf", "recvbuf")
    m = _as_counts(matrix, c._size, api, "send_count_matrix", True)
    m2 = m.reshape(c._size, c._size)
    # Python ints: the sums must not wrap around as uint64 would.
    sends = sum(int(v) for v in m2[c._rank, :])
    recvs = sum(int(v) for v in m2[:, c._rank])
    if sends > sb.count:
        raise ValueError(f"{api}: row {c._rank} of send_count_matrix sends {sends} elements, "
                         f"more than the {sb.count} of sendbuf")
    if recvs > rb.count:
        raise ValueError(f"{api}: column {c._rank} of send_count_matrix brings {recvs} "
                         f"elements, more than the {rb.count} of recvbuf")
    _check_not_in_place(sb, rb, api)
    cdef const void *pm = _u64_ptr(m)
    if _CHECK_HOST_READS:
        _host_guard(s, (sb, rb), ())
    with nogil:
        CHKHCCL(HcclAlltoAllVC(sb.ptr, pm, <HcclDataType>sb.hdt, rb.ptr, <HcclDataType>rb.hdt,
                               c._handle, s._handle), "HcclAlltoAllVC")
    _keep(s, (sb.keep, rb.keep))
    return rb.obj


_P2P_KINDS = {"send": HCCL_SEND, "recv": HCCL_RECV}


cdef int _check_p2p_overlap(list bufs, list is_recv, str api) except -1:
    """No received-into buffer overlaps another buffer of the batch.

    Sweep by start address: a block overlaps an earlier one exactly when it
    starts before the largest end seen so far (of all blocks, or of receives).
    """
    spans = sorted((<uintptr_t>(<_Buf>bufs[i]).ptr, (<_Buf>bufs[i]).nbytes, i)
                   for i in range(len(bufs)) if (<_Buf>bufs[i]).nbytes > 0)
    end_all, who_all = 0, -1
    end_recv, who_recv = 0, -1
    for start, size, i in spans:
        other = who_all if is_recv[i] and start < end_all else (
            who_recv if start < end_recv else -1)
        if other >= 0:
            raise ValueError(f"{api}: the buffers of items[{other}] and items[{i}] overlap, "
                             "and one of them receives")
        if start + size > end_all:
            end_all, who_all = start + size, i
        if is_recv[i] and start + size > end_recv:
            end_recv, who_recv = start + size, i
    return 0


cdef object _batch_send_recv(Comm c, object items, object stream, object dtype):
    cdef str api = "batch_send_recv"
    c._check(api)
    cdef Stream s = c._stream(stream, api)
    cdef list entries
    try:
        entries = list(items)
    except TypeError:
        raise TypeError(f"{api}: items must be an iterable of (kind, buf, peer) tuples, "
                        f"not {type(items).__name__}") from None
    cdef Py_ssize_t n = len(entries), i
    if n > 0xffffffff:
        raise ValueError(f"{api}: too many items ({n})")
    cdef list bufs = [], is_recv = [], peers = [], kinds = []
    cdef _Buf b
    for i in range(n):
        item = entries[i]
        if not isinstance(item, (tuple, list)) or len(item) != 3:
            raise TypeError(f"{api}: items[{i}] must be a (kind, buf, peer) tuple, "
                            f"not {type(item).__name__}")
        kind, buf, peer = item
        k = _P2P_KINDS.get(kind.lower() if isinstance(kind, str) else None)
        if k is None:
            raise ValueError(f"{api}: items[{i}] kind must be 'send' or 'recv', not {kind!r}")
        peers.append(c._check_root(peer, api, f"items[{i}] peer"))
        b = _as_buf(buf, api, f"items[{i}] buf", k == HCCL_RECV, dtype, c._device)
        bufs.append(b)
        is_recv.append(k == HCCL_RECV)
        kinds.append(k)
    _check_p2p_overlap(bufs, is_recv, api)
    cdef HcclSendRecvItem *arr = <HcclSendRecvItem *>malloc(max(n, 1) * sizeof(HcclSendRecvItem))
    if arr == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            b = <_Buf>bufs[i]
            arr[i].sendRecvType = <HcclSendRecvType><int>kinds[i]
            arr[i].buf = b.ptr
            arr[i].count = b.count
            arr[i].dataType = <HcclDataType>b.hdt
            arr[i].remoteRank = <uint32_t>peers[i]
        if _CHECK_HOST_READS:
            _host_guard(s, tuple(bufs), tuple((x, (<_Buf>x).nbytes) for x, r in zip(bufs, is_recv) if r))
        with nogil:
            CHKHCCL(HcclBatchSendRecv(arr, <uint32_t>n, c._handle, s._handle),
                    "HcclBatchSendRecv")
    finally:
        free(arr)
    _keep(s, tuple((<_Buf>x).keep for x in bufs))
    return None
