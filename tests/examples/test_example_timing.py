"""examples/train.py's communication timing: the exposed part never exceeds the whole (issue 19).

The interval arithmetic of examples/tinygpt/timing.py, then train() itself with
the compute stream held up before every bucket: the loop then waits for
something other than communication, which must not count as exposed
communication (train.py once reported "3.6 ms a step, 12.2 ms of it exposed").
"""
import importlib.util
import os
import sys
import time

import numpy as np
import pytest

import pyhccl
from conftest import ROOT, assert_all

EXAMPLES = str(ROOT / "examples")
sys.path.insert(0, EXAMPLES)

from tinygpt.timing import EventClock, merge, overlap, total  # noqa: E402


def load_train():
    spec = importlib.util.spec_from_file_location("example_train", os.path.join(EXAMPLES, "train.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_merge_joins_touching_and_nested_intervals():
    assert merge([(5, 6), (0, 2), (1, 3), (3, 4), (5.5, 5.7)]) == [(0, 4), (5, 6)]
    assert merge([]) == []
    with pytest.raises(ValueError, match="merge: interval"):
        merge([(2, 1)])


def test_overlap_counts_time_covered_by_both():
    assert overlap([(0, 10)], [(2, 3), (5, 7)]) == 3
    assert overlap([(0, 1), (4, 6)], [(0.5, 5)]) == 1.5
    assert overlap([(0, 1)], [(1, 2)]) == 0
    assert overlap([(0, 4), (1, 2)], [(0, 4)]) == 4        # each side's union first: no double count


def test_overlap_never_exceeds_either_side():
    rng = np.random.default_rng(7)
    for _ in range(200):
        a = [tuple(sorted(rng.uniform(0, 10, 2))) for _ in range(rng.integers(0, 6))]
        b = [tuple(sorted(rng.uniform(0, 10, 2))) for _ in range(rng.integers(0, 6))]
        both = overlap(a, b)
        assert -1e-12 <= both <= min(total(a), total(b)) + 1e-12
        assert abs(both - overlap(b, a)) < 1e-12


def test_event_clock_places_events_on_the_host_clock(stream):
    clock = EventClock(stream)
    before = time.perf_counter()
    event = stream.record()
    stream.synchronize()
    after = time.perf_counter()
    at = clock.time_of(event)
    slack = clock.error + 1e-3                 # the anchor's bracket, and float ms rounding
    assert before - slack <= at <= after + slack
    event.destroy()
    clock.destroy()


@pytest.mark.mpi
@pytest.mark.timeout(300)
def test_train_exposed_never_exceeds_the_whole(world, monkeypatch):
    """After each backward pass the copies to the device wait 150 ms: waiting, not communication."""
    train = load_train()
    from tinygpt.data import Corpus
    from tinygpt.model import Config
    from tinygpt.trainer import Settings

    reduce = train.GradBuckets.reduce

    def slow_copies(self, grads):
        grads = list(grads)                  # the whole backward pass first: nothing left to hide behind
        self.compute.launch_host_func(time.sleep, 0.15)
        return reduce(self, grads)

    monkeypatch.setattr(train.GradBuckets, "reduce", slow_copies)
    stream = pyhccl.Stream()
    lines = []
    settings = Settings(steps=3, batch=2 * world.size, val_batch=world.size)
    _, history, summary = train.train(world, stream, Config(), Corpus(), settings, 64 << 10,
                                      lines.append)
    stream.destroy()
    assert len(history) == 4 and len(lines) == 4       # step 0 and every step (log_every=1)
    assert_all(0 <= summary["exposed_ms"] <= summary["comm_ms"],
               f"exposed {summary['exposed_ms']:.1f} ms of {summary['comm_ms']:.1f} ms")
    assert_all(0 <= summary["hidden"] <= 1, f"hidden {summary['hidden']}")
