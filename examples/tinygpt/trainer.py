"""Training settings, the single-process reference run, checkpoints and flat parameter vectors."""
import os
from dataclasses import dataclass

import numpy as np

from .model import Config, cross_entropy, forward, init_params, loss_and_grads, param_names
from .optim import Adam


@dataclass
class Settings:
    """What a training run does; every rank of a job must use the same."""

    steps: int = 200
    batch: int = 16          # sequences per step, over all ranks
    seq: int = 64            # tokens per sequence
    val_batch: int = 16      # validation sequences, over all ranks
    lr: float = 3e-3
    seed: int = 0

    def train_batch(self, corpus, step):
        """Return the global batch (inputs, targets) of a step."""
        return corpus.batch("train", self.batch, self.seq, seed=1_000_003 * self.seed + step)

    def val_batch_data(self, corpus):
        """Return the fixed validation batch (inputs, targets)."""
        return corpus.batch("val", self.val_batch, self.seq, seed=999_983 + self.seed)


def evaluate(params, cfg, inputs, targets, scale=None):
    """Return the summed token loss * scale (default: the mean) of a batch, without gradients."""
    logits, _ = forward(params, cfg, inputs)
    return cross_entropy(logits, targets, scale)[0]


# Data-parallel gradients are rounded to multiples of GRID before they are
# summed. Sums of such numbers below 2**52 * GRID in magnitude are exact in
# float64, so the AllReduce result is the same whatever order its algorithm
# adds the ranks' contributions in, and one process can reproduce it bit for bit.
GRID = 2.0 ** -40
GRID_LIMIT = 2.0 ** 52 * GRID


def to_grid(g, ranks):
    """Return g rounded to multiples of GRID (exact arithmetic: GRID is a power of two).

    Raises:
        OverflowError: `ranks` such values could sum beyond the exactly representable range.
    """
    if ranks * float(np.max(np.abs(g), initial=0.0)) >= GRID_LIMIT:
        raise OverflowError(f"to_grid: a gradient of {np.max(np.abs(g)):.3g} summed over {ranks} "
                            f"ranks would exceed {GRID_LIMIT:g}, where float64 sums stop being exact")
    return np.round(g / GRID) * GRID


def shard_rows(rank, ranks, rows):
    """Return the slice of a global batch of `rows` rows that rank `rank` of `ranks` trains on."""
    return slice(rank * rows // ranks, (rank + 1) * rows // ranks)


def reference_run(cfg, corpus, settings, ranks=None, log=None):
    """Train in this process; return the parameters.

    ranks=None: each step's gradient is computed over the whole batch at once.
    ranks=N: the arithmetic of N data-parallel ranks, done one after the other
    in this process: each shard's gradient rounded with to_grid, then summed,
    which data-parallel training reproduces bit for bit.
    `log(step, loss)` is called after each step when given.
    """
    params = init_params(cfg, seed=settings.seed)
    opt = Adam(params, lr=settings.lr)
    scale = 1.0 / (settings.batch * settings.seq)
    for step in range(settings.steps):
        x, y = settings.train_batch(corpus, step)
        if ranks is None:
            loss, grads = loss_and_grads(params, cfg, x, y)
        else:
            loss, grads = 0.0, {}
            for r in range(ranks):
                rows = shard_rows(r, ranks, settings.batch)
                part, g = loss_and_grads(params, cfg, x[rows], y[rows], scale)
                loss += part
                for k, v in g.items():
                    grads[k] = grads[k] + to_grid(v, ranks) if k in grads else to_grid(v, ranks)
        opt.step(params, grads)
        if log:
            log(step, loss)
    return params


def flatten(params, cfg):
    """Return all parameters as one vector, in param_names order."""
    return np.concatenate([params[n].ravel() for n in param_names(cfg)])


def unflatten(vector, cfg, like=None):
    """Return the parameter dict that `flatten` made `vector` from."""
    shapes = {k: v.shape for k, v in (like or init_params(cfg)).items()}
    out, off = {}, 0
    for n in param_names(cfg):
        size = int(np.prod(shapes[n]))
        out[n] = vector[off:off + size].reshape(shapes[n]).copy()
        off += size
    if off != vector.size:
        raise ValueError(f"unflatten: vector has {vector.size} values, the model {off}")
    return out


def save_checkpoint(path, params, cfg, **meta):
    """Write parameters, config and scalar metadata to an .npz file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    np.savez(path, config=cfg.to_array(), **{f"meta_{k}": v for k, v in meta.items()}, **params)


def load_checkpoint(path):
    """Return (params, cfg, meta) from save_checkpoint's file."""
    with np.load(path) as z:
        cfg = Config.from_array(z["config"])
        params = {n: z[n] for n in param_names(cfg)}
        meta = {k[5:]: z[k].item() for k in z.files if k.startswith("meta_")}
    return params, cfg, meta
