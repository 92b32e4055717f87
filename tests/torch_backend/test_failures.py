"""A dead rank, a timeout, destroy/abort and Ctrl-C, each in a small job of its own."""

import signal
import time

import pytest

from .jobs import Job

pytestmark = pytest.mark.solo


def _show(results):
    return "\n".join(f"--- rank {r} (exit {rc}):\n{text}" for r, (rc, text) in enumerate(results))


def test_killed_rank_raises_on_the_others_naming_it():
    job = Job("""
        dist.init_process_group("pyhccl", timeout=datetime.timedelta(seconds=30))
        t = torch.ones(4); dist.all_reduce(t)
        if rank == 1:
            os._exit(9)                      # dies between two collectives
        t0 = time.monotonic()
        try:
            dist.all_reduce(torch.ones(4))
            say("no error")
        except RuntimeError as e:
            say(f"raised after {time.monotonic() - t0:.2f} s:", e)
        os._exit(0)
    """, n=3)
    res = job.finish(90)
    for r in (0, 2):
        text = res[r][1]
        assert "raised after" in text and "all_reduce" in text and "rank 1" in text, _show(res)
        secs = float(text.split("raised after ")[1].split(" s")[0])
        assert secs < 20, _show(res)


def test_init_timeout_is_the_execution_timeout():
    job = Job("""
        dist.init_process_group("pyhccl", timeout=datetime.timedelta(seconds=3))
        if rank == 1:
            time.sleep(60)                   # alive, but never joins the collective
        t0 = time.monotonic()
        try:
            dist.all_reduce(torch.ones(4))
            say("no error")
        except RuntimeError as e:
            say(f"raised after {time.monotonic() - t0:.2f} s:", e)
        os._exit(0)
    """)
    res = job.finish(60, upto=1)
    text = res[0][1]
    assert "raised after" in text and "all_reduce" in text, _show(res)
    secs = float(text.split("raised after ")[1].split(" s")[0])
    assert 2 < secs < 15, _show(res)


def test_destroy_and_abort_release_at_once():
    job = Job("""
        dist.init_process_group("pyhccl")
        g = dist.new_group([0, 1])
        dist.barrier()
        if rank == 1:
            time.sleep(60)                    # never joins the pending collectives
        w = dist.all_reduce(torch.ones(1 << 16), async_op=True)
        w2 = dist.all_reduce(torch.ones(8), group=g, async_op=True)
        t0 = time.monotonic()
        dist.destroy_process_group()
        say(f"destroyed after {time.monotonic() - t0:.3f} s")
        os._exit(0)
    """)
    res = job.finish(60, upto=1)
    text = res[0][1]
    assert "destroyed after" in text, _show(res)
    secs = float(text.split("destroyed after ")[1].split(" s")[0])
    assert secs < 2.0, _show(res)            # within a second, with room for a loaded machine


def test_ctrl_c_interrupts_a_blocked_collective():
    job = Job("""
        dist.init_process_group("pyhccl")
        dist.barrier()
        if rank == 1:
            time.sleep(60)
        say("waiting")
        try:
            dist.all_reduce(torch.ones(4))
        except KeyboardInterrupt:
            say("KeyboardInterrupt")
        os._exit(0)
    """)
    p0 = job.procs[0]
    deadline = time.monotonic() + 40
    seen = ""
    while "waiting" not in seen and time.monotonic() < deadline:
        seen += p0.stdout.readline()
    time.sleep(0.5)
    t0 = time.monotonic()
    p0.send_signal(signal.SIGINT)
    try:
        rest, _ = p0.communicate(timeout=10)
    except Exception:
        p0.kill()
        rest = "<no exit>"
    took = time.monotonic() - t0
    res = job.finish(30, upto=1)
    assert "KeyboardInterrupt" in seen + rest, _show(res) + seen + rest
    assert took < 5, f"took {took:.2f} s"


def test_init_methods_tcp_and_file(tmp_path):
    for method in ("tcp://127.0.0.1:{port}", f"file://{tmp_path}/store"):
        job = Job(f"""
            method = {method!r}.format(port=int(os.environ["MASTER_PORT"]))
            dist.init_process_group("pyhccl", init_method=method, rank=rank, world_size=size)
            t = torch.full((3,), float(rank + 1)); dist.all_reduce(t)
            say("sum", t.tolist())
            dist.destroy_process_group()
        """)
        res = job.finish(60)
        for rc, text in res:
            assert rc == 0 and "sum [3.0, 3.0, 3.0]" in text, _show(res)
