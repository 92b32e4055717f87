"""CLIP-style contrastive training on handwritten digits and their names, data-parallel.

An image encoder (an MLP on scikit-learn's bundled 8x8 digits) and a text
encoder (a small tinygpt decoder reading the label word, "zero" ... "nine",
its last character's features projected) map both modalities into one
space. The loss is CLIP's symmetric cross-entropy over the similarities of
every image with every text in the global batch; a pair counts as matching
when the labels are equal.

Each rank encodes its shard of the batch, then:
  - AllGather collects both modalities' embeddings from all ranks (one call,
    images and texts packed together), so each rank scores its rows against
    the whole global batch;
  - ReduceScatter carries the gradients back through the gather: each rank's
    loss has gradients for every rank's embeddings, and ReduceScatter sums
    them and hands each rank those of its own rows (one call, both modalities);
  - AllReduce sums the encoders' parameter gradients (one call, all of them).

Every step, rank 0 also computes the loss and gradient of the same batch in
one process, the plain way, and the distributed gradient must match it to a
relative 1e-9 (the ranks add in a different order, so not bit for bit).
The program then checks that all ranks hold bit-identical parameters and
reports the label-word retrieval accuracy on held-out digits: each unseen
image is labelled with the most similar of the ten label words, with no
classifier trained. The words themselves are all trained on (this is not
zero-shot: there is no unseen class), only the images are new.

Run:  mpirun -np 4 python examples/multimodal.py [--steps N]
"""
import argparse
import os
import sys
from typing import Callable, Tuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # ranks share the cores: one BLAS thread each
import numpy as np  # noqa: E402

import pyhccl  # noqa: E402
from tinygpt.data import encode  # noqa: E402
from tinygpt.dist import all_agree, from_root, log0, on_device, start  # noqa: E402
from tinygpt.model import (Array, Config, Ids, Params, backward_features, forward_features, gelu,  # noqa: E402
                           gelu_grad, init_params)
from tinygpt.optim import Adam  # noqa: E402

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TEXT_CFG = Config(vocab=96, n_embd=32, n_head=2, n_layer=2, block=8)
EMBED, HIDDEN, TAU = 32, 128, 0.1          # joint space, image MLP width, fixed temperature

Backward = Callable[[Array], Params]       # an encoder's gradients from those of its embeddings


def load_digits_split(held_out: float = 0.2, seed: int = 0) -> Tuple[Array, Ids, Array, Ids]:
    """Return (train images, train labels, test images, test labels); pixels scaled to [0, 1]."""
    # scikit-learn ships no type hints (no py.typed marker)
    from sklearn.datasets import load_digits  # type: ignore[import-untyped]
    digits = load_digits()
    order = np.random.default_rng(seed).permutation(len(digits.target))
    x, y = digits.data[order] / 16.0, digits.target[order]
    cut = int(len(y) * (1 - held_out))
    return x[:cut], y[:cut], x[cut:], y[cut:]


WORD_IDS = np.stack([np.pad(encode(w), (0, 5 - len(w)), constant_values=int(encode(" ")[0]))
                     for w in WORDS])
WORD_LAST = np.array([len(w) - 1 for w in WORDS])


def init_model(seed: int = 0) -> Params:
    """Return the parameters of both encoders (image: img.*, text: txt.* and the projection)."""
    rng = np.random.default_rng(seed)
    text = init_params(TEXT_CFG, seed=seed + 1)
    del text["w_head"]
    p = {"img.w1": rng.standard_normal((64, HIDDEN)) / 8.0, "img.b1": np.zeros(HIDDEN),
         "img.w2": rng.standard_normal((HIDDEN, EMBED)) / np.sqrt(HIDDEN), "img.b2": np.zeros(EMBED),
         "txt.proj": rng.standard_normal((TEXT_CFG.n_embd, EMBED)) / np.sqrt(TEXT_CFG.n_embd)}
    p.update({"txt." + k: v for k, v in text.items()})
    return p


def normalize(u: Array) -> Tuple[Array, Array]:
    """Return u / |u| per row, and what the backward pass needs."""
    norm = np.sqrt((u * u).sum(-1, keepdims=True))
    return u / norm, norm


def normalize_backward(de: Array, e: Array, norm: Array) -> Array:
    """Return du for e = u / |u|."""
    du: Array = (de - e * (de * e).sum(-1, keepdims=True)) / norm
    return du


def encode_images(p: Params, x: Array) -> Tuple[Array, Backward]:
    """Return unit embeddings (N, EMBED) of images x (N, 64), and a backward function."""
    u = x @ p["img.w1"] + p["img.b1"]
    h, t = gelu(u)
    e, norm = normalize(h @ p["img.w2"] + p["img.b2"])

    def backward(de: Array) -> Params:
        dz = normalize_backward(de, e, norm)
        du = (dz @ p["img.w2"].T) * gelu_grad(u, t)
        return {"img.w2": h.T @ dz, "img.b2": dz.sum(0), "img.w1": x.T @ du, "img.b1": du.sum(0)}
    return e, backward


def encode_words(p: Params, labels: Ids) -> Tuple[Array, Backward]:
    """Return unit embeddings (N, EMBED) of the label words, and a backward function."""
    text = {k[4:]: v for k, v in p.items() if k.startswith("txt.") and k != "txt.proj"}
    feats, cache = forward_features(text, TEXT_CFG, WORD_IDS[labels])
    rows = np.arange(len(labels))
    f = feats[rows, WORD_LAST[labels]]                    # features of each word's last letter
    e, norm = normalize(f @ p["txt.proj"])

    def backward(de: Array) -> Params:
        dz = normalize_backward(de, e, norm)
        dfeats = np.zeros_like(feats)
        dfeats[rows, WORD_LAST[labels]] = dz @ p["txt.proj"].T
        grads = {"txt." + k: g for k, g in backward_features(text, TEXT_CFG, cache, dfeats)}
        grads["txt.proj"] = f.T @ dz
        return grads
    return e, backward


def contrastive(rows: Array, rows_labels: Ids, others: Array, labels: Ids,
                total: int) -> Tuple[float, Array, Array]:
    """Return (loss, d rows, d others) of cross-entropy from `rows` to all of `others`.

    Targets spread evenly over the columns with the row's label; the loss is
    summed over the rows and divided by `total` (the global batch size).
    """
    logits = rows @ others.T / TAU
    targets = (rows_labels[:, None] == labels[None, :]).astype(float)
    targets /= targets.sum(1, keepdims=True)
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    loss = -(targets * logp).sum() / total
    dlogits = (np.exp(logp) - targets) / (total * TAU)
    return loss, dlogits @ others, dlogits.T @ rows


def halves(labels: Ids, mine: slice, img_all: Array,
           txt_all: Array) -> Tuple[float, Array, Array, Array, Array]:
    """Return (loss, d own images, d own texts, d all images, d all texts) for rows `mine`.

    Half the loss ranks texts for each image, half images for each text.
    """
    total = len(labels)
    li, d_img, d_txt_all = contrastive(img_all[mine], labels[mine], txt_all, labels, total)
    lt, d_txt, d_img_all = contrastive(txt_all[mine], labels[mine], img_all, labels, total)
    return (li + lt) / 2, d_img / 2, d_txt / 2, d_img_all / 2, d_txt_all / 2


def reference_step(p: Params, x: Array, labels: Ids) -> Tuple[float, Params]:
    """Return (loss, gradients) of the whole batch computed in one process."""
    img, img_back = encode_images(p, x)
    txt, txt_back = encode_words(p, labels)
    loss, d_img, d_txt, d_img_all, d_txt_all = halves(labels, slice(None), img, txt)
    return loss, {**img_back(d_img + d_img_all), **txt_back(d_txt + d_txt_all)}


def distributed_step(comm: pyhccl.Comm, stream: pyhccl.Stream, p: Params, x: Array, labels: Ids,
                     rank: int, size: int) -> Tuple[float, Params]:
    """Return (global loss, summed gradients) with AllGather, ReduceScatter and AllReduce."""
    b = len(labels) // size
    mine = slice(rank * b, (rank + 1) * b)
    img, img_back = encode_images(p, x[mine])
    txt, txt_back = encode_words(p, labels[mine])
    # AllGather both modalities' embeddings: (size, 2, b, EMBED) on every rank.
    both = on_device(stream, np.zeros((size, 2, b, EMBED)), lambda d: comm.all_gather(
        pyhccl.asarray(np.stack([img, txt]), stream=stream), d, stream=stream))
    img_all, txt_all = both[:, 0].reshape(-1, EMBED), both[:, 1].reshape(-1, EMBED)
    loss, d_img, d_txt, d_img_all, d_txt_all = halves(labels, mine, img_all, txt_all)
    # ReduceScatter the gradients of the gathered embeddings back to their owners.
    blocks = np.stack([d_img_all.reshape(size, b, EMBED), d_txt_all.reshape(size, b, EMBED)], axis=1)
    back = on_device(stream, np.zeros((2, b, EMBED)), lambda d: comm.reduce_scatter(
        pyhccl.asarray(blocks, stream=stream), d, op=pyhccl.SUM, stream=stream))
    grads = {**img_back(d_img + back[0]), **txt_back(d_txt + back[1])}
    # AllReduce the parameter gradients (one flat vector) and the loss.
    names = sorted(grads)
    flat = np.concatenate([grads[n].ravel() for n in names] + [[loss]])
    flat = on_device(stream, flat, lambda d: comm.all_reduce(d, op=pyhccl.SUM, stream=stream))
    out, off = {}, 0
    for n in names:
        out[n] = flat[off:off + grads[n].size].reshape(grads[n].shape)
        off += grads[n].size
    return float(flat[-1]), out


def retrieval_accuracy(p: Params, x: Array, y: Ids) -> float:
    """Return the fraction of images whose most similar label word is their own (all ten trained on)."""
    img, _ = encode_images(p, x)
    words, _ = encode_words(p, np.arange(10))
    return float(np.mean(np.argmax(img @ words.T, 1) == y))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=150, help="optimiser steps (default 150)")
    ap.add_argument("--batch", type=int, default=64, help="image-text pairs per step over all ranks")
    args = ap.parse_args()

    comm, stream = start()
    rank, size = comm.rank, comm.size
    if args.batch % size or args.steps < 1:
        log0(comm, f"multimodal: --batch ({args.batch}) must be a multiple of the {size} ranks")
        return 2
    x_train, y_train, x_test, y_test = load_digits_split()
    log0(comm, f"{size} rank(s); {len(y_train)} training and {len(y_test)} held-out digits; "
         f"batch {args.batch} ({args.batch // size} per rank)")
    p = init_model()
    opt = Adam(p, lr=3e-3)
    worst = 0.0
    for step in range(args.steps):
        pick = np.random.default_rng([7, step]).choice(len(y_train), args.batch, replace=False)
        x, labels = x_train[pick], y_train[pick]
        loss, grads = distributed_step(comm, stream, p, x, labels, rank, size)
        if rank == 0:
            ref_loss, ref = reference_step(p, x, labels)
            err = max(np.max(np.abs(grads[n] - ref[n])) / (np.max(np.abs(ref[n])) + 1e-300) for n in ref)
            worst = max(worst, float(err), abs(loss - ref_loss) / abs(ref_loss))
        opt.step(p, grads)
        if step % 10 == 0 or step == args.steps - 1:
            log0(comm, f"step {step + 1:4d}/{args.steps} | contrastive loss {loss:.3f}")

    worst = from_root(comm, stream, worst)
    flat = np.concatenate([p[n].ravel() for n in sorted(p)])
    everyone = on_device(stream, np.zeros((size, flat.size)), lambda d: comm.all_gather(
        pyhccl.asarray(flat, stream=stream), d, stream=stream))
    identical = all_agree(comm, stream, all(np.array_equal(r.view(np.int64), flat.view(np.int64))
                                            for r in everyone))
    accuracy = retrieval_accuracy(p, x_test, y_test)
    log0(comm, f"label-word retrieval accuracy on {len(y_test)} held-out digits: {100 * accuracy:.1f}% "
         "(each labelled with its most similar word; chance 10%)")
    log0(comm, f"largest relative difference from the single-process gradient: {worst:.1e}; "
         f"parameters bit-identical on all ranks: {identical}")
    ok = identical and worst <= 1e-9 and accuracy > 0.5
    log0(comm, "multimodal training verified" if ok else "MULTIMODAL CHECK FAILED")
    stream.destroy()
    comm.destroy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
