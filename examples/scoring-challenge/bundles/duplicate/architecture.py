"""My byte-level language model (EXAMPLE DUPLICATE: the good bundle, renamed and reformatted)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedAttention(nn.Module):

    def __init__(self, dim: int, n_heads: int, context: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.to_qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        causal = torch.triu(torch.ones(context, context, dtype=torch.bool), diagonal=1)
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        b, n, d = h.shape
        query, key, value = self.to_qkv(h).split(d, dim=-1)
        split = (b, n, self.n_heads, d // self.n_heads)
        query, key, value = (z.view(split).transpose(1, 2) for z in (query, key, value))
        att = (query @ key.transpose(-2, -1)) / math.sqrt(d // self.n_heads)
        att = att.masked_fill(self.causal[:n, :n], float("-inf"))
        y = F.softmax(att, dim=-1) @ value
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class Layer(nn.Module):

    def __init__(self, dim: int, n_heads: int, context: int) -> None:
        super().__init__()
        self.ln_a = nn.LayerNorm(dim)
        self.attention = MaskedAttention(dim, n_heads, context)
        self.ln_b = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = h + self.attention(self.ln_a(h))
        return h + self.ffn(self.ln_b(h))


class TinyLM(nn.Module):

    def __init__(self, n_vocab: int, context: int, dim: int = 64, n_heads: int = 4, n_layers: int = 1) -> None:
        super().__init__()
        self.tok = nn.Embedding(n_vocab, dim)
        self.pos = nn.Parameter(torch.zeros(context, dim))
        self.layers = nn.ModuleList(Layer(dim, n_heads, context) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, n_vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.tok(ids) + self.pos[: ids.shape[1]]
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.ln_f(h))


def build_model(ctx):
    return TinyLM(ctx.vocab_size, ctx.sequence_length)
