# Process-wide runtime state: aclInit/aclFinalize, the current device, and the
# registry of live objects destroyed at exit.

cdef bint _initialized = False
cdef bint _atexit_registered = False
# Bumped by finalize(): memory from an older generation is never freed again.
cdef int _generation = 0
# Per-device generation, bumped by reset_device().
cdef dict _device_generation = {}
# The device of the last set_device() call (None until one), implied on
# threads that have not set one.
cdef object _explicit_device = None

_live_comms = weakref.WeakSet()
_live_streams = weakref.WeakSet()
_live_events = weakref.WeakSet()


cdef int _ensure_init() except -1:
    if not _initialized:
        init()
    return 0


def init(config_path=None):
    """Initialise the ACL runtime (aclInit); called implicitly on first use.

    A repeated initialisation (ACL_ERROR_REPEAT_INITIALIZE) counts as success.
    finalize() runs automatically at interpreter exit.

    Args:
        config_path: optional path of an ACL JSON configuration file.

    Raises:
        AclError: aclInit failed.
    """
    global _initialized, _atexit_registered
    cdef bytes path = os.fsencode(config_path) if config_path is not None else None
    cdef const char *cpath = NULL
    cdef aclError err
    if _initialized:
        return
    if path is not None:
        cpath = path
    with nogil:
        err = aclInit(cpath)
    if err != ACL_ERROR_REPEAT_INITIALIZE:
        CHKACL(err, "aclInit")
    _initialized = True
    if not _atexit_registered:
        atexit.register(_atexit_finalize)
        _atexit_registered = True


def is_initialized():
    """Return True between init() (explicit or implicit) and finalize()."""
    return _initialized


def _atexit_finalize():
    # At exit nothing may wait for long: work that cannot finish within
    # PYHCCL_EXIT_TIMEOUT seconds (default 1) is aborted, and said so on stderr.
    try:
        limit = float(os.environ.get("PYHCCL_EXIT_TIMEOUT", "1"))
    except ValueError:
        limit = 1.0
    try:
        _finalize(max(limit, 0.0))
    except Exception:
        pass


def finalize():
    """Destroy every live communicator, stream and event, then call aclFinalize.

    Runs automatically at interpreter exit. Device memory still referenced by
    Python objects is released by aclFinalize; those objects must not be used
    afterwards. A later call into pyhccl initialises the runtime again.

    Raises:
        AclError: aclFinalize failed.
    """
    _finalize(None)


def _finalize(limit):
    """finalize(); `limit` (seconds, at exit) bounds the wait for each communicator's
    work, then aborts it instead of waiting up to the exec timeout."""
    global _initialized, _generation
    cdef aclError err
    if not _initialized:
        return
    if limit is not None:       # abort first: the streams below then drain at once
        for comm in list(_live_comms):
            try:
                comm.destroy(timeout=limit)
            except Exception as exc:
                print(f"pyhccl: at exit: {exc}", file=sys.stderr, flush=True)
    # Let queued work (host functions included) finish while Python still runs.
    try:
        _default_stream.synchronize()
    except Exception:
        pass
    for comm in list(_live_comms):
        try:
            comm.destroy()
        except Exception:
            pass
    for stream in list(_live_streams):
        try:
            stream.destroy()
        except Exception:
            pass
    for event in list(_live_events):
        try:
            event.destroy()
        except Exception:
            pass
    _default_stream._discard_pending()
    _generation += 1
    _initialized = False
    with nogil:
        err = aclFinalize()
    if err != ACL_ERROR_REPEAT_FINALIZE:
        CHKACL(err, "aclFinalize")


cdef int _check_device_id(object device, str api) except -1:
    try:
        d = operator.index(device)
    except TypeError:
        raise TypeError(f"{api}: device must be an int, not {type(device).__name__}") from None
    if d < 0:
        raise ValueError(f"{api}: device {d} is negative")
    return d


def set_device(device):
    """Make `device` the calling thread's current device (aclrtSetDevice).

    Threads that never call set_device() use the device most recently set by
    any thread (device 0 if none), selected implicitly on first use.

    Raises:
        TypeError: `device` is not an int.
        ValueError: `device` is negative.
        AclError: aclrtSetDevice failed (e.g. no such device).
    """
    global _explicit_device
    cdef int32_t dev = _check_device_id(device, "set_device")
    _ensure_init()
    with nogil:
        CHKACL(aclrtSetDevice(dev), "aclrtSetDevice")
    _explicit_device = dev


def get_device():
    """Return the calling thread's current device id, or None if none is set."""
    cdef int32_t dev = -1
    cdef aclError err
    _ensure_init()
    with nogil:
        err = aclrtGetDevice(&dev)
    if err != ACL_SUCCESS:
        return None
    return dev


cdef int32_t _current_device() except -1:
    """The current device, selecting the implied one if none is set yet."""
    cdef int32_t dev = -1
    cdef aclError err
    _ensure_init()
    with nogil:
        err = aclrtGetDevice(&dev)
    if err == ACL_SUCCESS and dev >= 0:
        return dev
    dev = _explicit_device if _explicit_device is not None else 0
    with nogil:
        CHKACL(aclrtSetDevice(dev), "aclrtSetDevice")
    return dev


def current_device():
    """Return the current device id, selecting the implied one if none is set."""
    return _current_device()


def _explicit_device_id():
    """Device given to the last set_device() call, or None (for pyhccl.mpi)."""
    return _explicit_device


def device_count():
    """Return the number of devices (aclrtGetDeviceCount)."""
    cdef uint32_t count = 0
    _ensure_init()
    with nogil:
        CHKACL(aclrtGetDeviceCount(&count), "aclrtGetDeviceCount")
    return count


def reset_device(device):
    """Release the resources of `device` (aclrtResetDevice).

    Streams and events pyhccl created on that device are synchronised and
    destroyed first. Arrays allocated on it must not be used afterwards.

    Raises:
        TypeError, ValueError: `device` is not an int >= 0.
        AclError: aclrtResetDevice failed.
    """
    cdef int32_t dev = _check_device_id(device, "reset_device")
    _ensure_init()
    for stream in list(_live_streams):
        if (<Stream>stream)._device == dev:
            try:
                stream.destroy()
            except Exception:
                pass
    for event in list(_live_events):
        if (<Event>event)._device == dev:
            try:
                event.destroy()
            except Exception:
                pass
    _device_generation[dev] = _device_generation.get(dev, 0) + 1
    with nogil:
        CHKACL(aclrtResetDevice(dev), "aclrtResetDevice")


def synchronize_device():
    """Wait until all work on the current device is done (aclrtSynchronizeDevice).

    Raises:
        AclError: a task failed or the call failed.
    """
    _current_device()
    with nogil:
        CHKACL(aclrtSynchronizeDevice(), "aclrtSynchronizeDevice")
    _default_stream._prune()


def get_version():
    """Return the ACL runtime version as (major, minor, patch) (aclrtGetVersion)."""
    cdef int32_t major = 0, minor = 0, patch = 0
    _ensure_init()
    with nogil:
        CHKACL(aclrtGetVersion(&major, &minor, &patch), "aclrtGetVersion")
    return (major, minor, patch)


def get_soc_name():
    """Return the SoC name of the device (aclrtGetSocName), or None."""
    cdef const char *name
    _ensure_init()
    with nogil:
        name = aclrtGetSocName()
    if name == NULL:
        return None
    return name.decode("utf-8", "replace")


def get_run_mode():
    """Return "host" on a host CPU runtime, "device" on an accelerator (aclrtGetRunMode)."""
    cdef aclrtRunMode mode = ACL_DEVICE
    _ensure_init()
    with nogil:
        CHKACL(aclrtGetRunMode(&mode), "aclrtGetRunMode")
    return "host" if mode == ACL_HOST else "device"


def get_mem_info(attr=ACL_HBM_MEM):
    """Return (free, total) bytes of device memory (aclrtGetMemInfo)."""
    cdef size_t free_b = 0, total_b = 0
    cdef aclrtMemAttr a = attr
    _current_device()
    with nogil:
        CHKACL(aclrtGetMemInfo(a, &free_b, &total_b), "aclrtGetMemInfo")
    return (free_b, total_b)
