"""The backend's Python cost per call over pyhccl.Comm.all_reduce, side by side in one run.

    torchrun --nproc-per-node 1 -m pyhccl.torch.overhead
    torchrun --nproc-per-node 2 -m pyhccl.torch.overhead --calls 2000 --rounds 15

Each round times `calls` blocking all-reduces of one small tensor four ways,
in turn on the same communicator and stream:

  comm         Comm.all_reduce(array, stream=s); s.synchronize()   (the floor)
  backend      ProcessGroupPyhccl.allreduce([t], opts).wait()     (what dist calls)
  dist         dist.all_reduce(t)                                  (torch's wrappers too)
  dist async   dist.all_reduce(t, async_op=True).wait()

and prints the median and the best round's microseconds per call (rank 0),
and backend - comm: the backend's own overhead (the best rounds show it with
the least disturbance from other work on the machine).
"""

import argparse
import statistics
import time
from typing import Callable, Dict, List

import torch
import torch.distributed as dist

from ._backend import ProcessGroupPyhccl
from ._launch import init_process_group_from_env


def _per_call(fn: Callable[[], object], calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000, help="calls per round and way")
    ap.add_argument("--rounds", type=int, default=11, help="rounds (the median is shown)")
    ap.add_argument("--elements", type=int, default=2, help="float32 elements (2: 8 bytes)")
    args = ap.parse_args()
    init_process_group_from_env()
    pg = dist.group.WORLD
    assert isinstance(pg, ProcessGroupPyhccl), "the default group is not pyhccl's"
    t = torch.ones(args.elements)
    arr = t.numpy()
    comm, stream = pg.comm, pg.stream
    opts = dist.AllreduceOptions()

    def via_comm() -> None:
        comm.all_reduce(arr, stream=stream)
        stream.synchronize()

    ways: Dict[str, Callable[[], object]] = {
        "comm": via_comm,
        "backend": lambda: pg.allreduce([t], opts).wait(),
        "dist": lambda: dist.all_reduce(t),
        "dist async": lambda: dist.all_reduce(t, async_op=True).wait(),  # type: ignore[union-attr, unused-ignore]
    }
    times: Dict[str, List[float]] = {k: [] for k in ways}
    for fn in ways.values():                       # warm up every path
        _per_call(fn, 50)
    for _ in range(args.rounds):
        for name, fn in ways.items():
            dist.barrier()
            times[name].append(_per_call(fn, args.calls))
    med = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    if dist.get_rank() == 0:
        print(f"pyhccl torch backend, {dist.get_world_size()} rank(s), torch {torch.__version__}, "
              f"{args.elements * 4} B float32, {args.rounds} rounds x {args.calls} calls")
        print(f"  {'us/call':<11} {'median':>8} {'best':>8}")
        for name in ways:
            print(f"  {name:<11} {med[name]:8.2f} {best[name]:8.2f}")
        for k, d in (("median", med), ("best", best)):
            print(f"  backend - comm ({k}): {d['backend'] - d['comm']:+.2f} us/call "
                  f"(dist - comm: {d['dist'] - d['comm']:+.2f})")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
