# Exceptions raised for failed C calls, and the checks that raise them.
#
# Every C call runs without the GIL; its return code goes through CHKACL or
# CHKHCCL, which take the GIL back only on failure. The message is built on
# the calling thread, so aclGetRecentErrMsg() (thread-local) still holds the
# library's description of what went wrong.

_ACL_ERROR_NAMES = {
    ACL_ERROR_INVALID_PARAM: "ACL_ERROR_INVALID_PARAM",
    ACL_ERROR_UNINITIALIZE: "ACL_ERROR_UNINITIALIZE",
    ACL_ERROR_REPEAT_INITIALIZE: "ACL_ERROR_REPEAT_INITIALIZE",
    ACL_ERROR_REPEAT_SUBSCRIBE: "ACL_ERROR_REPEAT_SUBSCRIBE",
    ACL_ERROR_STREAM_NOT_SUBSCRIBE: "ACL_ERROR_STREAM_NOT_SUBSCRIBE",
    ACL_ERROR_THREAD_NOT_SUBSCRIBE: "ACL_ERROR_THREAD_NOT_SUBSCRIBE",
    ACL_ERROR_WAIT_CALLBACK_TIMEOUT: "ACL_ERROR_WAIT_CALLBACK_TIMEOUT",
    ACL_ERROR_REPEAT_FINALIZE: "ACL_ERROR_REPEAT_FINALIZE",
    ACL_ERROR_PROF_ALREADY_RUN: "ACL_ERROR_PROF_ALREADY_RUN",
    ACL_ERROR_PROF_NOT_RUN: "ACL_ERROR_PROF_NOT_RUN",
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE: "ACL_ERROR_PROF_REPEAT_SUBSCRIBE",
    ACL_ERROR_PROF_API_CONFLICT: "ACL_ERROR_PROF_API_CONFLICT",
    ACL_ERROR_BAD_ALLOC: "ACL_ERROR_BAD_ALLOC",
    ACL_ERROR_API_NOT_SUPPORT: "ACL_ERROR_API_NOT_SUPPORT",
    ACL_ERROR_INVALID_DEVICE: "ACL_ERROR_INVALID_DEVICE",
    ACL_ERROR_MEMORY_ADDRESS_UNALIGNED: "ACL_ERROR_MEMORY_ADDRESS_UNALIGNED",
    ACL_ERROR_RESOURCE_NOT_MATCH: "ACL_ERROR_RESOURCE_NOT_MATCH",
    ACL_ERROR_INVALID_RESOURCE_HANDLE: "ACL_ERROR_INVALID_RESOURCE_HANDLE",
    ACL_ERROR_FEATURE_UNSUPPORTED: "ACL_ERROR_FEATURE_UNSUPPORTED",
    ACL_ERROR_PROF_MODULES_UNSUPPORTED: "ACL_ERROR_PROF_MODULES_UNSUPPORTED",
    ACL_ERROR_STORAGE_OVER_LIMIT: "ACL_ERROR_STORAGE_OVER_LIMIT",
    ACL_ERROR_INTERNAL_ERROR: "ACL_ERROR_INTERNAL_ERROR",
    ACL_ERROR_FAILURE: "ACL_ERROR_FAILURE",
    ACL_ERROR_GE_FAILURE: "ACL_ERROR_GE_FAILURE",
    ACL_ERROR_RT_FAILURE: "ACL_ERROR_RT_FAILURE",
    ACL_ERROR_DRV_FAILURE: "ACL_ERROR_DRV_FAILURE",
    ACL_ERROR_PROFILING_FAILURE: "ACL_ERROR_PROFILING_FAILURE",
    ACL_ERROR_RT_PARAM_INVALID: "ACL_ERROR_RT_PARAM_INVALID",
    ACL_ERROR_RT_INVALID_DEVICEID: "ACL_ERROR_RT_INVALID_DEVICEID",
    ACL_ERROR_RT_CONTEXT_NULL: "ACL_ERROR_RT_CONTEXT_NULL",
    ACL_ERROR_RT_STREAM_SUBSCRIBE: "ACL_ERROR_RT_STREAM_SUBSCRIBE",
    ACL_ERROR_RT_THREAD_SUBSCRIBE: "ACL_ERROR_RT_THREAD_SUBSCRIBE",
    ACL_ERROR_RT_STREAM_NO_CB_REG: "ACL_ERROR_RT_STREAM_NO_CB_REG",
    ACL_ERROR_RT_INVALID_HANDLE: "ACL_ERROR_RT_INVALID_HANDLE",
    ACL_ERROR_RT_WAIT_TIMEOUT: "ACL_ERROR_RT_WAIT_TIMEOUT",
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT: "ACL_ERROR_RT_FEATURE_NOT_SUPPORT",
    ACL_ERROR_RT_MEMORY_ALLOCATION: "ACL_ERROR_RT_MEMORY_ALLOCATION",
    ACL_ERROR_RT_NO_DEVICE: "ACL_ERROR_RT_NO_DEVICE",
    ACL_ERROR_RT_DEVICE_OOM: "ACL_ERROR_RT_DEVICE_OOM",
    ACL_ERROR_RT_INTERNAL_ERROR: "ACL_ERROR_RT_INTERNAL_ERROR",
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT",
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT",
    ACL_ERROR_RT_COMM_OP_RETRY_FAIL: "ACL_ERROR_RT_COMM_OP_RETRY_FAIL",
}

_HCCL_RESULT_NAMES = {
    HCCL_SUCCESS: "HCCL_SUCCESS",
    HCCL_E_PARA: "HCCL_E_PARA",
    HCCL_E_PTR: "HCCL_E_PTR",
    HCCL_E_MEMORY: "HCCL_E_MEMORY",
    HCCL_E_INTERNAL: "HCCL_E_INTERNAL",
    HCCL_E_NOT_SUPPORT: "HCCL_E_NOT_SUPPORT",
    HCCL_E_NOT_FOUND: "HCCL_E_NOT_FOUND",
    HCCL_E_UNAVAIL: "HCCL_E_UNAVAIL",
    HCCL_E_SYSCALL: "HCCL_E_SYSCALL",
    HCCL_E_TIMEOUT: "HCCL_E_TIMEOUT",
    HCCL_E_OPEN_FILE_FAILURE: "HCCL_E_OPEN_FILE_FAILURE",
    HCCL_E_TCP_CONNECT: "HCCL_E_TCP_CONNECT",
    HCCL_E_ROCE_CONNECT: "HCCL_E_ROCE_CONNECT",
    HCCL_E_TCP_TRANSFER: "HCCL_E_TCP_TRANSFER",
    HCCL_E_ROCE_TRANSFER: "HCCL_E_ROCE_TRANSFER",
    HCCL_E_RUNTIME: "HCCL_E_RUNTIME",
    HCCL_E_DRV: "HCCL_E_DRV",
    HCCL_E_PROFILING: "HCCL_E_PROFILING",
    HCCL_E_CCE: "HCCL_E_CCE",
    HCCL_E_NETWORK: "HCCL_E_NETWORK",
    HCCL_E_AGAIN: "HCCL_E_AGAIN",
    HCCL_E_REMOTE: "HCCL_E_REMOTE",
    HCCL_E_SUSPENDING: "HCCL_E_SUSPENDING",
    HCCL_E_OPRETRY_FAIL: "HCCL_E_OPRETRY_FAIL",
    HCCL_E_OOM: "HCCL_E_OOM",
    HCCL_E_IN_STATUS: "HCCL_E_IN_STATUS",
}


def acl_error_name(code):
    """Return the symbolic name of an aclError code ("ACL_ERROR_BAD_ALLOC")."""
    code = int(code)
    if code == 0:
        return "ACL_SUCCESS"
    return _ACL_ERROR_NAMES.get(code, "ACL_ERROR_UNKNOWN")


def hccl_result_name(code):
    """Return the symbolic name of an HcclResult code ("HCCL_E_PARA")."""
    return _HCCL_RESULT_NAMES.get(int(code), "HCCL_E_UNKNOWN")


def get_error_string(code):
    """Return HCCL's description of an HcclResult code (HcclGetErrorString)."""
    cdef const char *text = HcclGetErrorString(<HcclResult><int>code)
    if text == NULL:
        return ""
    return text.decode("utf-8", "replace")


class Error(RuntimeError):
    """Base class of the errors pyhccl raises for a failed C call: HcclError and AclError.

    ``except pyhccl.Error`` catches both. Bad arguments are refused before
    any C call with TypeError, ValueError or BufferError instead.

    Attributes:
        code: the C return code (int).
        name: its symbolic name, e.g. "HCCL_E_PARA" or "ACL_ERROR_BAD_ALLOC".
        api: the C function that failed, e.g. "HcclAllReduce" (or None).
        message: the full message (also str(error)).
    """

    _code_name = staticmethod(lambda code: f"code {code}")   # set by each subclass

    def __init__(self, code, message=None, api=None):
        code = int(code)
        if message is None:
            message = f"{self._code_name(code)} ({code})"
            if api:
                message = f"{api} failed: {message}"
        super().__init__(message)
        self.code = code
        self.message = message
        self.api = api

    @property
    def name(self):
        """Symbolic name of the code ("HCCL_E_PARA", "ACL_ERROR_BAD_ALLOC")."""
        return self._code_name(self.code)

    def __reduce__(self):
        return (type(self), (self.code, self.message, self.api), self.__dict__)


class HcclError(Error):
    """Raised when an HCCL call fails, or (from Stream.synchronize) a collective failed.

    Attributes:
        code: the HcclResult value (int).
        name: its symbolic name, e.g. "HCCL_E_PARA".
        api: the C function that failed, e.g. "HcclAllReduce" (or None).
        message: the full message (also str(error)).
        seq: for a collective that failed while it ran: its number on the
            communicator (1 = the first; 0 for send/recv); else None.
        rank: the rank at fault when known (the peer that died, differed,
            timed out or reported the failure first), else None.
    """

    _code_name = staticmethod(hccl_result_name)

    def __init__(self, code, message=None, api=None):
        super().__init__(code, message, api)
        self.seq = None
        self.rank = None


class AclError(Error):
    """Raised when an ACL runtime call fails.

    Attributes:
        code: the aclError value (int).
        name: its symbolic name, e.g. "ACL_ERROR_BAD_ALLOC".
        api: the C function that failed, e.g. "aclrtMalloc" (or None).
        message: the full message (also str(error)).
    """

    _code_name = staticmethod(acl_error_name)


cdef str _recent_err_msg():
    cdef const char *msg = aclGetRecentErrMsg()
    if msg == NULL:
        return ""
    return msg.decode("utf-8", "replace").strip()


cdef int _raise_acl(aclError code, const char *api) except -1 with gil:
    cdef str name = api.decode()
    cdef str message = f"{name} failed: {acl_error_name(code)} ({code})"
    cdef str recent = _recent_err_msg()
    if recent:
        message += f": {recent}"
    raise AclError(code, message, name)


cdef str _hccl_describe(HcclResult code):
    """'HCCL_E_PARA (1)', then HCCL's description of the code if it has one."""
    cdef const char *text = HcclGetErrorString(code)
    cdef str s = f"{hccl_result_name(code)} ({<int>code})"
    if text != NULL and text[0] != 0:
        s += ": " + text.decode("utf-8", "replace")
    return s


cdef int _raise_hccl(HcclResult code, const char *api) except -1 with gil:
    cdef str name = api.decode()
    cdef str message = f"{name} failed: {_hccl_describe(code)}"
    cdef str recent = _recent_err_msg()
    if recent:
        message += f" - {recent}"
    raise HcclError(<int>code, message, name)


cdef inline int CHKACL(aclError code, const char *api) except -1 nogil:
    if code != ACL_SUCCESS:
        return _raise_acl(code, api)
    return 0


cdef inline int CHKHCCL(HcclResult code, const char *api) except -1 nogil:
    if code != HCCL_SUCCESS:
        return _raise_hccl(code, api)
    return 0
