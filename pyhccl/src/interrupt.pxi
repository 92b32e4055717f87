# Waits that Ctrl-C can interrupt. A blocking C wait never returns to Python,
# so long waits are cut into slices of _SLICE_MS; between slices Python's
# signal handlers run (KeyboardInterrupt within half a second). An
# interrupted rank aborts its communicators, so that its peers fail at once
# instead of waiting out the exec timeout.

from cpython.exc cimport PyErr_CheckSignals

cdef int32_t _SLICE_MS = 100


cdef int _on_interrupt() except -1:
    """Abort this process's live communicators (their peers are told)."""
    for comm in list(_live_comms):
        try:
            comm.abort()
        except Exception:
            pass
    return 0


cdef int _check_signals() except -1:
    """Run Python's signal handlers; on KeyboardInterrupt abort the communicators first."""
    try:
        PyErr_CheckSignals()
    except KeyboardInterrupt:
        _on_interrupt()
        raise
    return 0
