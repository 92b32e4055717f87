"""The HCCL API beyond the root-info collectives, from C, without MPI: the C checks
in tests/c/ (dtype_check.c, window_check.c, symwin_cann.c, comm_api_check.c) are
compiled against build/lib and started once per rank.

Covers INT128/HIF8/FP8 in every data-movement collective (and their refused
reductions); symmetric windows, memory ranges and activated memory with their bad
inputs, a window registered by some ranks only, and a CANN-style program that
allocates with the virtual-memory API and runs AllReduce/AllGather on a window;
sub-communicators, HcclCommInitAll, state callbacks, and rank table files (good
ones of versions 1.0 and 1.2, and every kind of bad one).

Under mpiexec only the first rank runs these (they start their own processes).
"""
import json
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from cdrivers import CDIR, assert_all_pass, build_libs, compile_check, rootfile, run_ranks
from conftest import ROOT, first_rank_only, scaled

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found"),
    first_rank_only,
]


@pytest.fixture(scope="module")
def exes(tmp_path_factory):
    """The compiled checks, linked against freshly built libraries."""
    build_libs()
    out = tmp_path_factory.mktemp("hccl_ext")
    return {name: compile_check(f"{name}.c", out / name)
            for name in ("dtype_check", "window_check", "symwin_cann", "comm_api_check")}


# ---- rank table building blocks --------------------------------------------

@pytest.mark.timeout(120)
def test_json_reader():
    """csrc/hccl/ranktable's JSON reader on valid and broken documents, with line and column
    (its SHA-256: tests/c/test_c_abi.py::test_crypto_check)."""
    exe = Path(tempfile.mkdtemp(prefix="pyhccl-rt-")) / "ranktable_check"
    try:
        cc = subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror",
                             f"-I{ROOT / 'include'}", f"-I{ROOT / 'csrc'}",
                             str(CDIR / "ranktable_check.cc"),
                             str(ROOT / "csrc/hccl/ranktable/json.cc"), "-o", str(exe)],
                            capture_output=True, text=True, timeout=120)
        assert cc.returncode == 0, cc.stderr
        out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.strip() == "ranktable ok", out.stderr
    finally:
        shutil.rmtree(exe.parent, ignore_errors=True)


# ---- data types --------------------------------------------------------------

@pytest.mark.timeout(180)
@pytest.mark.parametrize("n,mem,hosts", [(1, "host", None), (2, "host", None), (3, "device", None),
                                         (4, "device", [0, 0, 1, 1])],
                         ids=["1-host", "2-host", "3-device", "2x2-hosts-device"])
def test_dtypes_move_in_every_data_movement_collective(exes, tmp_path, n, mem, hosts):
    """INT128, HIF8 and FP8 in AllGather, Broadcast, Scatter, AlltoAll(V/VC), AllGatherV,
    Send/Recv and BatchSendRecv, odd counts, in place and not, every byte pattern; every
    reduction of them fails with HCCL_E_NOT_SUPPORT saying CANN does not reduce them."""
    root = rootfile(tmp_path, "dt")
    results = run_ranks(lambda r: [exes["dtype_check"], "dtypes", r, n, root, mem], n,
                        rank_env_of=(lambda r: {"PYHCCL_HOST_TAG": f"h{hosts[r]}"}) if hosts else None)
    assert_all_pass(results, f"dtypes n={n} {mem}")


# ---- symmetric windows ---------------------------------------------------------

@pytest.mark.timeout(180)
@pytest.mark.parametrize("n", [2, 4])
def test_cann_program_with_symmetric_window(exes, tmp_path, n):
    """A program written for CANN: virtual memory, HcclCommSymWinRegister, AllReduce and
    AllGather on the window, deregister, unmap, free. The debug log shows that every one of
    its collectives (small ones too) read the peers' windows directly."""
    root = rootfile(tmp_path, "cann")
    results = run_ranks(lambda r: [exes["symwin_cann"], r, n, root], n,
                        env={"ASCEND_GLOBAL_LOG_LEVEL": "0", "ASCEND_SLOG_PRINT_TO_STDOUT": "1"})
    assert_all_pass(results, f"symwin_cann n={n}")
    for r, (_, out) in enumerate(results):
        ops = re.findall(r"#\d+ (HcclAllReduce|HcclAllGather) .* via (\w+): ok", out)
        assert len(ops) == 12 and all(algo == "window" for _, algo in ops), (r, ops, out[-2000:])


@pytest.mark.timeout(180)
@pytest.mark.parametrize("n", [1, 2, 4])
def test_windows_and_memory_ranges(exes, tmp_path, n):
    """Registration and its bad inputs (on one rank: every rank fails with its message),
    overlapping windows, unmapping registered memory, collectives in and across windows,
    deregistration, memory ranges and activated memory, windows dropped with their
    communicator."""
    root = rootfile(tmp_path, "win")
    results = run_ranks(lambda r: [exes["window_check"], "windows", r, n, root], n)
    assert_all_pass(results, f"windows n={n}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["other", "destroy"])
def test_window_registered_by_some_ranks_only(exes, tmp_path, how):
    """The last rank does not register (it runs an AllReduce, or destroys its communicator):
    every rank fails within seconds, and the message says what the other rank did."""
    root = rootfile(tmp_path, "partial")
    t0 = time.monotonic()
    results = run_ranks(lambda r: [exes["window_check"], "partial", r, 3, root, how], 3, timeout=60)
    assert_all_pass(results, f"partial {how}")
    assert time.monotonic() - t0 < scaled(30)


# ---- communicators -----------------------------------------------------------

@pytest.mark.timeout(180)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_sub_communicators(exes, tmp_path, n):
    """HcclCreateSubCommConfig: two groups in one call, a group in any order with the other
    ranks passing NULL, a group of a group, names, and bad calls failing on every rank."""
    root = rootfile(tmp_path, "sub")
    results = run_ranks(lambda r: [exes["comm_api_check"], "subcomm", r, n, root], n)
    assert_all_pass(results, f"subcomm n={n}")


@pytest.mark.timeout(120)
def test_init_all_and_state_callbacks(exes):
    """HcclCommInitAll: one process, four devices, a collective from four threads; its bad
    inputs; callbacks around HcclCommDestroy; Suspend/Resume refused with the reason."""
    results = run_ranks(lambda r: [exes["comm_api_check"], "initall", 0, 4, "-"], 1)
    assert_all_pass(results, "initall")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _table(version, servers, **extra):
    doc = {"status": "completed", "version": version, "server_count": str(len(servers)),
           "server_list": servers}
    doc.update(extra)
    return doc


def _dev(dev, rank, ip=None, **extra):
    d = {"device_id": str(dev), "rank_id": str(rank)}
    if ip:
        d["device_ip"] = ip
    d.update(extra)
    return d


@pytest.mark.timeout(180)
@pytest.mark.parametrize("version", ["1.0", "1.2"])
@pytest.mark.parametrize("n", [2, 4])
def test_rank_table(exes, tmp_path, version, n):
    """HcclCommInitClusterInfo[Config] from a version 1.0 table (one server, port from
    HCCL_IF_BASE_PORT) and a 1.2 table (two servers, super pods, rank 0's host_port)."""
    port = _free_port()
    env = {}
    if version == "1.0":
        devs = [_dev(d, (d * 3) % n if n % 3 else d, f"198.18.1.{d + 1}") for d in range(n)]
        doc = _table("1.0", [{"server_id": "node_0", "device": devs}])
        env["HCCL_IF_BASE_PORT"] = str(port)
    else:
        half = n // 2
        servers = [{"server_id": f"node_{s}", "host_ip": "127.0.0.1",
                    "device": [_dev(d, s * half + d, f"198.18.{s}.{d + 1}", super_device_id=str(d),
                                    **({"host_port": str(port)} if s == 0 and d == 0 else {}))
                               for d in range(half)]} for s in range(2)]
        doc = _table("1.2", servers, super_pod_list=[
            {"super_pod_id": "0", "server_list": [{"server_id": "node_0"}, {"server_id": "node_1"}]}])
    path = tmp_path / "rank_table.json"
    path.write_text(json.dumps(doc, indent=2))
    results = run_ranks(lambda r: [exes["comm_api_check"], "ranktable", r, n, path], n, env=env)
    assert_all_pass(results, f"rank table {version} n={n}")


BAD_TABLES = [
    ('{"status": "completed", "version": "1.0", ', "is not valid JSON: line 1"),
    ("[]", "the document: must be an object"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0)]}], status="initializing"),
     "status: is \"initializing\""),
    ({"version": "1.0", "server_count": "1", "server_list": []}, "status: missing (required)"),
    (_table("2.0", [{"server_id": "a", "device": [_dev(0, 0)]}]), "version: \"2.0\" is not supported"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0)]}], server_count="2"),
     "server_count: 2 does not match the 1 entries of server_list"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0)]}], server_count="two"),
     "server_count: \"two\" is not a non-negative integer"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0)]}], server_count="1" * 25),
     "server_count: " + "1" * 25 + " is out of range [1, 1048576]"),
    (_table("1.0", [{"device": [_dev(0, 0)]}]), "server_list[0].server_id: missing (required)"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0, "198.18.0.1")]},
                    {"server_id": "a", "device": [_dev(0, 1, "198.18.0.2")]}]),
     "server_list[1].server_id: \"a\" is used by another server"),
    (_table("1.0", [{"server_id": "a", "device": []}]), "server_list[0].device: is empty"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0), {"device_id": "1"}]}]),
     "server_list[0].device[1].rank_id: missing (required)"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0), _dev(1, "one")]}]),
     "server_list[0].device[1].rank_id: \"one\" is not a non-negative integer"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0), _dev(1, 2)]}]),
     "server_list[0].device[1].rank_id: 2 is not below the number of devices (2)"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0), _dev(1, 0)]}]),
     "server_list[0].device[1].rank_id: rank 0 appears twice"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0), _dev(0, 1)]}]),
     "server_list[0].device[1] (rank 1).device_id: 0 appears twice on server \"a\""),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0), _dev(1, 1, "1.2.3")]}]),
     "server_list[0].device[1] (rank 1).device_ip: \"1.2.3\" is not an IPv4 or IPv6 address"),
    (_table("1.0", [{"server_id": "a", "device": [_dev(0, 0, "198.18.0.1")]},
                    {"server_id": "b", "device": [_dev(0, 1)]}]),
     "server_list[1].device[0] (rank 1).device_ip: missing (required when the table has more "
     "than one server)"),
    (_table("1.0", [{"server_id": "a", "host_ip": "localhost", "device": [_dev(0, 0)]}]),
     "server_list[0].host_ip: \"localhost\" is not an IPv4 or IPv6 address"),
    (_table("1.2", [{"server_id": "a", "device": [_dev(0, 0, host_port="70000")]}]),
     "server_list[0].device[0] (rank 0).host_port: 70000 is out of range [1, 65535]"),
    (_table("1.2", [{"server_id": "a", "device": [_dev(0, 0)]}],
            super_pod_list=[{"super_pod_id": "0", "server_list": [{"server_id": "z"}]}]),
     "super_pod_list[0].server_list[0].server_id: \"z\" is not a server of server_list"),
    (_table("1.0", [{"server_id": "node_0", "device": [_dev(0, 0, "198.18.0.1")]},
                    {"server_id": "node_1", "device": [_dev(0, 1, "198.18.0.2")]}]),
     "has no host_ip and its server_id is not an IP address"),
]


@pytest.mark.timeout(60)
def test_bad_rank_tables(exes, tmp_path):
    """Every malformed table is refused with a message naming the call, the file, the field
    (and the rank, and the line and column where it is)."""
    args = []
    for i, (doc, want) in enumerate(BAD_TABLES):
        path = tmp_path / f"bad{i}.json"
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        args += [path, want]
    args += [tmp_path / "missing.json", "cannot read the rank table"]
    results = run_ranks(lambda r: [exes["comm_api_check"], "badtables", 0, 1, "-", *args], 1)
    assert_all_pass(results, "bad rank tables")
    out = results[0][1]
    assert f"rank table {tmp_path / 'bad1.json'}: the document" in out
    assert "(line 1, column 1)" in out
