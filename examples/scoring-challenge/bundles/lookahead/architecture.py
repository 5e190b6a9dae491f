"""EXAMPLE CHEAT (look-ahead): a byte-window model whose window reaches one byte too far.

Position t should predict byte t+1 from bytes <= t; this model mixes the embeddings of bytes
t-1, t AND t+1, so it is handed the answer and its prequential loss collapses after a few
steps. The harness's causality probe changes later bytes, sees the logits at earlier positions
move, and the service rejects the bundle ("the model looks ahead").
"""

import torch
from torch import nn


class WindowMixer(nn.Module):
    def __init__(self, vocab: int, dim: int = 96) -> None:
        super().__init__()
        self.lookup = nn.Embedding(vocab, dim)
        self.mix = nn.Sequential(nn.Linear(3 * dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, vocab))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        here = self.lookup(tokens)
        before = torch.roll(here, shifts=1, dims=1)
        after = torch.roll(here, shifts=-1, dims=1)  # byte t+1 at position t: the cheat
        return self.mix(torch.cat([before, here, after], dim=-1))


def build_model(ctx):
    return WindowMixer(ctx.vocab_size)
