"""RootInfo: creation, bytes and pickle round trips, validation."""

import gc
import pickle

import pytest

import pyhccl


def test_root_info_round_trips_and_joins():
    ri = pyhccl.RootInfo.create()
    data = bytes(ri)
    assert len(data) == pyhccl.ROOT_INFO_BYTES == 4108 == len(ri)
    assert pyhccl.RootInfo.from_bytes(data) == ri
    assert pyhccl.RootInfo(bytearray(data)) == ri
    assert pyhccl.RootInfo.from_bytes(memoryview(data)) == ri
    assert hash(pyhccl.RootInfo(data)) == hash(ri)
    back = pickle.loads(pickle.dumps(ri))
    assert back == ri and bytes(back) == data
    assert repr(ri) == "RootInfo(<4108 bytes>)"
    assert ri != pyhccl.RootInfo(bytes(4108)) and ri != data
    # the root info is usable: a one-rank communicator joins through it
    with pyhccl.Comm(1, back, 0) as comm:
        assert (comm.rank, comm.size) == (0, 1)
    assert comm.is_destroyed


@pytest.mark.parametrize("data, exc", [(b"", ValueError), (bytes(4107), ValueError),
                                       (bytes(4109), ValueError), ("x" * 4108, TypeError),
                                       (None, TypeError), (4108, TypeError)])
def test_root_info_rejects(data, exc):
    with pytest.raises(exc):
        pyhccl.RootInfo.from_bytes(data)


def test_collected_live_comm_warns():
    comm = pyhccl.Comm(1, pyhccl.RootInfo.create(), 0)
    with pytest.warns(ResourceWarning, match="collected without destroy"):
        del comm
        gc.collect()
