"""pyhccl: HCCL-style collective communication for Python.

Collectives (all_reduce, broadcast, all_gather, reduce_scatter, ...) run on
communicators (Comm) over device buffers (DeviceArray, or host arrays on the
CPU host runtime), asynchronously on streams (Stream, Event). Build a
communicator from mpi4py with pyhccl.mpi.comm_from_mpi().
"""

import os as _os

from pyhccl._core import (  # noqa: F401
    HOST_RUNTIME,
    ROOT_INFO_BYTES,
    AclError,
    Comm,
    Topology,
    CommConfig,
    DataType,
    DeviceArray,
    Error,
    Event,
    HcclError,
    ReduceOp,
    RootInfo,
    Stream,
    SymWindow,
    acl_error_name,
    array,
    as_datatype,
    as_op,
    asarray,
    bfloat16,
    bfloat16_to_float,
    comm_init_all,
    comm_init_cluster_info,
    current_device,
    current_stream,
    default_stream,
    device_count,
    empty,
    empty_like,
    finalize,
    float_to_bfloat16,
    full,
    full_like,
    get_device,
    get_error_string,
    get_mem_info,
    get_run_mode,
    get_soc_name,
    get_version,
    group,
    group_end,
    group_start,
    hccl_result_name,
    init,
    is_initialized,
    ones,
    ones_like,
    reset_device,
    set_device,
    synchronize_device,
    zeros,
    zeros_like,
    # virtual memory
    AddressReservation,
    MemMapping,
    PhysicalMemory,
    free_physical,
    malloc_physical,
    map_mem,
    mem_get_allocation_granularity,
    release_mem_address,
    reserve_mem_address,
    unmap_mem,
    # data types and reduction ops
    INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
    FLOAT16, FLOAT32, FLOAT64, BFLOAT16, INT128, HIF8, FP8E4M3, FP8E5M2, FP8E8M0,
    SUM, PROD, MAX, MIN,
    EVENT_SYNC, EVENT_TIME_LINE, EVENT_CAPTURE_STREAM_PROGRESS, EVENT_DEVICE_USE_ONLY,
    EVENT_EXTERNAL, EVENT_IPC,
    STREAM_FAST_LAUNCH, STREAM_FAST_SYNC, STREAM_PERSISTENT, STREAM_HUGE, STREAM_CPU_SCHEDULE,
    STREAM_DEVICE_USE_ONLY,
)

__version__ = "0.2.0"

__all__ = [
    "AclError", "BFLOAT16", "Comm", "CommConfig", "DataType", "DeviceArray", "Error", "Event",
    "FLOAT16", "FLOAT32", "FLOAT64", "FP8E4M3", "FP8E5M2", "FP8E8M0", "HIF8",
    "HOST_RUNTIME", "HcclError", "INT128", "INT16", "INT32", "INT64", "INT8", "MAX",
    "MIN", "PROD", "ROOT_INFO_BYTES", "ReduceOp", "RootInfo", "SUM", "Stream", "SymWindow",
    "Topology", "UINT16", "UINT32", "UINT64", "UINT8",
    "EVENT_SYNC", "EVENT_TIME_LINE", "EVENT_CAPTURE_STREAM_PROGRESS",
    "EVENT_DEVICE_USE_ONLY", "EVENT_EXTERNAL", "EVENT_IPC",
    "STREAM_FAST_LAUNCH", "STREAM_FAST_SYNC", "STREAM_PERSISTENT", "STREAM_HUGE",
    "STREAM_CPU_SCHEDULE", "STREAM_DEVICE_USE_ONLY",
    "acl_error_name", "array", "as_datatype", "as_op", "asarray", "bfloat16",
    "bfloat16_to_float", "comm_init_all", "comm_init_cluster_info", "current_device",
    "current_stream", "default_stream",
    "device_count", "empty", "empty_like", "finalize", "float_to_bfloat16", "full",
    "full_like", "get_device", "get_error_string", "get_include", "get_library_dir",
    "get_mem_info", "get_run_mode", "get_soc_name", "get_version", "group",
    "group_end", "group_start", "hccl_result_name", "init", "is_initialized", "ones",
    "ones_like", "reset_device", "set_device", "synchronize_device", "zeros",
    "zeros_like",
    "AddressReservation", "MemMapping", "PhysicalMemory", "free_physical", "malloc_physical",
    "map_mem", "mem_get_allocation_granularity", "release_mem_address", "reserve_mem_address",
    "unmap_mem",
]

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def get_include() -> str:
    """Return the directory of the C headers (acl/acl.h, hccl/hccl.h)."""
    return _os.path.join(_HERE, "include")


def get_library_dir() -> str:
    """Return the directory of libhccl.so and libascendcl.so of the host runtime."""
    return _os.path.join(_HERE, "lib")
