"""The examples' model (examples/tinygpt) and the multimodal encoders: gradients and generation.

Local to each rank (no collectives), so it runs alike at any rank count.
"""
import sys
import threading

import numpy as np
import pytest
from conftest import ROOT

EXAMPLES = str(ROOT / "examples")
sys.path.insert(0, EXAMPLES)

from tinygpt import infer  # noqa: E402
from tinygpt.model import (Config, backward, cross_entropy, forward, init_params,  # noqa: E402
                           loss_and_grads, param_names)
from tinygpt.trainer import GRID, to_grid  # noqa: E402

TINY = Config(vocab=12, n_embd=8, n_head=4, n_layer=2, block=8)


def perturbed_params(cfg, seed):
    """Return parameters with every entry moved off its initial value (no special zeros)."""
    rng = np.random.default_rng(seed)
    return {k: v + 0.3 * rng.standard_normal(v.shape) for k, v in init_params(cfg, seed).items()}


def finite_difference_errors(loss_of, params, grads, per_tensor=3, eps=1e-5, seed=0):
    """Return {name: worst relative error} of grads against central differences of loss_of()."""
    rng = np.random.default_rng(seed)
    worst = {}
    for name, p in params.items():
        for j in rng.choice(p.size, min(per_tensor, p.size), replace=False):
            old = p.flat[j]
            p.flat[j] = old + eps
            up = loss_of()
            p.flat[j] = old - eps
            down = loss_of()
            p.flat[j] = old
            numeric, analytic = (up - down) / (2 * eps), grads[name].flat[j]
            # the floor keeps exactly-zero gradients (key biases) from dividing noise by noise
            err = abs(numeric - analytic) / max(abs(numeric) + abs(analytic), 1e-3)
            worst[name] = max(worst.get(name, 0.0), err)
    return worst


def test_decoder_gradients_match_finite_differences():
    params = perturbed_params(TINY, 1)
    rng = np.random.default_rng(2)
    idx, targets = rng.integers(0, TINY.vocab, (2, 7)), rng.integers(0, TINY.vocab, (2, 7))
    _, grads = loss_and_grads(params, TINY, idx, targets)
    assert set(grads) == set(params)
    worst = finite_difference_errors(
        lambda: cross_entropy(forward(params, TINY, idx)[0], targets)[0], params, grads)
    bad = {k: v for k, v in worst.items() if v > 1e-6}
    assert not bad, f"gradients disagree with finite differences: {bad}"


def test_backward_yields_in_param_names_order():
    params = init_params(TINY)
    idx = np.zeros((1, 3), np.int64)
    logits, cache = forward(params, TINY, idx)
    names = [n for n, _ in backward(params, TINY, cache, np.ones_like(logits))]
    assert names == param_names(TINY)
    assert sorted(names) == sorted(params)


def test_cached_generation_matches_full_forward():
    params = perturbed_params(TINY, 3)
    rng = np.random.default_rng(4)
    seq = rng.integers(0, TINY.vocab, (3, TINY.block))
    full, _ = forward(params, TINY, seq)
    shard = infer.tp_shard(params, TINY, 0, 1)
    cache = infer.new_cache(shard, TINY, 3)
    got = [infer.forward_cached(shard, TINY, seq[:, :4], 0, cache)]
    got += [infer.forward_cached(shard, TINY, seq[:, i:i + 1], i, cache) for i in range(4, TINY.block)]
    np.testing.assert_allclose(np.stack(got, 1), full[:, 3:], rtol=1e-10, atol=1e-12)


def tensor_parallel_logits(params, cfg, size, tokens):
    """Run forward_cached on `size` shards in threads that sum and join like the collectives."""
    barrier, slots, results = threading.Barrier(size), [None] * size, [None] * size

    def exchange(rank, piece, combine):
        slots[rank] = piece
        barrier.wait()
        out = combine(list(slots))
        barrier.wait()
        return out

    def rank_main(rank):
        shard = infer.tp_shard(params, cfg, rank, size)
        cache = infer.new_cache(shard, cfg, len(tokens))
        results[rank] = infer.forward_cached(
            shard, cfg, tokens, 0, cache,
            reduce=lambda a: exchange(rank, a, lambda xs: sum(xs[1:], xs[0])),
            gather=lambda a: exchange(rank, a, lambda xs: np.concatenate(xs, -1)))

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


@pytest.mark.parametrize("size", [2, 4])
def test_tensor_parallel_shards_add_up_to_the_model(size):
    params = perturbed_params(TINY, 5)
    tokens = np.random.default_rng(6).integers(0, TINY.vocab, (2, 5))
    whole, _ = forward(params, TINY, tokens)
    for logits in tensor_parallel_logits(params, TINY, size, tokens):
        np.testing.assert_allclose(logits, whole[:, -1], rtol=1e-10, atol=1e-12)


def test_tensor_parallel_rejects_uneven_split():
    with pytest.raises(ValueError, match="n_head"):
        infer.tp_shard(init_params(TINY), TINY, 0, 3)


def test_sampling_depends_only_on_each_prompts_draws():
    params = perturbed_params(TINY, 7)
    prompts = np.random.default_rng(8).integers(0, TINY.vocab, (4, 3))
    u = infer.draws(range(4), 5)
    together, _ = infer.generate_single(params, TINY, prompts, u)
    apart = [infer.generate_single(params, TINY, prompts[i:i + 1], u[i:i + 1])[0][0] for i in range(4)]
    np.testing.assert_array_equal(together, np.stack(apart))


def test_grid_rounded_sums_are_exact_in_any_order():
    rng = np.random.default_rng(9)
    parts = [to_grid(rng.standard_normal(1000) * 10.0 ** rng.integers(-6, 1), 4) for _ in range(4)]
    orders = [((parts[0] + parts[1]) + parts[2]) + parts[3], (parts[3] + parts[1]) + (parts[2] + parts[0]),
              parts[2] + (parts[0] + (parts[3] + parts[1]))]
    for o in orders[1:]:
        assert np.array_equal(o, orders[0])
    assert np.all(np.round(orders[0] / GRID) * GRID == orders[0])
    with pytest.raises(OverflowError, match="to_grid"):
        to_grid(np.array([2.0 ** 11]), 4)


def test_multimodal_gradients_match_finite_differences():
    import multimodal
    rng = np.random.default_rng(10)
    params = {k: v + 0.1 * rng.standard_normal(v.shape) for k, v in multimodal.init_model(1).items()}
    x, labels = rng.random((6, 64)), np.array([3, 1, 3, 7, 0, 1])
    _, grads = multimodal.reference_step(params, x, labels)
    assert set(grads) == set(params)
    worst = finite_difference_errors(lambda: multimodal.reference_step(params, x, labels)[0],
                                     params, grads, per_tensor=2)
    bad = {k: v for k, v in worst.items() if v > 1e-6}
    assert not bad, f"gradients disagree with finite differences: {bad}"
