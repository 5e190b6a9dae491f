"""A tiny causal convolution over bytes (the broken bundle's model is fine; its training is not).

Each output position mixes the embeddings of the current byte and the three before it: the
input is padded on the left only, so position t never sees byte t+1.
"""

import torch
from torch import nn


class CausalConvNet(nn.Module):
    def __init__(self, vocab: int, channels: int = 48, reach: int = 4) -> None:
        super().__init__()
        self.reach = reach
        self.table = nn.Embedding(vocab, channels)
        self.conv = nn.Conv1d(channels, channels, kernel_size=reach)
        self.out = nn.Linear(channels, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.table(tokens).transpose(1, 2)
        h = nn.functional.pad(h, (self.reach - 1, 0))
        h = torch.tanh(self.conv(h)).transpose(1, 2)
        return self.out(h)


def build_model(ctx):
    return CausalConvNet(ctx.vocab_size)
