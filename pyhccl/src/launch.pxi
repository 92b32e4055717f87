# Ranks started by hand, with no MPI: the group rendezvous of hccl/hccl_host.h
# (PyhcclRendezvousOpen) behind Comm.from_env (pyhccl/launch.py).


cdef class _Rendezvous:
    """An open group rendezvous. Rank 0's keeps the group's name taken until
    close(); Comm.from_env hands it to the communicator, whose destroy() closes it."""

    cdef PyhcclRendezvous _handle

    def close(self):
        """Close it (rank 0: the group's name is free again); a second call does nothing."""
        cdef PyhcclRendezvous h = self._handle
        self._handle = NULL
        if h != NULL:
            with nogil:
                PyhcclRendezvousClose(h)

    def __dealloc__(self):
        if self._handle != NULL:
            PyhcclRendezvousClose(self._handle)


cdef class _OpenCall:
    """Arguments and outcome of PyhcclRendezvousOpen run on a helper thread."""
    cdef bytes group
    cdef uint32_t n, rank
    cdef HcclRootInfo info
    cdef PyhcclRendezvous handle
    cdef HcclResult result
    cdef object message

    def run(self):
        cdef const char *g = self.group
        cdef HcclResult r
        with nogil:
            r = PyhcclRendezvousOpen(g, self.n, self.rank, &self.info, &self.handle)
        self.result = r
        if r != HCCL_SUCCESS:
            self.message = _recent_err_msg()


def _rendezvous_open(group, nranks, rank):
    """PyhcclRendezvousOpen(group, nranks, rank): (RootInfo, _Rendezvous).

    Rank 0 opens the group; the others wait for it (HCCL_CONNECT_TIMEOUT),
    in slices so that Ctrl-C cancels the wait (PyhcclCancelSetups)."""
    cdef _OpenCall call = _OpenCall()
    cdef _Rendezvous rdv
    cdef RootInfo ri
    if not isinstance(group, str):
        raise TypeError(f"Comm.from_env: group must be a str, not {type(group).__name__}")
    data = group.encode("utf-8")
    if not 0 < len(data) <= 127 or b"\0" in data:
        raise ValueError(f"Comm.from_env: group must be 1 to 127 bytes of UTF-8 without NUL, not {group!r}")
    call.group = data
    call.n = nranks
    call.rank = rank
    worker = threading.Thread(target=call.run, name="pyhccl-rendezvous", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(_SLICE_MS / 1000.0)
    except KeyboardInterrupt:
        if PYHCCL_HOST_RUNTIME:
            with nogil:
                PyhcclCancelSetups()
            worker.join(5.0)
        if not worker.is_alive() and call.result == HCCL_SUCCESS and call.handle != NULL:
            with nogil:
                PyhcclRendezvousClose(call.handle)
        raise
    if call.result != HCCL_SUCCESS:
        message = f"PyhcclRendezvousOpen failed: {_hccl_describe(call.result)}"
        if call.message:
            message += f" - {call.message}"
        raise HcclError(<int>call.result, message, "PyhcclRendezvousOpen")
    rdv = _Rendezvous.__new__(_Rendezvous)
    rdv._handle = call.handle
    ri = RootInfo.__new__(RootInfo)
    ri._data = PyBytes_FromStringAndSize(call.info.internal, sizeof(call.info))
    return ri, rdv
