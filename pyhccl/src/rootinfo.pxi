# RootInfo: the opaque blob rank 0 creates and every rank reads to join.

ROOT_INFO_BYTES = HCCL_ROOT_INFO_BYTES


cdef class RootInfo:
    """The root info of a communicator being created (HcclRootInfo, 4108 bytes).

    RootInfo.create() makes one on the root rank (HcclGetRootInfo); ship
    bytes(root_info) to the other ranks (e.g. with an MPI broadcast) and
    rebuild it there with RootInfo.from_bytes(). RootInfo(data) is the same as
    RootInfo.from_bytes(data). Pickling is supported.
    """

    cdef bytes _data

    def __init__(self, data):
        self._data = _root_info_bytes(data, "RootInfo")

    @staticmethod
    def create():
        """Create a new root info on this rank (HcclGetRootInfo); call on the root only."""
        cdef HcclRootInfo info
        cdef RootInfo ri
        _current_device()
        memset(&info, 0, sizeof(info))
        with nogil:
            CHKHCCL(HcclGetRootInfo(&info), "HcclGetRootInfo")
        ri = RootInfo.__new__(RootInfo)
        ri._data = PyBytes_FromStringAndSize(info.internal, sizeof(info))
        return ri

    @staticmethod
    def from_bytes(data):
        """Rebuild a root info from the exact bytes of bytes(root_info).

        Raises:
            TypeError: `data` is not bytes-like.
            ValueError: `data` is not HCCL_ROOT_INFO_BYTES (4108) long.
        """
        cdef RootInfo ri = RootInfo.__new__(RootInfo)
        ri._data = _root_info_bytes(data, "RootInfo.from_bytes")
        return ri

    def __bytes__(self):
        return self._data

    def __len__(self):
        return len(self._data)

    def __eq__(self, other):
        if not isinstance(other, RootInfo):
            return NotImplemented
        return self._data == (<RootInfo>other)._data

    def __hash__(self):
        return hash(self._data)

    def __reduce__(self):
        return (RootInfo.from_bytes, (self._data,))

    def __repr__(self):
        return f"RootInfo(<{len(self._data)} bytes>)"


cdef bytes _root_info_bytes(object data, str api):
    try:
        b = bytes(memoryview(data).cast("B"))
    except TypeError:
        raise TypeError(f"{api}: expected a bytes-like object, not "
                        f"{type(data).__name__}") from None
    if len(b) != HCCL_ROOT_INFO_BYTES:
        raise ValueError(f"{api}: root info must be {HCCL_ROOT_INFO_BYTES} bytes, "
                         f"got {len(b)}")
    return b
