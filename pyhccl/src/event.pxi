# Events: completion markers recorded on streams, used to order streams and to
# time work.

EVENT_SYNC = ACL_EVENT_SYNC
EVENT_TIME_LINE = ACL_EVENT_TIME_LINE
EVENT_CAPTURE_STREAM_PROGRESS = ACL_EVENT_CAPTURE_STREAM_PROGRESS
EVENT_DEVICE_USE_ONLY = ACL_EVENT_DEVICE_USE_ONLY
EVENT_EXTERNAL = ACL_EVENT_EXTERNAL
EVENT_IPC = ACL_EVENT_IPC


cdef class Event:
    """A marker recorded on a stream (aclrtEvent).

    Event() creates an event on the current device (aclrtCreateEvent, or
    aclrtCreateEventWithFlag when `flags` is given).

    Args:
        flags: optional EVENT_* flags (EVENT_SYNC, EVENT_TIME_LINE, ...).
    """

    cdef aclrtEvent _handle
    cdef int32_t _device
    cdef bint _destroyed
    cdef object __weakref__

    def __cinit__(self, flags=None):
        cdef aclrtEvent handle = NULL
        cdef uint32_t flg = 0
        self._device = _current_device()
        if flags is None:
            with nogil:
                CHKACL(aclrtCreateEvent(&handle), "aclrtCreateEvent")
        else:
            flg = flags
            with nogil:
                CHKACL(aclrtCreateEventWithFlag(&handle, flg), "aclrtCreateEventWithFlag")
        self._handle = handle
        _live_events.add(self)

    def __dealloc__(self):
        cdef aclrtEvent handle = self._handle
        self._handle = NULL
        if handle != NULL and not self._destroyed and _initialized:
            with nogil:
                aclrtDestroyEvent(handle)

    cdef int _check(self, str api) except -1:
        if self._destroyed:
            raise ValueError(f"{api}: event is destroyed")
        return 0

    @property
    def handle(self):
        """The aclrtEvent handle as an int."""
        return <uintptr_t>self._handle

    @property
    def device(self):
        """Device id the event was created on."""
        return self._device

    def __repr__(self):
        if self._destroyed:
            return "Event(destroyed)"
        return f"Event(handle=0x{<uintptr_t>self._handle:x}, device={self._device})"

    def record(self, stream=None):
        """Record the event on `stream` (None: the current stream) (aclrtRecordEvent).

        The event completes when the work enqueued on the stream before it is
        done. Returns at once.
        """
        cdef Stream s = _resolve_stream(stream, "Event.record")
        self._check("Event.record")
        if s._is_default:
            _current_device()
        with nogil:
            CHKACL(aclrtRecordEvent(self._handle, s._handle), "aclrtRecordEvent")

    def synchronize(self, timeout=None):
        """Wait until the event has completed (aclrtSynchronizeEvent).

        The GIL is released while waiting.

        Args:
            timeout: seconds to wait at most (None = no limit), via
                aclrtSynchronizeEventWithTimeout.

        Raises:
            AclError: the wait failed or timed out (ACL_ERROR_RT_EVENT_SYNC_TIMEOUT).
        """
        cdef int32_t ms = _timeout_ms(timeout, "Event.synchronize")
        cdef int32_t slice_ms
        cdef aclError err
        self._check("Event.synchronize")
        deadline = None if ms < 0 else time.monotonic() + ms / 1000.0
        while True:  # in slices, so that Ctrl-C gets through
            slice_ms = _SLICE_MS if deadline is None else \
                max(0, min(_SLICE_MS, int((deadline - time.monotonic()) * 1000 + 0.5)))
            with nogil:
                err = aclrtSynchronizeEventWithTimeout(self._handle, slice_ms)
            if err != ACL_ERROR_RT_EVENT_SYNC_TIMEOUT or \
                    (deadline is not None and time.monotonic() >= deadline):
                break
            _check_signals()
        if err == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT:    # the runtime names the last slice only
            raise AclError(err, f"Event.synchronize: not complete after the {timeout} s "
                           "timeout", "aclrtSynchronizeEventWithTimeout")
        CHKACL(err, b"aclrtSynchronizeEvent" if ms < 0 else b"aclrtSynchronizeEventWithTimeout")

    def query(self):
        """Return True if the work before the event's record is done (aclrtQueryEventStatus)."""
        cdef aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY
        self._check("Event.query")
        with nogil:
            CHKACL(aclrtQueryEventStatus(self._handle, &status), "aclrtQueryEventStatus")
        return status == ACL_EVENT_RECORDED_STATUS_COMPLETE

    def elapsed_time(self, Event end not None):
        """Return the milliseconds between this event and `end` (aclrtEventElapsedTime).

        Both events must have completed.
        """
        cdef float ms = 0
        self._check("Event.elapsed_time")
        end._check("Event.elapsed_time")
        with nogil:
            CHKACL(aclrtEventElapsedTime(&ms, self._handle, end._handle),
                   "aclrtEventElapsedTime")
        return ms

    def destroy(self):
        """Destroy the event (aclrtDestroyEvent); a second call does nothing."""
        cdef aclrtEvent handle = self._handle
        cdef aclError err
        if self._destroyed:
            return
        self._destroyed = True
        self._handle = NULL
        _live_events.discard(self)
        with nogil:
            err = aclrtDestroyEvent(handle)
        CHKACL(err, "aclrtDestroyEvent")
