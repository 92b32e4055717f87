"""The link bound benchmarks/multihost.py reports against: per host link, each way, with H
hosts of L ranks (n = HL), AllReduce moves 2(H-1)/H x S, AllGather and ReduceScatter
(H-1)/H x S, Broadcast S and AlltoAll L(n-L)/n x S; busbw's own factor divided by that is
the busbw the link allows per unit of link rate."""

import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from multihost import bound_factor  # noqa: E402


@pytest.mark.parametrize("op,hosts,ranks,want", [
    ("allreduce", 2, 4, 1.5), ("allgather", 4, 4, 1.0), ("reducescatter", 2, 4, 1.5),
    ("broadcast", 4, 8, 1.0),
    ("alltoall", 2, 4, 0.75), ("alltoall", 4, 4, 1.0), ("alltoall", 4, 8, 7 / 12),
    ("alltoall", 8, 16, 15 / 28),
])
def test_bound_factor(op, hosts, ranks, want):
    assert bound_factor(op, hosts, ranks) == pytest.approx(want)
