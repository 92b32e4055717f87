"""Generation with a key/value cache, on the whole model or on one tensor-parallel shard.

A shard is the part of the parameters one rank holds in Megatron-style tensor
parallelism: its heads' columns of the query/key/value projection and the
matching rows of the attention output projection, a column slice of the MLP's
first layer and the matching rows of its second, a slice of the embedding
width and a slice of the vocabulary of the output layer. Layer norms and the
biases added after a row-parallel product are replicated. `tp_shard(params,
cfg, 0, 1)` is the whole model, so single-process generation runs the same
code with no communication.
"""
import numpy as np

from .model import LAYER_PARAMS, causal_attention, gelu, layer_norm, merge_heads, softmax, split_heads


def tp_shard(params, cfg, rank, size):
    """Return the parameters rank `rank` of `size` holds (a dict; "n_head" = its head count).

    Raises:
        ValueError: heads, embedding width, MLP width or vocabulary do not split evenly.
    """
    for what, n in (("n_head", cfg.n_head), ("n_embd", cfg.n_embd), ("vocab", cfg.vocab)):
        if n % size:
            raise ValueError(f"tp_shard: {what}={n} does not split across {size} ranks")
    c, hd = cfg.n_embd, cfg.head_dim
    heads = slice(rank * c // size, (rank + 1) * c // size)          # this rank's head columns
    width = slice(rank * c // size, (rank + 1) * c // size)          # embedding columns
    hidden = slice(rank * 4 * c // size, (rank + 1) * 4 * c // size)  # MLP columns
    vocab = slice(rank * cfg.vocab // size, (rank + 1) * cfg.vocab // size)
    qkv = np.r_[heads, c + heads.start:c + heads.stop, 2 * c + heads.start:2 * c + heads.stop]
    s = {"n_head": cfg.n_head // size, "head_dim": hd,
         "wte": params["wte"][:, width], "wpe": params["wpe"][:, width],
         "lnf_g": params["lnf_g"], "lnf_b": params["lnf_b"], "w_head": params["w_head"][:, vocab]}
    for layer in range(cfg.n_layer):
        h = f"h{layer}."
        p = {n: params[h + n] for n in LAYER_PARAMS}
        s.update({h + "ln1_g": p["ln1_g"], h + "ln1_b": p["ln1_b"],
                  h + "w_qkv": p["w_qkv"][:, qkv], h + "b_qkv": p["b_qkv"][qkv],
                  h + "w_o": p["w_o"][heads], h + "b_o": p["b_o"],
                  h + "ln2_g": p["ln2_g"], h + "ln2_b": p["ln2_b"],
                  h + "w_fc": p["w_fc"][:, hidden], h + "b_fc": p["b_fc"][hidden],
                  h + "w_proj": p["w_proj"][hidden], h + "b_proj": p["b_proj"]})
    return {k: np.ascontiguousarray(v) if isinstance(v, np.ndarray) else v for k, v in s.items()}


def new_cache(shard, cfg, rows, layers=None):
    """Return empty key/value caches for `rows` sequences, one per layer (or per layer in `layers`)."""
    shape = (rows, shard["n_head"], cfg.block, shard["head_dim"])
    dtype = shard["wte"].dtype
    return {layer: (np.zeros(shape, dtype), np.zeros(shape, dtype))
            for layer in (range(cfg.n_layer) if layers is None else layers)}


def embed(shard, tokens, pos):
    """Return this shard's columns of the embeddings of tokens (B, T) at positions pos.."""
    return shard["wte"][tokens] + shard["wpe"][pos:pos + tokens.shape[1]]


def block(shard, layer, x, cache, pos, reduce=None):
    """Run block `layer` on x (B, T, C) at positions pos.., updating its cache; return the new x.

    `reduce` sums the shards' partial products across ranks (None: the shard is the whole model).
    """
    p = {n: shard[f"h{layer}.{n}"] for n in LAYER_PARAMS}
    reduce = reduce or (lambda a: a)
    t = x.shape[1]
    h, _ = layer_norm(x, p["ln1_g"], p["ln1_b"])
    q, k, v = (split_heads(z, shard["n_head"]) for z in np.split(h @ p["w_qkv"] + p["b_qkv"], 3, -1))
    keys, values = cache
    keys[:, :, pos:pos + t] = k
    values[:, :, pos:pos + t] = v
    y, _ = causal_attention(q, keys[:, :, :pos + t], values[:, :, :pos + t], offset=pos)
    x = x + reduce(merge_heads(y) @ p["w_o"]) + p["b_o"]        # row-parallel: partial sums
    h, _ = layer_norm(x, p["ln2_g"], p["ln2_b"])
    g, _ = gelu(h @ p["w_fc"] + p["b_fc"])                      # column-parallel: no communication
    return x + reduce(g @ p["w_proj"]) + p["b_proj"]


def head(shard, x):
    """Return this shard's slice of the logits of x's last position (B, vocab/size)."""
    h, _ = layer_norm(x[:, -1], shard["lnf_g"], shard["lnf_b"])
    return h @ shard["w_head"]


def forward_cached(shard, cfg, tokens, pos, cache, reduce=None, gather=None):
    """Run tokens (B, T) at positions pos.. through the model; return the last position's logits.

    `gather` concatenates the shards' slices along the last axis (None: whole model).
    """
    gather = gather or (lambda a: a)
    x = gather(embed(shard, tokens, pos))
    for layer in range(cfg.n_layer):
        x = block(shard, layer, x, cache[layer], pos, reduce)
    return gather(head(shard, x))


def draws(prompt_ids, n_new, seed=1234):
    """Return the uniform numbers sampling uses, (len(prompt_ids), n_new), one stream per prompt.

    They depend only on each prompt's id, so a prompt generates the same text on any rank.
    """
    return np.stack([np.random.default_rng([seed, int(i)]).random(n_new) for i in prompt_ids])


def sample(logits, u, temperature=0.8):
    """Return one token per row of logits (B, V), drawn with the uniform numbers u (B,)."""
    cdf = np.cumsum(softmax(logits / temperature), -1)
    return np.minimum((cdf < (u * cdf[:, -1])[:, None]).sum(-1), logits.shape[-1] - 1)


def generate(run, prompts, uniforms, temperature=0.8, stop=None):
    """Return (tokens (B, n_new), lengths (B,)) generated after prompts (B, P).

    run(tokens, pos) returns the logits after tokens at positions pos... With
    `stop`, a row ends after its first `stop` token (its length counts it) and
    generation ends once every row has; without, every row gets n_new tokens.
    """
    n_new = uniforms.shape[1]
    out = np.zeros((len(prompts), n_new), np.int64)
    lengths = np.full(len(prompts), n_new, np.int64)
    logits = run(prompts, 0)
    for i in range(n_new):
        out[:, i] = sample(logits, uniforms[:, i], temperature)
        if stop is not None:
            ended = (out[:, i] == stop) & (lengths == n_new)
            lengths[ended] = i + 1
            if np.all(lengths <= i + 1):
                break
        if i + 1 < n_new:
            logits = run(out[:, i:i + 1], prompts.shape[1] + i)
    return out, lengths


def generate_single(params, cfg, prompts, uniforms, temperature=0.8, stop=None):
    """Return generate()'s result for the whole model in this process (the reference)."""
    shard = tp_shard(params, cfg, 0, 1)
    cache = new_cache(shard, cfg, len(prompts))
    check_length(cfg, prompts.shape[1], uniforms.shape[1])
    return generate(lambda t, pos: forward_cached(shard, cfg, t, pos, cache), prompts, uniforms,
                    temperature, stop)


def check_length(cfg, prompt_len, n_new):
    """Raise ValueError if a prompt and its new tokens do not fit the context."""
    if prompt_len < 1 or prompt_len + n_new > cfg.block:
        raise ValueError(f"prompt of {prompt_len} tokens plus {n_new} new ones must fit "
                         f"the context of {cfg.block}")
