# Waits that Ctrl-C can interrupt. A blocking C wait never returns to Python,
# so long waits are cut into slices of _SLICE_MS; between slices Python's
# signal handlers run (KeyboardInterrupt within half a second). An
# interrupted rank aborts its communicators, so that its peers fail at once
# instead of waiting out the exec timeout.

from cpython.exc cimport PyErr_CheckSignals

cdef int32_t _SLICE_MS = 100

cdef extern from *:
    """
    /* On the host runtime, SIGINT is noted by the runtime (hostrtNoteInterrupt)
       before Python's own handler runs, so that a synchronize that runs a
       collective itself gives up its waits at once and returns to Python.
       A CANN toolkit has none of this. */
    #include <signal.h>
    #include <string.h>
    #ifdef PYHCCL_CANN
    static uint64_t pyhccl_interrupt_count(void) { return 0; }
    static int pyhccl_note_sigint(void) { return 0; }
    static aclError pyhccl_sync_interruptible(aclrtStream s, uint64_t since, int32_t *interrupted) {
      (void)since; *interrupted = 0; return aclrtSynchronizeStream(s);
    }
    #else
    extern void hostrtNoteInterrupt(void);
    extern uint64_t hostrtInterruptCount(void);
    extern aclError hostrtSynchronizeStreamInterruptible(aclrtStream, uint64_t, int32_t *);
    static struct sigaction pyhccl_prev_sigint;
    static void pyhccl_on_sigint(int sig, siginfo_t *info, void *ctx) {
      hostrtNoteInterrupt();
      if (pyhccl_prev_sigint.sa_flags & SA_SIGINFO)
        pyhccl_prev_sigint.sa_sigaction(sig, info, ctx);
      else if (pyhccl_prev_sigint.sa_handler != SIG_DFL && pyhccl_prev_sigint.sa_handler != SIG_IGN)
        pyhccl_prev_sigint.sa_handler(sig);
    }
    /* Wraps the handler in place now (Python's, normally); a later
       signal.signal(SIGINT, ...) replaces the wrapper, and then interrupts
       reach Python only once the running operation ends. */
    static int pyhccl_note_sigint(void) {
      struct sigaction cur, mine;
      if (sigaction(SIGINT, NULL, &cur) != 0) return -1;
      if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN))
        return 0;
      if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == pyhccl_on_sigint) return 0;
      pyhccl_prev_sigint = cur;
      memset(&mine, 0, sizeof(mine));
      mine.sa_sigaction = pyhccl_on_sigint;
      mine.sa_flags = (cur.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
      mine.sa_mask = cur.sa_mask;
      return sigaction(SIGINT, &mine, NULL);
    }
    static uint64_t pyhccl_interrupt_count(void) { return hostrtInterruptCount(); }
    static aclError pyhccl_sync_interruptible(aclrtStream s, uint64_t since, int32_t *interrupted) {
      return hostrtSynchronizeStreamInterruptible(s, since, interrupted);
    }
    #endif
    """
    uint64_t pyhccl_interrupt_count() nogil
    int pyhccl_note_sigint()
    aclError pyhccl_sync_interruptible(aclrtStream s, uint64_t since, int32_t *interrupted) nogil

if threading.current_thread() is threading.main_thread():
    pyhccl_note_sigint()


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
