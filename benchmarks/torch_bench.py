"""dist.all_reduce over the "pyhccl" backend beside "gloo", in one run, on the same tensors.

    torchrun --nproc-per-node 2 benchmarks/torch_bench.py            # 8 B to 64 MiB
    mpiexec -n 4 python benchmarks/torch_bench.py -b 64K -e 16M -f 4
    torchrun --nproc-per-node 2 benchmarks/torch_bench.py --ddp      # DDP step time instead

The columns are pyhccl.bench's (docs/performance.rst), with gloo in the place
of MPI: per size, `iters` dist.all_reduce calls on one float32 tensor, either
each waited for (round trip, -z 1) or all issued with async_op=True and then
waited for (queued, -z 0); by default both tables. The time per op is the
slowest rank's elapsed time / iters, the median of --trials trials; algbw =
S / time (GB = 1e9 bytes), busbw = algbw x 2(n-1)/n. Both backends reduce the
same tensor, in turn, and which goes first alternates from trial to trial. The check (not timed) starts
from small integers, whose sums are exact, and counts the wrong elements of
one all_reduce over all ranks.

--ddp trains examples/torchgpt's GPT with DDP over each backend in the same
processes: two copies of the model from the same initial weights and the same
batches, alternating blocks of --block steps between the backends, and prints
each one's step time and communication (examples/torch_ddp.py explains
"in flight" and "exposed"), and last the time to all-reduce tensors of DDP's
bucket sizes back to back with nothing else running (DDP's communication
time without the backward pass competing for the cores).
"""
import argparse
import gc
import os
import sys
import time
from statistics import mean, median
from typing import Any, Callable, Dict, List, Optional

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
from torchgpt.launch import finish, init, log0  # noqa: E402

if "RANK" in os.environ and "mpi4py.MPI" not in sys.modules:
    # torchrun's ranks need no MPI, but pyhccl.bench imports it (under mpirun, init() uses it)
    try:
        import mpi4py
        mpi4py.rc.initialize = mpi4py.rc.finalize = False
    except ImportError:
        pass
from pyhccl.bench import human_size, parse_size  # noqa: E402

BACKENDS = ("pyhccl", "gloo")


def rank_values(rank: int, n: int) -> torch.Tensor:
    """Rank `rank`'s input: small integers, so every sum is exact in float32."""
    return ((torch.arange(n) + rank) % 5 + 1).to(torch.float32)


def sizes(a: argparse.Namespace) -> List[int]:
    out, s = [], a.minbytes
    while s <= a.maxbytes:
        out.append(s)
        s *= a.stepfactor
    if out[-1] != a.maxbytes:
        out.append(a.maxbytes)       # the largest size is always measured
    return out


def timed(t: torch.Tensor, group: dist.ProcessGroup, timer: dist.ProcessGroup, iters: int,
          warmup: int, blocking: bool) -> float:
    """Seconds per all_reduce of `t` on `group`: the slowest rank's time for `iters` of them."""
    def run(k: int) -> None:
        if blocking:
            for _ in range(k):
                dist.all_reduce(t, group=group)
        else:
            works = [dist.all_reduce(t, group=group, async_op=True) for _ in range(k)]
            for w in works:
                w.wait()
    run(warmup)
    dist.barrier(group=timer)
    t0 = time.perf_counter()
    run(iters)
    elapsed = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=timer)
    return float(elapsed[0]) / iters


def wrong(t: torch.Tensor, group: dist.ProcessGroup, timer: dist.ProcessGroup) -> int:
    """Wrong elements of one all_reduce of the ranks' small integers, summed over the ranks."""
    n, rank, world = t.numel(), dist.get_rank(), dist.get_world_size()
    t.copy_(rank_values(rank, n))
    dist.all_reduce(t, group=group)
    expected = sum(rank_values(q, n) for q in range(world))
    bad = torch.tensor([int((t != expected).sum())], dtype=torch.int64)
    dist.all_reduce(bad, group=timer)
    return int(bad[0])


def table(a: argparse.Namespace, groups: Dict[str, dist.ProcessGroup],
          blocking: bool) -> List[Dict[str, Any]]:
    world = dist.get_world_size()
    factor = 2 * (world - 1) / world
    log0(f"# dist.all_reduce on {world} {'rank' if world == 1 else 'ranks'}, dtype float32, op sum, "
         f"iters {a.iters}, warm-up {a.warmup_iters}, median of {a.trials} trials, "
         f"{'round trips' if blocking else 'queued'}; "
         f"torch {torch.__version__}, pyhccl vs gloo")
    log0("# time: slowest rank per op (us); algbw, busbw: GB/s")
    log0(f"#{'size(B)':>12} {'count':>11} {'type':>8} {'redop':>5} {'root':>4} {'time':>10} "
         f"{'algbw':>7} {'busbw':>7} {'#wrong':>6} {'gloo time':>10} {'busbw':>7} {'#wrong':>6} "
         f"{'gloo/ours':>9}")
    rows = []
    for step, nbytes in enumerate(sizes(a)):
        count = max(nbytes // 4, 1)
        t = rank_values(dist.get_rank(), count)         # the one tensor both backends reduce
        iters = max(1, min(a.iters, int(2e9 // (count * 4))))
        trials: Dict[str, List[float]] = {name: [] for name in BACKENDS}
        bad: Dict[str, int] = {name: 0 for name in BACKENDS}
        for trial in range(a.trials):
            order = BACKENDS if (step + trial) % 2 == 0 else BACKENDS[::-1]
            for name in order:
                trials[name].append(timed(t, groups[name], groups["gloo"], iters, a.warmup_iters,
                                          blocking))
                if a.check and trial == 0:
                    bad[name] = wrong(t, groups[name], groups["gloo"])
        secs = {name: median(trials[name]) for name in BACKENDS}
        s = count * 4
        row = {"size": s, "count": count, "time_us": secs["pyhccl"] * 1e6,
               "algbw": s / secs["pyhccl"] / 1e9, "wrong": bad["pyhccl"],
               "gloo_time_us": secs["gloo"] * 1e6, "gloo_algbw": s / secs["gloo"] / 1e9,
               "gloo_wrong": bad["gloo"], "ratio": secs["gloo"] / secs["pyhccl"]}
        rows.append(row)
        log0(f" {s:>12} {count:>11} {'float32':>8} {'sum':>5} {-1:>4} {row['time_us']:>10.1f} "
             f"{row['algbw']:>7.2f} {row['algbw'] * factor:>7.2f} {row['wrong']:>6} "
             f"{row['gloo_time_us']:>10.1f} {row['gloo_algbw'] * factor:>7.2f} {row['gloo_wrong']:>6} "
             f"{row['ratio']:>9.2f}")
    total = sum(r["wrong"] + r["gloo_wrong"] for r in rows)
    log0(f"# Out of bounds values : {total} {'OK' if total == 0 else 'FAILED'}")
    return rows


def summary(results: Dict[str, List[Dict[str, Any]]]) -> None:
    """One markdown table: gloo time / pyhccl time per size, round trip | queued."""
    modes = [m for m in ("round trip", "queued") if m in results]
    log0(f"\ngloo time / pyhccl time, {' | '.join(modes)} (above 1: pyhccl faster)\n")
    log0("| size | " + " | ".join(f"pyhccl µs, {m}" for m in modes) + " | gloo / pyhccl |")
    log0("|---|" + "---|" * len(modes) + "---|")
    for i, r in enumerate(results[modes[0]]):
        times = " | ".join(f"{results[m][i]['time_us']:.1f}" for m in modes)
        ratios = " \\| ".join(f"{results[m][i]['ratio']:.2f}" for m in modes)
        label = human_size(r["size"])
        label = f"{label[:-1]} {label[-1]}iB" if label[-1] in "KMG" else f"{label} B"
        log0(f"| {label} | {times} | {ratios} |")


def ddp_compare(a: argparse.Namespace, groups: Dict[str, dist.ProcessGroup]) -> None:
    """DDP step time and communication of the same training over each backend, alternating."""
    import copy

    from torch.nn.parallel import DistributedDataParallel as DDP

    from tinygpt.data import Corpus
    from torchgpt.model import GPT, GPTConfig
    from torchgpt.training import (CommTimer, OptimizerFactory, autocast, bf16_helps, global_batch,
                                   loss_of, shard, timed_allreduce_hook)
    rank, world = dist.get_rank(), dist.get_world_size()
    bf16 = bf16_helps() if a.bf16 == "auto" else a.bf16 == "on"
    corpus = Corpus()
    torch.manual_seed(0)
    base = GPT(GPTConfig())
    runs: Dict[str, Dict[str, Any]] = {}
    for name in BACKENDS:
        ddp = DDP(copy.deepcopy(base), process_group=groups[name], bucket_cap_mb=a.bucket_mb)
        timer = CommTimer(groups[name])
        ddp.register_comm_hook(timer, timed_allreduce_hook)
        runs[name] = {"ddp": ddp, "timer": timer, "opt": OptimizerFactory(1e-3)(ddp),
                      "fb": [], "step": [], "flight": [], "alone": [], "paired": []}
    log0(f"# DDP of examples/torchgpt's GPT ({sum(p.numel() for p in base.parameters()) / 1e6:.2f} M "
         f"parameters), {world} ranks, global batch {a.rows}x64, "
         f"{'bf16 autocast' if bf16 else 'float32'}, buckets of {a.bucket_mb:g} MB; {a.steps} steps "
         f"per backend in blocks of {a.block}, torch {torch.__version__}")

    def one(name: str, step: int, record: bool) -> None:
        r = runs[name]
        x, y = global_batch(corpus, a.rows, 64, step)
        x, y = shard(x, rank, world), shard(y, rank, world)
        if record and step % 3 == 0:                  # the same work without communication
            t0 = time.perf_counter()
            with r["ddp"].no_sync():
                with autocast(bf16):
                    loss = loss_of(r["ddp"], x, y)
                loss.backward()
            r["alone"].append(time.perf_counter() - t0)
            r["opt"].zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        with autocast(bf16):
            loss = loss_of(r["ddp"], x, y)
        loss.backward()
        t1 = time.perf_counter()
        r["opt"].step()
        r["opt"].zero_grad(set_to_none=True)
        t2 = time.perf_counter()
        flight = r["timer"].in_flight(t0, t1)
        if record:
            r["fb"].append(t1 - t0)
            r["step"].append(t2 - t0)
            r["flight"].append(flight)
            if step % 3 == 0:
                r["paired"].append(r["fb"][-1] - r["alone"][-1])

    for name in BACKENDS:                             # warm-up: DDP builds its buckets
        for s in range(2):
            one(name, s, record=False)
    done = 0
    while done < a.steps:
        block = range(done, min(done + a.block, a.steps))
        for name in (BACKENDS if (done // a.block) % 2 == 0 else BACKENDS[::-1]):
            for s in block:
                one(name, 2 + s, record=True)
        done += len(block)
    buckets = [runs["pyhccl"]["timer"].buckets[i] for i in sorted(runs["pyhccl"]["timer"].buckets)]
    bufs = [torch.ones(n, dtype=dt) for n, dt in buckets]
    log0("\n| backend | step ms | forward+backward ms | same without communication ms | "
         "in flight ms (share) | exposed ms (share) | bucket AllReduces alone ms |")
    log0("|---|---|---|---|---|---|---|")
    out = {}
    for name in BACKENDS:
        r = runs[name]
        v = torch.tensor([median(r["step"]), median(r["fb"]), median(r["flight"]), median(r["alone"]),
                          median(r["paired"]), reduce_alone(bufs, groups[name], groups["gloo"])],
                         dtype=torch.float64)
        dist.all_reduce(v, op=dist.ReduceOp.MAX, group=groups["gloo"])
        step, fb, flight, alone, paired, buckets_alone = (float(x) for x in v)
        exposed = min(max(paired, 0.0), fb)
        out[name] = (step, flight, exposed, buckets_alone)
        log0(f"| {name} | {step * 1e3:.1f} | {fb * 1e3:.1f} | {alone * 1e3:.1f} | "
             f"{flight * 1e3:.1f} ({flight / step:.0%}) | {exposed * 1e3:.1f} ({exposed / step:.0%}) | "
             f"{buckets_alone * 1e3:.1f} |")
    (ps, pf, pe, pa), (gs, gf, ge, ga) = out["pyhccl"], out["gloo"]
    log0(f"\ngloo / pyhccl: step time {gs / ps:.2f}x, communication in flight {gf / max(pf, 1e-9):.2f}x, "
         f"exposed {ge / pe if pe > 0 else float('inf'):.2f}x, the buckets' AllReduces alone "
         f"{ga / pa:.2f}x (medians; slowest rank)")
    sizes_mb = [n * b.element_size() / 1e6 for (n, _), b in zip(buckets, bufs)]
    log0(f"# DDP's buckets: {', '.join(f'{mb:.2f} MB' for mb in sizes_mb)}")
    # Free the DDP models while their groups live: torch's Gloo group can deadlock on the GIL
    # when a DDP reducer over it is collected during shutdown.
    runs.clear()
    gc.collect()
    dist.barrier(group=groups["gloo"])


def reduce_alone(bufs: List[torch.Tensor], group: dist.ProcessGroup, timer: dist.ProcessGroup,
                 trials: int = 7) -> float:
    """Seconds to all-reduce DDP's buckets back to back with nothing else running (median of trials)."""
    times = []
    for _ in range(trials):
        dist.barrier(group=timer)
        t0 = time.perf_counter()
        works = [dist.all_reduce(b, group=group, async_op=True) for b in bufs]
        for w in works:
            w.wait()
        times.append(time.perf_counter() - t0)
    return median(times)


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-b", "--minbytes", type=parse_size, default=8)
    p.add_argument("-e", "--maxbytes", type=parse_size, default=parse_size("64M"))
    p.add_argument("-f", "--stepfactor", type=int, default=8)
    p.add_argument("-n", "--iters", type=int, default=20)
    p.add_argument("-w", "--warmup_iters", type=int, default=5)
    p.add_argument("-c", "--check", type=int, default=1, choices=[0, 1])
    p.add_argument("-t", "--trials", type=int, default=3,
                   help="timed trials per size and backend, alternating who goes first; the median counts")
    p.add_argument("-z", "--blocking", type=int, choices=[0, 1],
                   help="1: round trips only, 0: queued only (default: both tables)")
    p.add_argument("--ddp", action="store_true", help="compare DDP training instead")
    p.add_argument("--steps", type=int, default=30, help="--ddp: measured steps per backend")
    p.add_argument("--block", type=int, default=5, help="--ddp: steps per turn of a backend")
    p.add_argument("--rows", type=int, default=16, help="--ddp: sequences per global batch")
    p.add_argument("--bucket-mb", type=float, default=4.0, help="--ddp: DDP bucket size")
    p.add_argument("--bf16", choices=["auto", "on", "off"], default="auto")
    a = p.parse_args(argv)
    if a.minbytes < 4 or a.maxbytes < a.minbytes or a.stepfactor < 2:
        p.error("need 4 <= minbytes <= maxbytes and a step factor of at least 2")
    if a.iters < 1 or a.warmup_iters < 0 or a.trials < 1 or a.steps < 3 or a.block < 1:
        p.error("need -n >= 1, -w >= 0, -t >= 1, --steps >= 3, --block >= 1")
    return a


def main(argv: Optional[List[str]] = None) -> int:
    a = parse_args(argv)
    init("pyhccl")
    groups = {"pyhccl": dist.group.WORLD, "gloo": dist.new_group(backend="gloo")}
    if a.ddp:
        if a.rows % dist.get_world_size():
            log0(f"torch_bench: --rows {a.rows} does not split over {dist.get_world_size()} ranks")
            return finish(2)
        ddp_compare(a, groups)
        return finish(0)
    results = {}
    modes: List[int] = [1, 0] if a.blocking is None else [a.blocking]
    for blocking in modes:
        results["round trip" if blocking else "queued"] = table(a, groups, bool(blocking))
        log0("")
    summary(results)
    bad = sum(r["wrong"] + r["gloo_wrong"] for rows in results.values() for r in rows)
    return finish(1 if bad else 0)


if __name__ == "__main__":
    sys.exit(main())
