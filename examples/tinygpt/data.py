"""Character-level text from the running interpreter's standard library.

The corpus is the source of the standard library's top-level modules (code,
comments and docstrings), read in sorted order from the interpreter's own
library folder, so every rank of a job reads the same text. The vocabulary
is newline plus printable ASCII (96 symbols); other characters are dropped,
tabs become spaces. The last tenth of the text is the validation split.
"""
import glob
import os
import sysconfig

import numpy as np

VOCAB = "\n" + "".join(chr(c) for c in range(32, 127))
_INDEX = np.full(256, -1, np.int64)
_INDEX[np.frombuffer(VOCAB.encode("ascii"), np.uint8)] = np.arange(len(VOCAB))


def encode(text):
    """Return the token ids (int64) of `text`; characters outside the vocabulary are dropped."""
    raw = np.frombuffer(text.replace("\t", "    ").encode("ascii", "ignore"), np.uint8)
    ids = _INDEX[raw]
    return ids[ids >= 0]


def decode(ids):
    """Return the text of token ids."""
    return "".join(VOCAB[int(i)] for i in ids)


def stdlib_text(max_chars=1_500_000):
    """Return the concatenated source of the standard library's top-level modules.

    Raises:
        FileNotFoundError: the interpreter has no readable standard library folder.
    """
    folder = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(folder, "*.py")))
    if not files:
        raise FileNotFoundError(f"stdlib_text: no *.py files in {folder}")
    parts, total = [], 0
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            parts.append(f.read())
        total += len(parts[-1])
        if total >= max_chars:
            break
    return "\n".join(parts)[:max_chars]


class Corpus:
    """Token ids split into training and validation parts, with batch sampling."""

    def __init__(self, text=None, val_fraction=0.1):
        ids = encode(stdlib_text() if text is None else text)
        cut = int(len(ids) * (1.0 - val_fraction))
        self.train, self.val = ids[:cut], ids[cut:]

    def batch(self, split, rows, length, seed):
        """Return (inputs, targets), each (rows, length), from random windows of `split`.

        The windows depend only on `seed`, so every rank draws the same global batch.
        """
        ids = self.train if split == "train" else self.val
        if len(ids) <= length + 1:
            raise ValueError(f"Corpus.batch: {split} split has {len(ids)} tokens, "
                             f"too few for windows of {length}")
        starts = np.random.default_rng(seed).integers(0, len(ids) - length - 1, rows)
        windows = np.stack([ids[s:s + length + 1] for s in starts])
        return windows[:, :-1], windows[:, 1:]

    def prompts(self, count, length, seed=7):
        """Return `count` prompts of `length` tokens, each starting a line of the validation text."""
        starts = np.flatnonzero(self.val[:-length - 1] == 0) + 1       # id 0 is newline
        starts = starts[self.val[starts] != 0]                           # skip empty lines
        if len(starts) < count:
            raise ValueError(f"Corpus.prompts: only {len(starts)} lines to start {count} prompts at")
        pick = np.sort(np.random.default_rng(seed).choice(starts, count, replace=False))
        return np.stack([self.val[s:s + length] for s in pick])
