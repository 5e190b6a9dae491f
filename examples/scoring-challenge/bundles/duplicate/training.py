"""Training loop (EXAMPLE DUPLICATE)."""

import torch
import torch.nn.functional as F


def train(ctx):
    net = ctx.build_model()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2, betas=(0.9, 0.98), weight_decay=0.01)
    net.train()
    for b in ctx.iter_train_batches(net):
        ids = b.tokens
        out = net(ids)
        l = F.cross_entropy(out[:, :-1].reshape(-1, ctx.vocab_size), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        l.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
