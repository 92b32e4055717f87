"""A small GPT-style decoder in numpy with a hand-written backward pass.

Token and position embeddings, then `n_layer` pre-norm blocks (causal
multi-head self-attention, then a GELU MLP, each added to the residual
stream), a final layer norm and an output layer over the vocabulary.
Parameters are a dict of float arrays; names are listed by `param_names`.
"""
from dataclasses import dataclass, asdict

import numpy as np


@dataclass(frozen=True)
class Config:
    """Shape of the model."""

    vocab: int = 96
    n_embd: int = 64
    n_head: int = 4
    n_layer: int = 4
    block: int = 64          # longest context, in tokens

    @property
    def head_dim(self):
        return self.n_embd // self.n_head

    def to_array(self):
        """Return the config as an int64 array (for checkpoints and broadcasts)."""
        return np.array(list(asdict(self).values()), np.int64)

    @classmethod
    def from_array(cls, values):
        """Build a Config from `to_array`'s output."""
        return cls(*(int(v) for v in values))


LAYER_PARAMS = ("ln1_g", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o",
                "ln2_g", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj")


def param_names(cfg):
    """Return every parameter name, in the order the backward pass yields gradients."""
    names = ["w_head", "lnf_g", "lnf_b"]
    for layer in reversed(range(cfg.n_layer)):
        names += [f"h{layer}.{p}" for p in reversed(LAYER_PARAMS)]
    return names + ["wpe", "wte"]


def init_params(cfg, seed=0, dtype=np.float64):
    """Return freshly initialised parameters (GPT-2 style scales)."""
    if cfg.n_embd % cfg.n_head:
        raise ValueError(f"init_params: n_embd={cfg.n_embd} is not a multiple of n_head={cfg.n_head}")
    rng = np.random.default_rng(seed)
    c = cfg.n_embd

    def normal(*shape, std=0.02):
        return (rng.standard_normal(shape) * std).astype(dtype)

    p = {"wte": normal(cfg.vocab, c), "wpe": normal(cfg.block, c),
         "lnf_g": np.ones(c, dtype), "lnf_b": np.zeros(c, dtype), "w_head": normal(c, cfg.vocab)}
    resid_std = 0.02 / np.sqrt(2 * cfg.n_layer)    # residual projections start small
    for layer in range(cfg.n_layer):
        h = f"h{layer}."
        p.update({h + "ln1_g": np.ones(c, dtype), h + "ln1_b": np.zeros(c, dtype),
                  h + "w_qkv": normal(c, 3 * c), h + "b_qkv": np.zeros(3 * c, dtype),
                  h + "w_o": normal(c, c, std=resid_std), h + "b_o": np.zeros(c, dtype),
                  h + "ln2_g": np.ones(c, dtype), h + "ln2_b": np.zeros(c, dtype),
                  h + "w_fc": normal(c, 4 * c), h + "b_fc": np.zeros(4 * c, dtype),
                  h + "w_proj": normal(4 * c, c, std=resid_std), h + "b_proj": np.zeros(c, dtype)})
    return p


# ---- building blocks (forward returns what its backward needs) --------------

LN_EPS = 1e-5
GELU_C = np.sqrt(2.0 / np.pi)


def layer_norm(x, g, b):
    """Return layer norm of x over its last axis, and the cache for the backward pass."""
    mu = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + LN_EPS)
    xhat = (x - mu) * rstd
    return xhat * g + b, (xhat, rstd, g)


def layer_norm_backward(dy, cache):
    """Return (dx, dg, db) of layer_norm."""
    xhat, rstd, g = cache
    dxhat = dy * g
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    axes = tuple(range(dy.ndim - 1))
    return dx, (dy * xhat).sum(axes), dy.sum(axes)


def gelu(u):
    """Return GELU(u) (tanh approximation) and the tanh term its gradient needs."""
    t = np.tanh(GELU_C * u * (1.0 + 0.044715 * u * u))
    return 0.5 * u * (1.0 + t), t


def gelu_grad(u, t):
    """Return dGELU/du at u, given gelu's tanh term t."""
    return 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * GELU_C * (1.0 + 3 * 0.044715 * u * u)


def split_heads(x, n_head):
    """Return (B, T, n_head*d) as (B, n_head, T, d)."""
    b, t, c = x.shape
    return x.reshape(b, t, n_head, c // n_head).transpose(0, 2, 1, 3)


def merge_heads(x):
    """Return (B, H, T, d) as (B, T, H*d)."""
    b, h, t, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, h * d)


def softmax(z, axis=-1):
    """Return softmax of z along `axis` (stable)."""
    e = np.exp(z - z.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def causal_attention(q, k, v, offset=0):
    """Return softmax(q k^T / sqrt(d), causal) v and the probabilities.

    q: (B, H, Tq, d) at positions offset..offset+Tq-1; k, v: (B, H, Tk, d) at 0..Tk-1.
    """
    tq, tk = q.shape[2], k.shape[2]
    scores = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(q.shape[-1])
    future = np.arange(tk)[None, :] > (offset + np.arange(tq))[:, None]
    scores = np.where(future, -np.inf, scores)
    p = softmax(scores)
    return p @ v, p


# ---- the model -------------------------------------------------------------

def forward_features(params, cfg, idx):
    """Return the final layer norm's output (B, T, n_embd) for token ids idx (B, T), and the cache.

    This is the decoder without its output layer: a text encoder.
    """
    b, t = idx.shape
    if t > cfg.block:
        raise ValueError(f"forward: sequence of {t} tokens exceeds the context of {cfg.block}")
    x = params["wte"][idx] + params["wpe"][:t]
    layers = []
    for layer in range(cfg.n_layer):
        p = {n: params[f"h{layer}.{n}"] for n in LAYER_PARAMS}
        h1, ln1 = layer_norm(x, p["ln1_g"], p["ln1_b"])
        q, k, v = np.split(h1 @ p["w_qkv"] + p["b_qkv"], 3, axis=-1)
        q, k, v = (split_heads(z, cfg.n_head) for z in (q, k, v))
        y, att = causal_attention(q, k, v)
        y = merge_heads(y)
        x = x + y @ p["w_o"] + p["b_o"]
        h2, ln2 = layer_norm(x, p["ln2_g"], p["ln2_b"])
        u = h2 @ p["w_fc"] + p["b_fc"]
        g, tanh_u = gelu(u)
        x = x + g @ p["w_proj"] + p["b_proj"]
        layers.append((p, ln1, h1, q, k, v, att, y, ln2, h2, u, tanh_u, g))
    hf, lnf = layer_norm(x, params["lnf_g"], params["lnf_b"])
    return hf, (idx, layers, lnf, hf)


def forward(params, cfg, idx):
    """Return logits (B, T, vocab) for token ids idx (B, T), and the cache for backward."""
    hf, cache = forward_features(params, cfg, idx)
    return hf @ params["w_head"], cache


def cross_entropy(logits, targets, scale=None):
    """Return (sum of token losses * scale, dlogits); scale defaults to 1/number of tokens."""
    n = targets.size
    scale = 1.0 / n if scale is None else scale
    z = logits.reshape(n, -1)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    rows = np.arange(n)
    tflat = targets.reshape(n)
    loss = -logp[rows, tflat].sum() * scale
    d = np.exp(logp)
    d[rows, tflat] -= 1.0
    return float(loss), (d * scale).reshape(logits.shape)


def backward(params, cfg, cache, dlogits):
    """Yield (name, gradient) for every parameter, from the output layer back to the embeddings.

    Gradients come out in `param_names(cfg)` order, each as soon as it is
    computed, so a caller can start communicating early ones while the rest
    of the backward pass runs.
    """
    hf = cache[3]
    yield "w_head", _flat(hf).T @ _flat(dlogits)
    yield from backward_features(params, cfg, cache, dlogits @ params["w_head"].T)


def _flat(a):
    return a.reshape(-1, a.shape[-1])


def backward_features(params, cfg, cache, dfeatures):
    """Yield (name, gradient) like backward(), from forward_features' output gradient (no w_head)."""
    idx, layers, lnf, hf = cache
    flat = _flat
    dx, dg, db = layer_norm_backward(dfeatures, lnf)
    yield "lnf_g", dg
    yield "lnf_b", db
    for layer in reversed(range(cfg.n_layer)):
        p, ln1, h1, q, k, v, att, y, ln2, h2, u, tanh_u, g = layers[layer]
        h = f"h{layer}."
        # MLP: x += gelu(h2 @ w_fc + b_fc) @ w_proj + b_proj
        yield h + "b_proj", dx.sum((0, 1))
        yield h + "w_proj", flat(g).T @ flat(dx)
        du = (dx @ p["w_proj"].T) * gelu_grad(u, tanh_u)
        yield h + "b_fc", du.sum((0, 1))
        yield h + "w_fc", flat(h2).T @ flat(du)
        dh, dg, db = layer_norm_backward(du @ p["w_fc"].T, ln2)
        yield h + "ln2_b", db
        yield h + "ln2_g", dg
        dx = dx + dh
        # attention: x += merge(softmax(q k^T) v) @ w_o + b_o
        yield h + "b_o", dx.sum((0, 1))
        yield h + "w_o", flat(y).T @ flat(dx)
        dy = split_heads(dx @ p["w_o"].T, cfg.n_head)
        dv = att.transpose(0, 1, 3, 2) @ dy
        datt = dy @ v.transpose(0, 1, 3, 2)
        dscores = att * (datt - (datt * att).sum(-1, keepdims=True)) / np.sqrt(cfg.head_dim)
        dq = dscores @ k
        dk = dscores.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([merge_heads(z) for z in (dq, dk, dv)], axis=-1)
        yield h + "b_qkv", dqkv.sum((0, 1))
        yield h + "w_qkv", flat(h1).T @ flat(dqkv)
        dh, dg, db = layer_norm_backward(dqkv @ p["w_qkv"].T, ln1)
        yield h + "ln1_b", db
        yield h + "ln1_g", dg
        dx = dx + dh
    yield "wpe", np.pad(dx.sum(0), ((0, cfg.block - idx.shape[1]), (0, 0)))
    onehot = np.zeros((idx.size, cfg.vocab), dx.dtype)
    onehot[np.arange(idx.size), idx.ravel()] = 1.0
    yield "wte", onehot.T @ flat(dx)


def loss_and_grads(params, cfg, idx, targets, scale=None):
    """Return (loss, dict of gradients) for one batch."""
    logits, cache = forward(params, cfg, idx)
    loss, dlogits = cross_entropy(logits, targets, scale)
    return loss, dict(backward(params, cfg, cache, dlogits))
