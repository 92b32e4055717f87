# Groups of calls (HcclGroupStart / HcclGroupEnd), and the keep-alive of the
# Python buffers of calls that a group issues only at its end.


cdef int _keep(Stream s, object objects) except -1:
    """Keep `objects` alive until the call just enqueued on `s` is done.

    Inside a group the calls are issued by group_end(), so their keep-alive
    starts then.
    """
    pending = _tls.group_keep
    if pending is not None:
        pending.append((s, objects))
        return 0
    return s._keepalive(objects)


def group_start():
    """Start a group of calls issued together by group_end() (HcclGroupStart).

    Groups nest; only the outermost group_end() issues the calls. Use the
    group() context manager to make sure the group is ended.
    """
    _ensure_init()
    with nogil:
        CHKHCCL(HcclGroupStart(), "HcclGroupStart")
    _tls.group_depth += 1
    if _tls.group_depth == 1:
        _tls.group_keep = []


def group_end():
    """End the group started by group_start() and issue its calls (HcclGroupEnd)."""
    cdef Stream s
    depth = _tls.group_depth
    try:
        with nogil:
            CHKHCCL(HcclGroupEnd(), "HcclGroupEnd")
    finally:
        if depth > 0:
            _tls.group_depth = depth - 1
            if depth == 1:
                pending = _tls.group_keep
                _tls.group_keep = None
                by_stream = {}
                for s, objects in pending:
                    by_stream.setdefault(s, (s, []))[1].append(objects)
                for s, objects in by_stream.values():
                    s._keepalive(tuple(objects))


@contextlib.contextmanager
def group():
    """Run the body between group_start() and group_end() (ended even on error)."""
    group_start()
    try:
        yield
    finally:
        group_end()
