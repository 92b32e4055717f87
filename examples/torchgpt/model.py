"""A small GPT in torch: token and position embeddings, pre-norm blocks of
causal multi-head self-attention and a GELU MLP, a final layer norm and an
output layer tied to the token embedding.

The query, key and value projections are separate Linear layers and the
attention takes its head count from the width of what they return, so
tensor parallelism can split them by heads (ColwiseParallel) and the output
projection by rows (RowwiseParallel) without changing this code.
"""
from dataclasses import asdict, dataclass
from typing import Any, Dict

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class GPTConfig:
    vocab: int = 96
    context: int = 64
    width: int = 256
    layers: int = 4
    heads: int = 4

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


class Attention(nn.Module):  # type: ignore[misc, unused-ignore]
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        if cfg.width % cfg.heads:
            raise ValueError(f"GPTConfig: width {cfg.width} does not split into {cfg.heads} heads")
        self.head_dim = cfg.width // cfg.heads
        self.q = nn.Linear(cfg.width, cfg.width)
        self.k = nn.Linear(cfg.width, cfg.width)
        self.v = nn.Linear(cfg.width, cfg.width)
        self.out = nn.Linear(cfg.width, cfg.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape

        def heads(y: torch.Tensor) -> torch.Tensor:
            # y's width is this rank's share of the heads under tensor parallelism
            return y.view(b, t, -1, self.head_dim).transpose(1, 2)

        y = F.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)), heads(self.v(x)),
                                           is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):  # type: ignore[misc, unused-ignore]
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.up = nn.Linear(cfg.width, 4 * cfg.width)
        self.down = nn.Linear(4 * cfg.width, cfg.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):  # type: ignore[misc, unused-ignore]
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.width)
        self.attn = Attention(cfg)
        self.norm2 = nn.LayerNorm(cfg.width)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):  # type: ignore[misc, unused-ignore]
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.width)
        self.position = nn.Embedding(cfg.context, cfg.width)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.width)
        self.apply(self._init)
        for block in self.blocks:       # GPT-2: residual projections scaled by depth
            for proj in (block.attn.out, block.mlp.down):
                nn.init.normal_(proj.weight, std=0.02 / (2 * cfg.layers) ** 0.5)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits (batch, time, vocab) of token ids (batch, time)."""
        t = ids.shape[1]
        if t > self.cfg.context:
            raise ValueError(f"GPT.forward: {t} tokens exceed the context of {self.cfg.context}")
        x = self.embed(ids) + self.position(torch.arange(t, device=ids.device))
        for block in self.blocks:
            x = block(x)
        return F.linear(self.norm(x), self.embed.weight)     # output tied to the embedding


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats per token) of logits (batch, time, vocab) against targets (batch, time)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
