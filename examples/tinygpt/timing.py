"""How much of the host's waiting was communication: intervals on one clock.

train.py times each bucket's AllReduce on the communication stream with
events (from when the stream starts it to when it is done) and the training
loop's waits for results with the host clock. Exposed communication is the
part of the waiting during which an AllReduce was in flight, so it can never
exceed the time AllReduces were in flight; waiting for anything else (the
host-to-device copies ahead of a bucket, a late wake-up) is not counted.

Events give only differences between events, so EventClock pins one event
to the host clock (time.perf_counter, CLOCK_MONOTONIC like the runtime's
events) by recording it on an idle stream between two clock reads.
"""
import time
from typing import Iterable, List, Optional, Tuple

import pyhccl

Interval = Tuple[float, float]          # (start, end) in seconds, end >= start


def merge(intervals: Iterable[Interval]) -> List[Interval]:
    """Return the union of `intervals` as sorted, disjoint intervals."""
    out: List[Interval] = []
    for start, end in sorted(intervals):
        if end < start:
            raise ValueError(f"merge: interval ({start}, {end}) ends before it starts")
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def total(intervals: Iterable[Interval]) -> float:
    """Return the length of the union of `intervals`."""
    return sum(end - start for start, end in merge(intervals))


def overlap(a: Iterable[Interval], b: Iterable[Interval]) -> float:
    """Return the length of the time covered by both `a` and `b` (each union taken first)."""
    a, b = merge(a), merge(b)
    i = j = 0
    both = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        both += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return both


class EventClock:
    """Host-clock times (perf_counter seconds) of completed events, through one pinned event."""

    def __init__(self, stream: pyhccl.Stream, tries: int = 3) -> None:
        if tries < 1:
            raise ValueError(f"EventClock: tries must be at least 1, not {tries}")
        self.stream, self.tries = stream, tries
        self.anchor = pyhccl.Event()
        self.at = 0.0                              # the anchor's host time (seconds)
        self.error = float("inf")                  # at most this far off (seconds)
        self.pin()

    def pin(self) -> None:
        """Record an anchor on the (idle) stream; keep the narrowest of `tries` clock brackets."""
        best: Optional[Tuple[pyhccl.Event, float, float]] = None
        for _ in range(self.tries):
            event = pyhccl.Event()
            before = time.perf_counter()
            event.record(self.stream)
            event.synchronize()
            after = time.perf_counter()
            if best is None or after - before < best[2] - best[1]:
                if best is not None:
                    best[0].destroy()
                best = (event, before, after)
            else:
                event.destroy()
        assert best is not None                    # tries >= 1
        self.anchor.destroy()
        self.anchor, self.at, self.error = best[0], (best[1] + best[2]) / 2, (best[2] - best[1]) / 2

    def time_of(self, event: pyhccl.Event) -> float:
        """Return a completed event's time on the host clock (seconds)."""
        return self.at + self.anchor.elapsed_time(event) / 1000

    def destroy(self) -> None:
        """Release the anchor event."""
        self.anchor.destroy()
