# PYHCCL_CHECK_HOST_READS=1: a debug mode for host buffers of asynchronous calls.
#
# A DeviceArray knows its pending writers, so its host reads wait for them
# (devarray.pxi, _wait_users). A host array (numpy, bytes, ...) cannot: reading
# it before its stream ran the call gives stale data that looks plausible. In
# this mode every call records the host ranges it reads and writes, and fills
# the bytes a call will write with 0xFF when it is enqueued, so that an early
# read gives NaN (floats) or -1 (integers) instead of the old values. Only
# where that is safe: never a range an earlier pending call (recorded here)
# still reads or writes, nor one the call itself reads (in place). The V
# collectives' outputs (gaps between displacements) and batches are recorded
# but never filled.

cdef bint _CHECK_HOST_READS = os.environ.get("PYHCCL_CHECK_HOST_READS", "0") not in ("", "0")
cdef list _host_inflight = []      # (stream, ticket, lo, hi) of pending calls


cdef bint _host_pending(Stream s, uint64_t ticket) except -1:
    if s._destroyed:
        return False
    s._prune()
    # A ticket past what the stream enqueued (a group's guess) ends with a drain.
    return s._completed < min(ticket, s._enqueued)


cdef bint _overlaps(uintptr_t lo, uintptr_t hi, list ranges):
    for r in ranges:
        if lo < r[1] and r[0] < hi:
            return True
    return False


cdef int _host_guard(Stream s, tuple reads, tuple writes) except -1:
    """Before the call is enqueued on `s`: `reads` are _Bufs it reads, `writes`
    (_Buf, bytes) pairs it writes; device buffers are left out."""
    global _host_inflight
    cdef _Buf b
    cdef uintptr_t lo
    _host_inflight = [e for e in _host_inflight if _host_pending(<Stream>e[0], e[1])]
    busy = [(e[2], e[3]) for e in _host_inflight]
    mine = []
    for b in reads:
        if b is not None and not isinstance(b.obj, DeviceArray):
            mine.append((<uintptr_t>b.ptr, <uintptr_t>b.ptr + <uintptr_t>b.nbytes))
    fill = []
    for b, nbytes in writes:
        if isinstance(b.obj, DeviceArray):
            continue
        lo = <uintptr_t>b.ptr
        nbytes = min(nbytes, b.nbytes)
        if not _overlaps(lo, lo + nbytes, busy) and not _overlaps(lo, lo + nbytes, mine):
            fill.append((lo, nbytes))
        mine.append((lo, lo + <uintptr_t>b.nbytes))
    for lo, nbytes in fill:
        memset(<void *>lo, 0xFF, <size_t>nbytes)
    # Its ticket once kept (group.pxi): the next one on `s`; inside a group,
    # one per call kept so far (an upper bound, which a drain of `s` ends).
    group = _tls.group_keep
    ticket = s._enqueued + 1 + (len(group) if group is not None else 0)
    for lo, hi in mine:
        _host_inflight.append((s, ticket, lo, hi))
    return 0
