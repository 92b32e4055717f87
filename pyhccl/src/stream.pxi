# Streams, the thread's current stream, and the keep-alive list that holds the
# Python objects of asynchronous calls until the stream has run them.

class _ThreadState(threading.local):
    """Each thread's state. The class attributes are every thread's first values, so
    reading one never fails (getattr with a default would build an AttributeError,
    message and all, on every call that finds none)."""
    stack = None        # streams made current by `with stream:`, innermost last
    group_depth = 0     # group_start() nesting
    group_keep = None   # inside a group: (stream, objects) kept alive at its end


_tls = _ThreadState()

cdef extern from *:
    """
    /* The host runtime lets a host function fail its stream task, and
       counts a stream's tasks, so that a keep-alive needs no event
       (csrc/runtime/hostrt.h); a CANN toolkit has neither (the keep-alive
       records an event there, and these are never called). */
    #ifdef PYHCCL_CANN
    #define PYHCCL_FAIL_CURRENT_TASK(code, msg) ((void)(msg), (code))
    #define PYHCCL_STREAM_MARK(s, id, mark, fin) ((void)(s), (void)(id), (void)(mark), (void)(fin), ACL_ERROR_RT_FAILURE)
    #define PYHCCL_STREAM_FINISHED(id, fin) ((void)(id), (void)(fin), ACL_ERROR_RT_FAILURE)
    #else
    extern int hostrtFailCurrentTask(int code, const char *message);
    extern aclError hostrtStreamMark(aclrtStream stream, uint64_t *streamId, uint64_t *mark,
                                     uint64_t *finished);
    extern aclError hostrtStreamFinished(uint64_t streamId, uint64_t *finished);
    #define PYHCCL_FAIL_CURRENT_TASK(code, msg) hostrtFailCurrentTask((code), (msg))
    #define PYHCCL_STREAM_MARK(s, id, mark, fin) hostrtStreamMark((s), (id), (mark), (fin))
    #define PYHCCL_STREAM_FINISHED(id, fin) hostrtStreamFinished((id), (fin))
    #endif
    """
    aclError PYHCCL_FAIL_CURRENT_TASK(aclError code, const char *message) nogil
    aclError PYHCCL_STREAM_MARK(aclrtStream s, uint64_t *stream_id, uint64_t *mark,
                                uint64_t *finished) nogil
    aclError PYHCCL_STREAM_FINISHED(uint64_t stream_id, uint64_t *finished) nogil


cdef int _raise_op_error(aclrtStream handle) except -1:
    """Raise HcclError if the stream's failed task was an HCCL operation."""
    cdef PyhcclOpError info
    cdef int32_t found = 0
    if not PYHCCL_HOST_RUNTIME:
        return 0
    with nogil:
        if PyhcclStreamTakeOpError(handle, &info, &found) != HCCL_SUCCESS:
            found = 0
    if not found:
        return 0
    op = info.opName.decode("utf-8", "replace")
    text = info.message.decode("utf-8", "replace")
    if text not in _recent_err_msg():
        return 0  # the stream's first failure was another task's
    error = HcclError(info.code, f"{op} failed: {_hccl_describe(<HcclResult>info.code)} - {text}", op)
    error.seq = info.seq
    error.rank = info.rank if info.rank >= 0 else None
    raise error


cdef int _timeout_ms(object timeout, str api) except? -2:
    """Seconds (None = forever) -> int32 milliseconds (-1 = forever)."""
    if timeout is None:
        return -1
    t = float(timeout)
    if t < 0 or t != t:
        raise ValueError(f"{api}: timeout must be >= 0 seconds or None, not {timeout!r}")
    return <int>min(t * 1000.0 + 0.5, 2147483647.0)


cdef bint _same_objects(object a, object b):
    """Whether keep-alive `a` holds the same objects as `b` (identity, one tuple deep)."""
    cdef Py_ssize_t i
    if a is b:
        return True
    if type(a) is not tuple or type(b) is not tuple or len(<tuple>a) != len(<tuple>b):
        return False
    for i in range(len(<tuple>a)):
        if (<tuple>a)[i] is not (<tuple>b)[i]:
            return False
    return True


STREAM_FAST_LAUNCH = ACL_STREAM_FAST_LAUNCH
STREAM_FAST_SYNC = ACL_STREAM_FAST_SYNC
STREAM_PERSISTENT = ACL_STREAM_PERSISTENT
STREAM_HUGE = ACL_STREAM_HUGE
STREAM_CPU_SCHEDULE = ACL_STREAM_CPU_SCHEDULE
STREAM_DEVICE_USE_ONLY = ACL_STREAM_DEVICE_USE_ONLY


cdef class Stream:
    """An in-order queue of device work (aclrtStream).

    Stream() creates a stream on the current device (aclrtCreateStream). Work
    is enqueued on it by the collectives and asynchronous copies; use it as a
    context manager (`with stream:`) to make it the thread's current stream,
    which every `stream=None` argument means. default_stream() is the device's
    default stream (handle NULL).

    Args:
        priority: optional priority 0..7 (aclrtCreateStreamWithConfig).
        flags: optional STREAM_* flags (aclrtCreateStreamWithConfig).
            STREAM_FAST_SYNC: a synchronize right after the work was enqueued
            runs it on the calling thread without waking the stream's worker
            (faster round trips); work nobody synchronizes on starts up to
            PYHCCL_FAST_SYNC_TICK_US (1 ms) late. The other flags change nothing.
    """

    cdef aclrtStream _handle
    cdef int32_t _device        # -1: the default stream of the current device
    cdef bint _is_default
    cdef bint _destroyed
    cdef object _pending        # deque of (stream id, mark, objects), or with a CANN
                                # toolkit (event handle, device, objects)
    cdef list _free_events      # [(event handle, device)] ready for reuse
    cdef list _host_errors      # exceptions of host functions not yet reported
    cdef uint64_t _enqueued     # calls kept alive so far (tickets 1, 2, ...)
    cdef uint64_t _completed    # of those, the ones seen complete, oldest first
    cdef object __weakref__

    def __cinit__(self, priority=None, flags=None, *, _default=False):
        cdef aclrtStream handle = NULL
        cdef uint32_t prio = 0, flg = 0
        self._pending = deque()
        self._free_events = []
        self._host_errors = []
        self._device = -1
        if _default:
            self._is_default = True
            return
        self._device = _current_device()
        if priority is None and flags is None:
            with nogil:
                CHKACL(aclrtCreateStream(&handle), "aclrtCreateStream")
        else:
            prio = 0 if priority is None else priority
            flg = 0 if flags is None else flags
            with nogil:
                CHKACL(aclrtCreateStreamWithConfig(&handle, prio, flg),
                       "aclrtCreateStreamWithConfig")
        self._handle = handle
        _live_streams.add(self)

    def __dealloc__(self):
        # Wait for the work that may still use memory we are about to release.
        cdef aclrtStream handle = self._handle
        if self._is_default or self._destroyed or handle == NULL:
            return
        self._handle = NULL
        if not _initialized:
            return
        with nogil:
            aclrtSynchronizeStream(handle)
        try:
            self._release_events()
        except Exception:
            pass
        with nogil:
            aclrtDestroyStream(handle)

    # ---- properties ------------------------------------------------------

    @property
    def handle(self):
        """The aclrtStream handle as an int (0 for the default stream)."""
        return <uintptr_t>self._handle

    @property
    def device(self):
        """Device id of the stream (the current device for the default stream)."""
        if self._is_default:
            return _current_device()
        return self._device

    @property
    def is_default(self):
        """True for the default stream (handle NULL)."""
        return self._is_default

    def __repr__(self):
        if self._is_default:
            return "Stream(default)"
        if self._destroyed:
            return "Stream(destroyed)"
        return f"Stream(handle=0x{<uintptr_t>self._handle:x}, device={self._device})"

    def __eq__(self, other):
        if not isinstance(other, Stream):
            return NotImplemented
        return self is other or (self._is_default and (<Stream>other)._is_default)

    def __hash__(self):
        # Not the handle: destroy() clears it, and the hash must not change
        # (destroy() discards the stream from the _live_streams WeakSet).
        return hash(Stream) if self._is_default else object.__hash__(self)

    # ---- internals -------------------------------------------------------

    cdef int _check(self, str api) except -1:
        if self._destroyed:
            raise ValueError(f"{api}: stream is destroyed")
        return 0

    cdef int32_t _resolve_device(self) except -2:
        if self._is_default:
            return _current_device()
        return self._device

    cdef int _prune(self) except -1:
        """Drop the kept objects of every completed call, oldest first."""
        cdef aclrtEvent ev
        cdef aclrtEventRecordedStatus status
        cdef aclError err
        cdef uint64_t sid = 0, finished = 0
        if PYHCCL_HOST_RUNTIME:
            # Entries (stream id, mark, objects, calls): one count covers every
            # entry of a stream (the default stream is per device, hence the id).
            while self._pending:
                sid = self._pending[0][0]
                with nogil:
                    if PYHCCL_STREAM_FINISHED(sid, &finished) != ACL_SUCCESS:
                        finished = UINT64_MAX
                if self._drop_done(sid, finished) == 0:
                    break
            return 0
        # Entries (event, device, objects).
        while self._pending:
            entry = self._pending[0]
            ev = <aclrtEvent><uintptr_t>entry[0]
            status = ACL_EVENT_RECORDED_STATUS_NOT_READY
            with nogil:
                err = aclrtQueryEventStatus(ev, &status)
            if err == ACL_SUCCESS and status != ACL_EVENT_RECORDED_STATUS_COMPLETE:
                break
            self._pending.popleft()
            self._completed += 1
            if err == ACL_SUCCESS:
                self._free_events.append((entry[0], entry[1]))
            else:
                with nogil:
                    aclrtDestroyEvent(ev)
        return 0

    cdef Py_ssize_t _drop_done(self, uint64_t sid, uint64_t finished) except -1:
        """Host runtime: drop the leading entries of stream `sid` that `finished`
        tasks cover; returns how many."""
        cdef Py_ssize_t n = 0
        while self._pending:
            entry = self._pending[0]
            if <uint64_t>entry[0] != sid or <uint64_t>entry[1] > finished:
                break
            self._pending.popleft()
            self._completed += <uint64_t>entry[3]
            n += 1
        return n

    cdef int _keepalive(self, object objects) except -1:
        """Hold `objects` until the work enqueued so far on this stream is done."""
        cdef aclrtEvent ev = NULL
        cdef int32_t dev
        cdef Py_ssize_t i
        cdef uint64_t sid = 0, mark = 0, finished = 0
        if PYHCCL_HOST_RUNTIME:
            # The mark's snapshot also prunes this stream's entries.
            with nogil:
                CHKACL(PYHCCL_STREAM_MARK(self._handle, &sid, &mark, &finished),
                       "hostrtStreamMark")
            self._drop_done(sid, finished)
            if self._pending and <uint64_t>self._pending[0][0] != sid:
                self._prune()   # another device's default stream came first
            last = self._pending[-1] if self._pending else None
            if last is not None and <uint64_t>last[0] == sid and _same_objects(last[2], objects):
                # The same buffers as the call before: its entry, kept until this
                # call is done, holds them for both. A loop of queued calls then
                # keeps one entry, not one per call (each a tuple for the GC to scan).
                self._pending[-1] = (sid, mark, last[2], last[3] + 1)
            else:
                self._pending.append((sid, mark, objects, 1))
        else:
            self._prune()
            dev = self._resolve_device()
            for i in range(len(self._free_events) - 1, -1, -1):
                if self._free_events[i][1] == dev:
                    ev = <aclrtEvent><uintptr_t>self._free_events.pop(i)[0]
                    break
            if ev == NULL:
                with nogil:
                    CHKACL(aclrtCreateEvent(&ev), "aclrtCreateEvent")
            try:
                with nogil:
                    CHKACL(aclrtRecordEvent(ev, self._handle), "aclrtRecordEvent")
            except BaseException:
                with nogil:
                    aclrtDestroyEvent(ev)
                raise
            self._pending.append((<uintptr_t>ev, dev, objects))
        self._enqueued += 1
        _note_users(self, objects)
        return 0

    cdef int _release_events(self) except -1:
        cdef aclrtEvent ev
        if self._free_events is not None:
            for entry in self._free_events:
                ev = <aclrtEvent><uintptr_t>entry[0]
                with nogil:
                    aclrtDestroyEvent(ev)
        self._free_events = []
        if self._pending is not None and not PYHCCL_HOST_RUNTIME:
            for entry in self._pending:
                ev = <aclrtEvent><uintptr_t>entry[0]
                with nogil:
                    aclrtDestroyEvent(ev)
        self._pending = deque()
        self._completed = self._enqueued
        return 0

    cdef int _raise_failure(self, aclError err, str api) except -1:
        """Raise the stream's error (if any), chained to a failed host function's exception."""
        cdef bytes name = api.encode()
        if err == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT:
            CHKACL(err, name)                    # nothing was reported yet
        errors = list(self._host_errors)
        self._host_errors.clear()              # the stream reports one failure, then is clean
        if err != ACL_SUCCESS:
            _raise_op_error(self._handle)      # a collective's failure: as an HcclError
        if err == ACL_SUCCESS:
            if errors and not PYHCCL_HOST_RUNTIME:
                # CANN cannot fail a task from a host function: report it here.
                tag, cause = errors[0]
                raise AclError(ACL_ERROR_RT_FAILURE,
                               f"{api} failed: {_host_func_message(tag, cause)}", api) from cause
            return 0
        try:
            CHKACL(err, name)
        except AclError as error:
            # The runtime reports the first failed task; chain the exception
            # whose message it carries (others may have been reported already,
            # e.g. by synchronize_device()).
            text = str(error)
            for tag, cause in errors:
                if tag + " raised" in text:
                    raise error from cause
            raise
        return 0

    def _discard_pending(self):
        self._pending.clear()
        self._free_events = []
        self._completed = self._enqueued

    def _pending_count(self):
        """Number of calls whose objects are still held (for tests)."""
        if PYHCCL_HOST_RUNTIME:
            return sum(entry[3] for entry in self._pending)
        return len(self._pending)

    # ---- public methods --------------------------------------------------

    def synchronize(self, timeout=None):
        """Wait until all work on the stream is done (aclrtSynchronizeStream).

        The GIL is released while waiting.

        Args:
            timeout: seconds to wait at most (None = no limit), via
                aclrtSynchronizeStreamWithTimeout.

        Raises:
            AclError: a task on the stream failed (its first error; for a
                host function that raised, its __cause__ is the exception),
                or the timeout expired (ACL_ERROR_RT_STREAM_SYNC_TIMEOUT).
        """
        cdef int32_t ms = _timeout_ms(timeout, "synchronize")
        cdef aclError err
        cdef int32_t slice_ms
        self._check("synchronize")
        if self._is_default:
            _current_device()
        cdef uint64_t since
        cdef int32_t interrupted = 0
        if ms < 0:
            # No limit: the runtime may run queued work on this thread (no hand-off
            # to the worker and back) and returns early when Ctrl-C arrives.
            while True:
                since = pyhccl_interrupt_count()
                with nogil:
                    err = pyhccl_sync_interruptible(self._handle, since, &interrupted)
                if not interrupted:
                    break
                _check_signals()
        else:
            deadline = time.monotonic() + ms / 1000.0
            while True:  # in slices, so that Ctrl-C gets through
                slice_ms = max(0, min(_SLICE_MS, int((deadline - time.monotonic()) * 1000 + 0.5)))
                with nogil:
                    err = aclrtSynchronizeStreamWithTimeout(self._handle, slice_ms)
                if err != ACL_ERROR_RT_STREAM_SYNC_TIMEOUT or time.monotonic() >= deadline:
                    break
                _check_signals()
        if err == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT:
            self._prune()
            # the runtime's message names the last slice's milliseconds, not the user's timeout
            raise AclError(err, f"synchronize: stream not drained after the {timeout} s timeout",
                           "aclrtSynchronizeStreamWithTimeout")
        elif self._is_default:
            self._prune()
        else:
            # Drained (also after a failed task: later tasks still ran).
            if not PYHCCL_HOST_RUNTIME:
                for entry in self._pending:
                    self._free_events.append((entry[0], entry[1]))
            self._pending.clear()
            self._completed = self._enqueued
        self._raise_failure(err, "aclrtSynchronizeStream" if ms < 0
                            else "aclrtSynchronizeStreamWithTimeout")

    def query(self):
        """Return True if all work on the stream is done (aclrtStreamQuery)."""
        cdef aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY
        self._check("query")
        if self._is_default:
            _current_device()
        with nogil:
            CHKACL(aclrtStreamQuery(self._handle, &status), "aclrtStreamQuery")
        self._prune()
        return status == ACL_STREAM_STATUS_COMPLETE

    def wait_event(self, Event event not None):
        """Make later work on this stream wait for `event` (aclrtStreamWaitEvent).

        Returns at once; the wait happens on the stream.
        """
        self._check("wait_event")
        event._check("wait_event")
        if self._is_default:
            _current_device()
        with nogil:
            CHKACL(aclrtStreamWaitEvent(self._handle, event._handle), "aclrtStreamWaitEvent")

    def record_event(self, Event event=None):
        """Record `event` (a new Event if None) on this stream and return it.

        The event completes when the work enqueued before it is done
        (aclrtRecordEvent).
        """
        self._check("record_event")
        if event is None:
            event = Event()
        event.record(self)
        return event

    def record(self, Event event=None):
        """Record `event` (a new Event if None) on this stream and return it (= record_event())."""
        return self.record_event(event)

    def launch_host_func(self, fn, *args):
        """Enqueue a call of ``fn(*args)`` on the stream (aclrtLaunchHostFunc).

        The call runs in stream order, holding the GIL, on the stream's worker
        thread or on a thread synchronizing with the stream (which runs work it
        finds queued itself); later work on the stream waits for it to return.
        Returns at once.

        An exception it raises fails the stream like any failed task: the
        next synchronize() raises AclError (ACL_ERROR_RT_FAILURE) whose
        __cause__ is that exception; work after it still runs unless the
        stream stops on failure.
        """
        if not callable(fn):
            raise TypeError(f"launch_host_func: fn must be callable, not {type(fn).__name__}")
        self._check("launch_host_func")
        if self._is_default:
            _current_device()
        payload = (fn, args, self._host_errors)
        with nogil:
            CHKACL(aclrtLaunchHostFunc(self._handle, _host_func_trampoline, <void *>payload),
                   "aclrtLaunchHostFunc")
        self._keepalive(payload)

    def destroy(self):
        """Wait for the stream's work, then destroy it (aclrtDestroyStream).

        Does nothing for the default stream or a destroyed stream.
        """
        cdef aclrtStream handle = self._handle
        cdef aclError err
        if self._is_default or self._destroyed:
            return
        self._destroyed = True
        self._handle = NULL
        _live_streams.discard(self)
        with nogil:
            aclrtSynchronizeStream(handle)
        self._release_events()
        with nogil:
            err = aclrtDestroyStream(handle)
        CHKACL(err, "aclrtDestroyStream")

    def __enter__(self):
        self._check("__enter__")
        stack = _tls.stack
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        stack = _tls.stack
        if stack and stack[-1] is self:
            stack.pop()
        elif stack and self in stack:
            stack.remove(self)
        return False


_host_func_ids = itertools.count(1)


cdef str _host_func_message(str tag, object exc):
    return f"{tag} raised {type(exc).__name__}: {exc}"


cdef void _host_func_trampoline(void *arg) noexcept with gil:
    # `arg` is a (fn, args, errors) tuple kept alive by the stream's keep-alive
    # list. An exception goes to `errors` (the stream's, to be chained by its
    # next synchronize) and fails the running task.
    cdef object payload = <object>arg
    cdef bytes message
    try:
        payload[0](*payload[1])
    except BaseException as exc:
        try:
            # A tag the runtime's (possibly truncated) message keeps near its start.
            tag = f"host function #{next(_host_func_ids)} ({getattr(payload[0], '__qualname__', '?')})"
            payload[2].append((tag, exc))
            message = ("aclrtLaunchHostFunc: " + _host_func_message(tag, exc)).encode("utf-8", "replace")
            PYHCCL_FAIL_CURRENT_TASK(ACL_ERROR_RT_FAILURE, message)
        except BaseException:
            pass


cdef Stream _default_stream = Stream(_default=True)


def default_stream():
    """Return the default stream (handle NULL) of the current device."""
    return _default_stream


def current_stream():
    """Return the thread's current stream (set by `with stream:`), else the default stream."""
    stack = _tls.stack
    if stack:
        return stack[-1]
    return _default_stream


cdef Stream _resolve_stream(object stream, str api):
    cdef Stream s
    if stream is None:
        stack = _tls.stack
        s = stack[-1] if stack else _default_stream
    elif isinstance(stream, Stream):
        s = <Stream>stream
    else:
        raise TypeError(f"{api}: stream must be a pyhccl.Stream or None, "
                        f"not {type(stream).__name__}")
    s._check(api)
    return s
