# Communicator set-up on a helper thread, waited for in slices so that Ctrl-C
# interrupts it (Comm.__cinit__ in comm.pxi calls _init_interruptibly).


cdef class _InitCall:
    """Arguments and outcome of a communicator set-up run on a helper thread."""
    cdef uint32_t n, rank
    cdef HcclRootInfo info
    cdef HcclCommConfig config
    cdef bint use_config
    cdef int32_t device
    cdef HcclComm handle
    cdef HcclResult result
    cdef object message

    def run(self):
        """Set the device on this thread, create the communicator, record the outcome."""
        cdef HcclResult r
        cdef aclError a
        with nogil:
            a = aclrtSetDevice(self.device)
            if a != ACL_SUCCESS:
                r = HCCL_E_RUNTIME
            elif self.use_config:
                r = HcclCommInitRootInfoConfig(self.n, &self.info, self.rank, &self.config,
                                               &self.handle)
            else:
                r = HcclCommInitRootInfo(self.n, &self.info, self.rank, &self.handle)
        self.result = r
        if r != HCCL_SUCCESS:
            self.message = _recent_err_msg()
        if a == ACL_SUCCESS:
            with nogil:
                aclrtResetDevice(self.device)  # the calling thread holds the device too


cdef HcclComm _init_interruptibly(uint32_t n, HcclRootInfo *info, uint32_t rank,
                                  HcclCommConfig *config, int32_t device) except? NULL:
    """HcclCommInitRootInfo[Config] on a helper thread, waited for in slices: Ctrl-C
    cancels it (PyhcclCancelSetups; the other ranks are told) and raises
    KeyboardInterrupt within half a second."""
    cdef _InitCall call = _InitCall()
    call.n = n
    call.rank = rank
    memcpy(&call.info, info, sizeof(HcclRootInfo))
    call.use_config = config != NULL
    if config != NULL:
        memcpy(&call.config, config, sizeof(HcclCommConfig))
    call.device = device
    api = "HcclCommInitRootInfoConfig" if config != NULL else "HcclCommInitRootInfo"
    worker = threading.Thread(target=call.run, name="pyhccl-comm-init", daemon=True)
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
            with nogil:  # it was done just before: abort it, peers are told
                PyhcclCommAbort(call.handle)
                HcclCommDestroy(call.handle)
        raise
    if call.result != HCCL_SUCCESS:
        message = f"{api} failed: {_hccl_describe(call.result)}"
        if call.message:
            message += f" - {call.message}"
        raise HcclError(<int>call.result, message, api)
    return call.handle
