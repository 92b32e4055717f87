# Count and displacement arguments of the variable-size collectives
# (AllGatherV, ReduceScatterV, AlltoAllV, AlltoAllVC) and the items of
# BatchSendRecv: parsed and checked here for the message layer (src/msg.pxi).
#
# Counts and displacements are in elements, one per rank; the C library copies
# them during the call, so the uint64 arrays need live only as long as the call.


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


cdef int _check_matrix_fits(object m, Py_ssize_t n, Py_ssize_t rank, _Buf sb, _Buf rb,
                            str api) except -1:
    """This rank's row of the flat n x n matrix `m` fits in sendbuf, its column in recvbuf."""
    m2 = m.reshape(n, n)
    # Python ints: the sums must not wrap around as uint64 would.
    sends = sum(int(v) for v in m2[rank, :])
    recvs = sum(int(v) for v in m2[:, rank])
    if sends > sb.count:
        raise ValueError(f"{api}: row {rank} of send_count_matrix sends {sends} elements, "
                         f"more than the {sb.count} of sendbuf")
    if recvs > rb.count:
        raise ValueError(f"{api}: column {rank} of send_count_matrix brings {recvs} "
                         f"elements, more than the {rb.count} of recvbuf")
    return 0


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


cdef tuple _batch_items(Comm c, object items, object dtype, str api):
    """(bufs, is_recv, peers, kinds) of batch_send_recv's (kind, buf, peer) items."""
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
    for i in range(n):
        item = entries[i]
        if not isinstance(item, (tuple, list)) or len(item) != 3:
            raise TypeError(f"{api}: items[{i}] must be a (kind, buf, peer) tuple, "
                            f"not {type(item).__name__}")
        kind, buf, peer = item
        k = _P2P_KINDS.get(kind.lower() if isinstance(kind, str) else None)
        if k is None:
            raise ValueError(f"{api}: items[{i}] kind must be 'send' or 'recv', not {kind!r}")
        peers.append(_as_rank(c, peer, api, f"items[{i}] peer"))
        bufs.append(_as_buf(buf, api, f"items[{i}] buf", k == HCCL_RECV, dtype, c._device))
        is_recv.append(k == HCCL_RECV)
        kinds.append(k)
    return bufs, is_recv, peers, kinds
