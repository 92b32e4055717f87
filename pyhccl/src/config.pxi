# CommConfig: the Python side of HcclCommConfig.

_CONFIG_FIELDS = ("buffer_size", "deterministic", "name", "exec_timeout",
                  "op_expansion_mode", "algo", "udi", "world_rank_id", "job_id",
                  "buffer_name")


class CommConfig:
    """Options of a communicator (HcclCommConfig); None leaves HCCL's default.

    Args:
        buffer_size: communication buffer size in MB (hcclBufferSize).
        deterministic: 0/False off, 1/True on, 2 strict (hcclDeterministic).
        name: communicator name, at most 127 bytes (hcclCommName).
        exec_timeout: execution timeout in seconds (hcclExecTimeOut).
        op_expansion_mode: 0 default, 1 host, 2 aicpu, 3 aiv (hcclOpExpansionMode).
        algo: algorithm selection string (hcclAlgo).
        udi: user-defined information, at most 127 bytes (hcclUdi).
        world_rank_id: rank in the world (hcclWorldRankID).
        job_id: job id (hcclJobID).
        buffer_name: name of the buffer, at most 127 bytes (hcclBufferName).

    Comm() also accepts a dict with these keys.
    """

    __slots__ = ("_values",)

    def __init__(self, buffer_size=None, deterministic=None, name=None, exec_timeout=None,
                 op_expansion_mode=None, algo=None, udi=None, world_rank_id=None,
                 job_id=None, buffer_name=None):
        self._values = {}
        self.buffer_size = buffer_size
        self.deterministic = deterministic
        self.name = name
        self.exec_timeout = exec_timeout
        self.op_expansion_mode = op_expansion_mode
        self.algo = algo
        self.udi = udi
        self.world_rank_id = world_rank_id
        self.job_id = job_id
        self.buffer_name = buffer_name

    def to_dict(self):
        """Return the options that are set, as a dict."""
        return {k: getattr(self, k) for k in _CONFIG_FIELDS if getattr(self, k) is not None}

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"CommConfig({items})"

    def __eq__(self, other):
        if not isinstance(other, CommConfig):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __reduce__(self):
        return (_config_from_dict, (self.to_dict(),))


_CONFIG_DOCS = {
    "buffer_size": "Communication buffer size in MB (hcclBufferSize).",
    "deterministic": "0 off, 1 on, 2 strict ordering (hcclDeterministic).",
    "name": "Communicator name (hcclCommName).",
    "exec_timeout": "Execution timeout in seconds (hcclExecTimeOut).",
    "op_expansion_mode": "0 default, 1 host, 2 aicpu, 3 aiv (hcclOpExpansionMode).",
    "algo": "Algorithm selection string (hcclAlgo).",
    "udi": "User-defined information (hcclUdi).",
    "world_rank_id": "Rank in the world (hcclWorldRankID).",
    "job_id": "Job id (hcclJobID).",
    "buffer_name": "Name of the buffer (hcclBufferName).",
}


def _config_property(key, doc):
    def get(self):
        return self._values.get(key)

    def set(self, value):
        self._values[key] = value

    return property(get, set, doc=doc + " None: HCCL's default.")


for _key in _CONFIG_FIELDS:
    setattr(CommConfig, _key, _config_property(_key, _CONFIG_DOCS[_key]))


def _config_from_dict(d):
    return CommConfig(**d)


cdef object _as_config(object config, str api):
    if config is None or isinstance(config, CommConfig):
        return config
    if isinstance(config, dict):
        unknown = set(config) - set(_CONFIG_FIELDS)
        if unknown:
            raise TypeError(f"{api}: unknown config keys {sorted(unknown)}; "
                            f"known: {list(_CONFIG_FIELDS)}")
        return CommConfig(**config)
    raise TypeError(f"{api}: config must be a CommConfig, dict or None, "
                    f"not {type(config).__name__}")


cdef uint64_t _config_uint(object v, str api, str key, uint64_t limit) except? 0xffffffffffffffff:
    if isinstance(v, bool):
        v = int(v)
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"{api}: config {key} must be an int, not {type(v).__name__}") from None
    if n < 0 or n > limit:
        raise ValueError(f"{api}: config {key} {n} out of range 0..{limit}")
    return n


cdef int _config_str(char *dst, size_t cap, object v, str api, str key) except -1:
    if not isinstance(v, str):
        raise TypeError(f"{api}: config {key} must be a str, not {type(v).__name__}")
    cdef bytes b = v.encode()
    if len(b) >= <Py_ssize_t>cap or b"\0" in b:
        raise ValueError(f"{api}: config {key} must be at most {cap - 1} bytes "
                         "without NUL characters")
    memset(dst, 0, cap)
    memcpy(dst, <const char *>b, len(b))
    return 0


cdef int _fill_config(HcclCommConfig *c, object cfg, str api) except -1:
    HcclCommConfigInit(c)
    if cfg.buffer_size is not None:
        c.hcclBufferSize = <uint32_t>_config_uint(cfg.buffer_size, api, "buffer_size",
                                                  0xfffffffe)
    if cfg.deterministic is not None:
        c.hcclDeterministic = <uint32_t>_config_uint(cfg.deterministic, api,
                                                     "deterministic", 2)
    if cfg.name is not None:
        _config_str(c.hcclCommName, COMM_NAME_MAX_LENGTH, cfg.name, api, "name")
    if cfg.exec_timeout is not None:
        c.hcclExecTimeOut = <int32_t>_config_uint(cfg.exec_timeout, api, "exec_timeout",
                                                  0x7fffffff)
    if cfg.op_expansion_mode is not None:
        c.hcclOpExpansionMode = <uint32_t>_config_uint(cfg.op_expansion_mode, api,
                                                       "op_expansion_mode", 3)
    if cfg.algo is not None:
        _config_str(c.hcclAlgo, HCCL_COMM_ALGO_MAX_LENGTH, cfg.algo, api, "algo")
    if cfg.udi is not None:
        _config_str(c.hcclUdi, UDI_MAX_LENGTH, cfg.udi, api, "udi")
    if cfg.world_rank_id is not None:
        c.hcclWorldRankID = <uint32_t>_config_uint(cfg.world_rank_id, api, "world_rank_id",
                                                   0xffffffff)
    if cfg.job_id is not None:
        c.hcclJobID = _config_uint(cfg.job_id, api, "job_id", 0xffffffffffffffff)
    if cfg.buffer_name is not None:
        _config_str(c.hcclBufferName, BUFFER_NAME_MAX_LENGTH, cfg.buffer_name, api,
                    "buffer_name")
    return 0
