"""Runtime, devices, streams and events."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import pyhccl
from conftest import DEVICE, OWN_JOBS_HERE, scaled


def test_runtime_info():
    assert pyhccl.is_initialized()
    assert pyhccl.device_count() >= 1
    assert pyhccl.get_device() == DEVICE == pyhccl.current_device()
    assert pyhccl.get_run_mode() == "host"
    assert pyhccl.HOST_RUNTIME is True
    major, minor, patch = pyhccl.get_version()
    assert (major, minor) == (1, 17)
    free, total = pyhccl.get_mem_info()
    assert 0 <= free <= total
    pyhccl.init()                     # repeat init is fine
    pyhccl.synchronize_device()


def test_set_device_errors():
    with pytest.raises(ValueError, match="set_device: device -1 is negative"):
        pyhccl.set_device(-1)
    with pytest.raises(TypeError):
        pyhccl.set_device("0")
    with pytest.raises(pyhccl.AclError):
        pyhccl.set_device(10 ** 6)
    assert pyhccl.get_device() == DEVICE


def test_new_thread_uses_the_set_device():
    seen = []
    t = threading.Thread(target=lambda: seen.append((pyhccl.get_device(), pyhccl.current_device())))
    t.start()
    t.join()
    assert seen == [(None, DEVICE)]


def test_stream_basics(stream):
    assert stream.device == DEVICE and stream.handle != 0 and not stream.is_default
    assert "Stream(handle=0x" in repr(stream)
    assert stream.query() is True
    stream.synchronize()
    stream.synchronize(timeout=5)
    d = pyhccl.default_stream()
    assert d.is_default and d.handle == 0 and repr(d) == "Stream(default)"
    assert d.device == DEVICE
    d.synchronize()
    assert d.query() is True
    with pytest.raises(ValueError):
        stream.synchronize(timeout=-1)


def test_stream_with_config():
    s = pyhccl.Stream(priority=1, flags=0)
    assert s.handle != 0
    s.destroy()
    s.destroy()                       # second destroy is a no-op
    assert repr(s) == "Stream(destroyed)"
    assert s not in pyhccl._core._live_streams     # destroy() forgets the stream
    with pytest.raises(ValueError, match="synchronize: stream is destroyed"):
        s.synchronize()
    with pytest.raises(ValueError, match="destroyed"):
        pyhccl.zeros(3).get(stream=s)


def test_current_stream_context():
    assert pyhccl.current_stream() is pyhccl.default_stream()
    a, b = pyhccl.Stream(), pyhccl.Stream()
    with a:
        assert pyhccl.current_stream() is a
        with b as inner:
            assert inner is b and pyhccl.current_stream() is b
            seen = []
            t = threading.Thread(target=lambda: seen.append(pyhccl.current_stream()))
            t.start()
            t.join()
            assert seen == [pyhccl.default_stream()]     # thread-local
        assert pyhccl.current_stream() is a
    assert pyhccl.current_stream() is pyhccl.default_stream()
    a.destroy()
    b.destroy()


def test_event_basics(stream):
    e = pyhccl.Event()
    assert e.handle != 0 and e.device == DEVICE and "Event(handle=0x" in repr(e)
    e.record(stream)
    e.synchronize()
    assert e.query() is True
    start = stream.record_event(pyhccl.Event(pyhccl.EVENT_TIME_LINE))
    pyhccl.zeros(1 << 16).get(stream=stream)
    end = stream.record_event()
    end.synchronize(timeout=10)
    assert end.query()
    assert start.elapsed_time(end) >= 0.0
    e.destroy()
    e.destroy()
    with pytest.raises(ValueError, match="destroyed"):
        e.query()
    with pytest.raises(ValueError, match="destroyed"):
        stream.wait_event(e)
    with pytest.raises(TypeError):
        stream.wait_event(None)


def test_event_orders_streams():
    a, b = pyhccl.Stream(), pyhccl.Stream()
    gate = threading.Event()
    a.launch_host_func(gate.wait, 30)
    try:
        x = pyhccl.zeros(1000, "int32")
        x.fill(5, stream=a)
        ev = a.record_event()
        b.wait_event(ev)
        out = x.get(stream=b)
        time.sleep(0.05)
        assert not a.query() and not b.query() and not ev.query()
    finally:
        gate.set()
    b.synchronize()
    assert ev.query() and np.all(out == 5)
    a.destroy()
    b.destroy()


def test_query_after_the_last_event_is_synchronized(stream):
    # The event completes in the same step as the stream counts its record
    # done: query() right after the event's synchronize() must say done.
    # (Before the fix, 10 to 157 of 200 said "not ready".)
    x = pyhccl.zeros(256, "float32")
    not_done = 0
    for _ in range(500):
        x.fill(1, stream=stream)
        stream.record_event().synchronize()
        not_done += not stream.query()
    assert not_done == 0


def test_wait_binds_to_its_record_not_a_later_one():
    # e recorded on a (slow) then on c (fast): b waits for a's record only.
    a, b, c = pyhccl.Stream(), pyhccl.Stream(), pyhccl.Stream()
    gate, seen = threading.Event(), []
    a.launch_host_func(gate.wait, 30)
    try:
        e = a.record_event()
        b.wait_event(e)
        c.record_event(e)
        c.synchronize()
        b.launch_host_func(lambda: seen.append(gate.is_set()))
        time.sleep(0.05)
        assert not b.query() and seen == []
    finally:
        gate.set()
    b.synchronize()
    assert seen == [True]
    for s in (a, b, c):
        s.destroy()


def test_host_func_runs_in_order(stream):
    order = []
    x = pyhccl.zeros(4, "int64")
    stream.launch_host_func(order.append, 1)
    x.fill(3, stream=stream)
    stream.launch_host_func(lambda: order.append(int(np.from_dlpack(x)[0])))
    stream.synchronize()
    assert order == [1, 3]
    with pytest.raises(TypeError):
        stream.launch_host_func(42)


def test_host_func_exception_fails_the_stream(stream):
    ran = []

    def boom(x):
        raise ValueError(f"boom {x}")

    stream.launch_host_func(boom, 1)
    stream.launch_host_func(ran.append, 2)      # later work still runs (continue on failure)
    stream.launch_host_func(boom, 3)            # a second failure is not the one reported
    with pytest.raises(pyhccl.AclError) as info:
        stream.synchronize()
    err = info.value
    assert err.name == "ACL_ERROR_RT_FAILURE" and err.api == "aclrtSynchronizeStream"
    assert "boom) raised ValueError: boom 1" in str(err)
    assert isinstance(err.__cause__, ValueError) and str(err.__cause__) == "boom 1"
    assert err.__cause__.__traceback__ is not None
    assert ran == [2]
    stream.synchronize()                         # reported once, then the stream is clean
    # With a timeout, and on the default stream.
    stream.launch_host_func(boom, 4)
    with pytest.raises(pyhccl.AclError, match="boom 4") as info:
        stream.synchronize(timeout=30)
    assert str(info.value.__cause__) == "boom 4"
    d = pyhccl.default_stream()
    d.launch_host_func(boom, 5)
    with pytest.raises(pyhccl.AclError, match="boom 5") as info:
        d.synchronize()
    assert str(info.value.__cause__) == "boom 5"
    d.synchronize()


def test_host_func_exception_reported_elsewhere_is_not_chained_again(stream):
    def boom():
        raise KeyError("first")

    pyhccl.default_stream().launch_host_func(boom)
    with pytest.raises(pyhccl.AclError, match="KeyError"):
        pyhccl.synchronize_device()              # consumes the stream's error
    pyhccl.default_stream().synchronize()        # nothing left to report


def test_synchronize_timeout(stream):
    gate = threading.Event()
    stream.launch_host_func(gate.wait, 30)
    try:
        with pytest.raises(pyhccl.AclError) as info:
            stream.synchronize(timeout=0.25)
        assert info.value.name == "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"
        # the timeout the user gave, not the runtime's last slice ("after 90 ms")
        assert "after the 0.25 s timeout" in str(info.value), str(info.value)
        ev = stream.record_event()
        with pytest.raises(pyhccl.AclError, match="after the 0.25 s timeout"):
            ev.synchronize(timeout=0.25)
    finally:
        gate.set()
    stream.synchronize()


def fast_sync_stream(monkeypatch, tick_us):
    """A STREAM_FAST_SYNC stream (its tick read at creation), after round trips that
    teach it the caller synchronizes right after each push."""
    monkeypatch.setenv("PYHCCL_FAST_SYNC_TICK_US", str(tick_us))
    s = pyhccl.Stream(flags=pyhccl.STREAM_FAST_SYNC)
    for _ in range(3):       # pauses: the new worker thread may start after the first round trips
        for _ in range(10):
            s.launch_host_func(lambda: None)
            s.synchronize()
        time.sleep(0.01)
    return s


def test_fast_sync_stream_leaves_its_worker_asleep_in_round_trips(monkeypatch):
    s = fast_sync_stream(monkeypatch, 10 ** 9)   # a tick of 1000 s: only a synchronize runs it
    ran_on = []
    done = threading.Event()
    s.launch_host_func(lambda: (ran_on.append(threading.get_native_id()), done.set()))
    # Not started: a plain stream's worker, woken by the push, runs it at once.
    assert not done.wait(0.2)
    s.synchronize()
    assert ran_on == [threading.get_native_id()]  # run by the synchronize, on this thread
    s.destroy()


def test_fast_sync_stream_runs_work_nobody_synchronizes(monkeypatch):
    s = fast_sync_stream(monkeypatch, 20000)
    ran_on = []
    done = threading.Event()
    s.launch_host_func(lambda: (ran_on.append(threading.get_native_id()), done.set()))
    assert done.wait(scaled(30)), "the worker's tick never took the task"
    assert ran_on[0] != threading.get_native_id()
    # The pattern ended: the next task's push wakes the worker at once.
    again = threading.Event()
    s.launch_host_func(again.set)
    assert again.wait(scaled(30))
    # An event record ends a deferral at once: another stream may wait on it.
    s2 = fast_sync_stream(monkeypatch, 10 ** 9)
    s2.launch_host_func(lambda: None)             # deferred
    t = pyhccl.Stream()
    t.wait_event(s2.record_event())
    t.synchronize(timeout=scaled(30))
    for x in (s, s2, t):
        x.destroy()


def test_other_device_stream():
    if pyhccl.device_count() < 2:
        pytest.skip("needs two devices")
    other = (DEVICE + 1) % pyhccl.device_count()
    pyhccl.set_device(other)
    try:
        s = pyhccl.Stream()
        a = pyhccl.zeros(3)
        assert s.device == other and a.device == other
    finally:
        pyhccl.set_device(DEVICE)
    assert s.device == other
    s.destroy()


def test_include_and_library_dirs():
    inc = pyhccl.get_include()
    assert os.path.isfile(os.path.join(inc, "hccl", "hccl.h"))
    assert os.path.isfile(os.path.join(inc, "acl", "acl.h"))
    lib = pyhccl.get_library_dir()
    assert os.path.isfile(os.path.join(lib, "libhccl.so"))
    assert os.path.isfile(os.path.join(lib, "libascendcl.so"))


def test_main_prints_build_flags(tmp_path):
    env = dict(os.environ)
    env.pop("PMI_RANK", None)
    out = subprocess.run([sys.executable, "-m", "pyhccl", "--cflags", "--libs"],
                         capture_output=True, text=True, check=True, env=env).stdout.split()
    assert out[0] == "-I" + pyhccl.get_include()
    assert "-lhccl" in out and "-lascendcl" in out
    if not OWN_JOBS_HERE:
        return                        # one compile is enough
    src = tmp_path / "prog.c"
    src.write_text(
        '#include <stdio.h>\n#include "hccl/hccl.h"\n'
        "int main(void) {\n"
        "  if (aclInit(NULL) != ACL_SUCCESS) return 1;\n"
        "  if (aclrtSetDevice(0) != ACL_SUCCESS) return 2;\n"
        "  void *p = NULL;\n"
        "  if (aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 3;\n"
        "  aclrtFree(p);\n"
        "  printf(\"%d\\n\", HCCL_DATA_TYPE_BFP16);\n"
        "  return aclFinalize() == ACL_SUCCESS ? 0 : 4;\n"
        "}\n")
    exe = tmp_path / "prog"
    subprocess.run(["cc", str(src), "-o", str(exe)] + out, check=True)
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert res.returncode == 0 and res.stdout.strip() == "11"


def test_import_does_not_import_mpi4py():
    code = "import sys, pyhccl; print('mpi4py' in sys.modules)"
    env = dict(os.environ)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, cwd=os.path.dirname(os.path.dirname(pyhccl.__file__)))
    assert res.stdout.strip() == "False"


def test_reset_device_destroys_its_streams_and_events():
    if pyhccl.device_count() < 2:
        pytest.skip("needs two devices")
    other = (DEVICE + 1) % pyhccl.device_count()
    pyhccl.set_device(other)
    try:
        s = pyhccl.Stream()
        e = s.record(pyhccl.Event())
        a = pyhccl.ones(10)
        s.synchronize()
    finally:
        pyhccl.set_device(DEVICE)
    keep = pyhccl.ones(10)
    pyhccl.reset_device(other)
    assert repr(s) == "Stream(destroyed)" and repr(e) == "Event(destroyed)"
    del a                              # its memory went with the device: not freed again
    assert np.all(keep.get() == 1) and pyhccl.get_device() == DEVICE
