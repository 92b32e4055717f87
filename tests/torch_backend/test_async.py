"""async_op=True, Work and futures behave as with Gloo: asynchronous for real."""

import time

import pytest
import torch
import torch.distributed as dist

from .expect import reduced, same, vals

LATE = 0.4          # how long the last rank holds back (generous: the machine is shared)


def _late(rank, size):
    return size > 1 and rank == size - 1


def test_async_op_returns_at_once(rank, size):
    t = vals(rank, 1000, torch.float32)
    if _late(rank, size):
        time.sleep(LATE)
    t0 = time.monotonic()
    work = dist.all_reduce(t, async_op=True)
    took = time.monotonic() - t0
    if size > 1 and not _late(rank, size):
        assert took < LATE / 2, f"all_reduce(async_op=True) blocked for {took:.3f} s"
        assert not work.is_completed()
    work.wait()
    assert work.is_completed() and work.is_success() and work.exception() is None
    assert same(t, reduced("SUM", torch.float32, 1000, size))
    assert work.result() == [t]


def test_future_completes_without_wait(rank, size):
    t = vals(rank, 8, torch.float64)
    if _late(rank, size):
        time.sleep(LATE)
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    seen = []
    chained = fut.then(lambda f: seen.append(f.value()[0].clone()) or f.value()[0] * 2)
    deadline = time.monotonic() + 30
    while not chained.done():               # nobody calls wait(): the stream completes it
        assert time.monotonic() < deadline, "the future never completed"
        time.sleep(0.001)
    expect = reduced("SUM", torch.float64, 8, size)
    assert same(seen[0], expect) and same(chained.value(), expect * 2)
    assert work.is_completed()


def test_many_async_ops_in_flight(rank, size):
    ts = [vals(rank + k, 64, torch.float32) for k in range(20)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    outs = [torch.empty(size, 3, dtype=torch.int64) for _ in range(5)]
    works += [dist.all_gather_into_tensor(o, vals(rank, 3, torch.int64), async_op=True)
              for o in outs]
    futs = [w.get_future() for w in works[::3]]
    torch.futures.wait_all(futs)
    for w in reversed(works):
        w.wait()
    for k, t in enumerate(ts):
        assert same(t, sum(vals(r + k, 64, torch.float64) for r in range(size)).float())
    for o in outs:
        assert same(o, torch.stack([vals(r, 3, torch.int64) for r in range(size)]))


def test_future_of_a_finished_work_and_p2p(rank, size):
    t = torch.ones(2)
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    assert w.get_future().done() and same(w.get_future().value()[0], torch.full((2,), size * 1.))
    if size > 1:
        peer = rank ^ 1
        if peer < size:
            got = torch.empty(4)
            ws = dist.isend(torch.full((4,), float(rank)), peer)
            wr = dist.irecv(got, peer)
            wr.get_future().wait()
            ws.wait()
            assert same(got, torch.full((4,), float(peer)))


@pytest.mark.parametrize("hook", ["fp16_compress_hook", "bf16_compress_hook", "allreduce_hook"])
def test_ddp_comm_hooks(hook, rank, size):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(6, 3))
    fn = getattr(default_hooks, hook)
    if hook == "bf16_compress_hook" and torch.version.cuda is None:
        # DDP refuses this hook by name on torch builds without CUDA (not a backend
        # matter); the same hook under another name runs.
        def bf16_hook(state, bucket):
            return default_hooks.bf16_compress_hook(state, bucket)
        fn = bf16_hook
    model.register_comm_hook(dist.group.WORLD, fn)
    x = torch.full((4, 6), 0.25 * (rank + 1))
    model(x).sum().backward()
    # The mean of the per-rank gradients, in fp16/bf16 where compressed: all small
    # exact binary fractions, so the result is exact.
    expect_w = sum(torch.full((3, 6), 0.25 * (r + 1) * 4) for r in range(size)) / size
    assert torch.equal(model.module.weight.grad, expect_w)
    assert torch.equal(model.module.bias.grad, torch.full((3,), 4.0))


def test_wait_with_a_timeout(rank, size):
    import datetime
    if size == 1:
        pytest.skip("needs a late peer")
    t = torch.ones(3)
    if _late(rank, size):
        time.sleep(LATE * 2)
        dist.all_reduce(t)
    else:
        w = dist.all_reduce(t, async_op=True)
        with pytest.raises(RuntimeError, match="all_reduce on rank .* did not complete within"):
            w.wait(datetime.timedelta(seconds=LATE / 4))
        w.wait()                    # still pending, then done
    assert same(t, torch.full((3,), float(size)))
