"""HcclError / AclError: codes, names, messages, pickling, raised by real C failures."""

import os
import pickle
import re

import numpy as np
import pytest

import pyhccl
from conftest import scaled


def test_hccl_error_fields_and_pickle():
    err = pyhccl.HcclError(1, "HcclAllReduce failed: HCCL_E_PARA (1): bad", "HcclAllReduce")
    assert isinstance(err, RuntimeError)
    assert err.code == 1 and err.name == "HCCL_E_PARA" and err.api == "HcclAllReduce"
    assert str(err) == "HcclAllReduce failed: HCCL_E_PARA (1): bad"
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is pyhccl.HcclError
    assert (back.code, back.message, back.api) == (err.code, err.message, err.api)
    assert str(back) == str(err)


def test_acl_error_fields_and_pickle():
    err = pyhccl.AclError(200000)
    assert isinstance(err, RuntimeError)
    assert err.code == 200000 and err.name == "ACL_ERROR_BAD_ALLOC"
    assert "ACL_ERROR_BAD_ALLOC (200000)" in str(err)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is pyhccl.AclError and back.code == err.code and str(back) == str(err)


def test_error_names():
    assert pyhccl.hccl_result_name(0) == "HCCL_SUCCESS"
    assert pyhccl.hccl_result_name(5) == "HCCL_E_NOT_SUPPORT"
    assert pyhccl.hccl_result_name(24) == "HCCL_E_OOM"
    assert pyhccl.hccl_result_name(1041) == "HCCL_E_IN_STATUS"
    assert pyhccl.acl_error_name(0) == "ACL_SUCCESS"
    assert pyhccl.acl_error_name(100002) == "ACL_ERROR_REPEAT_INITIALIZE"
    assert pyhccl.acl_error_name(507046) == "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"
    assert isinstance(pyhccl.get_error_string(1), str)


def test_acl_error_from_runtime():
    with pytest.raises(pyhccl.AclError) as info:
        pyhccl.set_device(pyhccl.device_count() + 1000)
    err = info.value
    assert err.code != 0 and err.api == "aclrtSetDevice"
    assert str(err).startswith("aclrtSetDevice failed: ")
    assert f"({err.code})" in str(err)
    back = pickle.loads(pickle.dumps(err))
    assert back.code == err.code and str(back) == str(err)
    # the failed call left the current device alone
    assert pyhccl.get_device() is not None


def test_hccl_error_from_library():
    garbage = os.urandom(pyhccl.ROOT_INFO_BYTES)
    with pytest.raises(pyhccl.HcclError) as info:
        pyhccl.Comm(1, garbage, 0)
    err = info.value
    assert err.code != 0 and err.api.startswith("HcclCommInitRootInfo")
    assert str(err).startswith(f"{err.api} failed: {err.name} ({err.code})")
    back = pickle.loads(pickle.dumps(err))
    assert back.code == err.code and str(back) == str(err)


def test_hccl_error_from_a_collective(self_comm):
    with pytest.raises(pyhccl.HcclError) as info:
        self_comm.all_reduce(np.zeros(32, np.uint8), dtype=pyhccl.INT128)
    err = info.value
    assert err.api == "HcclAllReduce" and err.code == 5 and err.name == "HCCL_E_NOT_SUPPORT"
    assert str(err).startswith("HcclAllReduce failed: HCCL_E_NOT_SUPPORT (5): ")
    assert " - HcclAllReduce: " in str(err)        # the runtime's own message follows
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.api == err.api


def test_error_base_class():
    assert issubclass(pyhccl.HcclError, pyhccl.Error)
    assert issubclass(pyhccl.AclError, pyhccl.Error)
    assert issubclass(pyhccl.Error, RuntimeError)
    assert pyhccl.Error.__module__ == pyhccl.HcclError.__module__
    for err in (pyhccl.HcclError(4), pyhccl.AclError(100000)):
        try:
            raise err
        except pyhccl.Error as caught:
            assert caught is err and caught.name.startswith(("HCCL_E_", "ACL_ERROR_"))
    back = pickle.loads(pickle.dumps(pyhccl.Error(3, "x", "f")))
    assert type(back) is pyhccl.Error and (back.code, str(back), back.api) == (3, "x", "f")
    assert pyhccl.Error(7).name == "code 7"


def test_raises_sections_name_real_exceptions():
    """Every "Raises:" entry of the public API names an exception class that exists."""
    import builtins
    import inspect

    import pyhccl.mpi
    known = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)}
    known |= {"HcclError", "AclError", "Error"}
    bad, seen = [], 0
    for module in (pyhccl, pyhccl.mpi):
        for name in module.__all__:
            obj = getattr(module, name)
            members = [obj] + ([m for _, m in inspect.getmembers(obj)] if inspect.isclass(obj)
                               else [])
            for m in members:
                doc = getattr(m, "__doc__", None) or ""
                if "Raises:" not in doc or isinstance(m, (int, str)):
                    continue
                block = []
                for line in doc.split("Raises:", 1)[1].splitlines()[1:]:
                    if not line.strip():
                        break
                    block.append(line)
                indent = min(len(ln) - len(ln.lstrip()) for ln in block)
                for line in block:
                    if len(line) - len(line.lstrip()) == indent:     # an entry, not its text
                        seen += 1
                        for exc in line.strip().split(":", 1)[0].split(","):
                            if exc.strip() not in known:
                                bad.append(f"{name}: {exc.strip()}")
    assert bad == [] and seen > 20


def test_send_to_oneself_fails_at_once():
    """A send to this rank itself, its receive a later call on the same stream, is the
    smallest ring of blocking sends: it fails at once, with the advice to group them (it
    once waited HCCL_EXEC_TIMEOUT, then destroy() blocked), and the communicator can be
    destroyed quickly. Grouped, the same pair works."""
    import time
    comm = pyhccl.Comm(1, pyhccl.RootInfo.create(), 0)
    s = pyhccl.Stream()
    x = np.arange(1 << 16, dtype=np.float32)
    y = np.zeros_like(x)
    with pyhccl.group():
        comm.send(x, 0, stream=s)
        comm.recv(y, 0, stream=s)
    s.synchronize()
    assert (y == x).all()
    t0 = time.monotonic()
    advice = (r"send to this rank itself \(0\) cannot complete.*"
              r"HcclGroupStart/HcclGroupEnd \(pyhccl.group\(\)\)")
    comm.send(x, 0, stream=s)
    try:                      # the send may fail before this call: then the call says so
        comm.recv(y, 0, stream=s)
    except pyhccl.HcclError as e:
        assert re.search(advice, str(e)), e
    with pytest.raises(pyhccl.HcclError, match=advice):
        s.synchronize()
    comm.destroy()
    s.destroy()
    assert time.monotonic() - t0 < scaled(20)  # generous: it takes milliseconds


FAILING_TWICE = r'''
import numpy as np, pyhccl
comm = pyhccl.Comm(1, pyhccl.RootInfo.create(), 0)
s = pyhccl.Stream()
x = np.zeros(4, np.float32)
for _ in range(2):                       # the second fails fast: the comm failed
    try:
        comm.all_reduce(x, stream=s)
        comm.send(x, 0, stream=s)        # its receive is no part of the call
        s.synchronize()
    except pyhccl.HcclError:
        pass                             # caught: the user has it
comm.destroy()
'''


@pytest.mark.parametrize("level", [None, "2"])
def test_a_caught_failure_is_logged_once_and_only_when_asked(tmp_path, level):
    """A failure the caller caught printed '[ERROR] HCCL' and the whole flight record on
    stderr, for every op failing after it too, with 'root 0' on an AllReduce. Now: nothing
    at the default level; at warning level (2) one record, without fields that do not
    apply."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_GLOBAL_LOG_LEVEL"}
    if level is not None:
        env["ASCEND_GLOBAL_LOG_LEVEL"] = level
    script = tmp_path / "fail.py"
    script.write_text(FAILING_TWICE)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    if level is None:
        assert done.stderr == "", done.stderr
        return
    assert done.stderr.count("flight record (oldest first)") == 1, done.stderr
    assert "[WARNING] HCCL" in done.stderr and "[ERROR]" not in done.stderr, done.stderr
    assert "HcclAllReduce count 4 float32: done" in done.stderr, done.stderr
    assert "root" not in done.stderr, done.stderr


@pytest.mark.parametrize("subsys, shown", [(None, {"INIT", "COLL"}), ("INIT", {"INIT"}),
                                           ("^INIT", {"COLL"}), ("NET,COLL", {"COLL"})])
def test_log_lines_name_their_subsystem_and_can_be_chosen(tmp_path, subsys, shown):
    """Every log line names its subsystem (INIT, COLL, NET, ...), and PYHCCL_LOG_SUBSYS
    chooses which debug and info lines show, as NCCL_DEBUG_SUBSYS does; warnings always
    show (the failure record of FAILING_TWICE is a COLL warning)."""
    import subprocess
    import sys
    env = dict(os.environ, ASCEND_GLOBAL_LOG_LEVEL="0")
    env.pop("PYHCCL_LOG_SUBSYS", None)
    if subsys is not None:
        env["PYHCCL_LOG_SUBSYS"] = subsys
    script = tmp_path / "fail.py"
    script.write_text(FAILING_TWICE)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    levels = {}
    for m in re.finditer(r"^\[(\w+)\] (?:HCCL|ACL|PYHCCL)\(\d+\) \S+ pyhccl (\w+): ", done.stderr, re.M):
        levels.setdefault(m.group(2), set()).add(m.group(1))
    quiet = {s for s, lv in levels.items() if lv & {"DEBUG", "INFO"}}
    assert quiet == shown, done.stderr
    assert "WARNING" in levels.get("COLL", set()), done.stderr  # the failure, whatever the choice
