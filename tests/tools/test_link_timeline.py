"""benchmarks/link_timeline.py: host 0's data packets from perf's text, and one
measurement's timeline from the ranks' clocks and those packets."""

import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from link_timeline import data_packets, timeline  # noqa: E402

SCRIPT = """\
  100.000100: dev=phc1c0v0 skbaddr=0xffff1 len=8296
  100.000200: dev=phc1c0v1 skbaddr=0xffff2 len=8296
  100.000300: dev=phc1c0v0 skbaddr=0xffff3 len=52
  100.000400: dev=phc1c0v0 skbaddr=0xffff4 len=65212
"""


def test_data_packets_keep_the_port_and_drop_small_ones():
    assert data_packets(SCRIPT, "phc1c0v0") == [(100.0001, 8296), (100.0004, 65212)]
    assert data_packets(SCRIPT, "phc1c0v1") == [(100.0002, 8296)]
    assert data_packets("", "phc1c0v0") == []


def test_timeline_counts_from_the_first_rank_out_of_the_barrier():
    m = {"t0": [10.002, 10.000], "t1": [10.100, 10.140]}
    # one packet before the measurement (the last one's tail) and one after it: not counted
    sent = [(9.999, 9000), (10.004, 125000), (10.054, 125000), (10.139, 1000), (10.2, 5000)]
    t = timeline(m, sent)
    assert t["first"] == pytest.approx(4.0)
    assert t["busy"] == pytest.approx(135.0)
    assert t["rate"] == pytest.approx(251000 * 8 / 0.135 / 1e6)
    assert t["done"] == pytest.approx(140.0)
    assert timeline(m, sent[:2]) is None  # fewer than two packets: no timeline
