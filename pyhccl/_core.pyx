# cython: embedsignature=True
"""pyhccl core: Python classes over the ACL runtime and HCCL C API.

One .pxi per subsystem lives in pyhccl/src/ (not importable), included below.
A Comm method resolves and checks its arguments through one _Msg (src/msg.pxi,
like mpi4py's message buffers), then calls C; docstring text that several
methods share is written once (src/docs.pxi).
"""

cimport cython

from cpython.buffer cimport PyObject_CheckBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New, PyCapsule_IsValid, PyCapsule_GetPointer
from cpython.ref cimport Py_INCREF, Py_DECREF
from libc.stdint cimport (int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                          uintptr_t, UINT64_MAX)
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

cimport numpy as cnp

from pyhccl.libacl cimport *
from pyhccl.libhccl cimport *

import atexit
import collections
import contextlib
import itertools
import operator
import os
import re
import sys
import textwrap
import threading
import time
import warnings
import weakref
from collections import deque
from enum import IntEnum

import numpy as np

cnp.import_array()

cdef extern from *:
    """
    #ifdef PYHCCL_CANN
    #define PYHCCL_HOST_RUNTIME 0
    #else
    #define PYHCCL_HOST_RUNTIME 1
    #endif
    """
    bint PYHCCL_HOST_RUNTIME

HOST_RUNTIME = bool(PYHCCL_HOST_RUNTIME)

include "src/errors.pxi"
include "src/interrupt.pxi"
include "src/enums.pxi"
include "src/runtime.pxi"
include "src/event.pxi"
include "src/stream.pxi"
include "src/memory.pxi"
include "src/shape.pxi"
include "src/host_access.pxi"
include "src/devarray.pxi"
include "src/factories.pxi"
include "src/vmm.pxi"
include "src/dlpack.pxi"
include "src/buffer.pxi"
include "src/rootinfo.pxi"
include "src/config.pxi"
include "src/comm_init.pxi"
include "src/launch.pxi"
include "src/group.pxi"
include "src/host_reads.pxi"
include "src/docs.pxi"
include "src/collectives.pxi"
include "src/comm.pxi"
include "src/msg.pxi"
include "src/counts.pxi"
include "src/hcclext.pxi"
