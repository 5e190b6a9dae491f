"""One pass of AdamW over the harness's batches (each was already scored before we see it)."""

import torch
import torch.nn.functional as F


def train(ctx):
    model = ctx.build_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.98), weight_decay=0.01)
    model.train()
    for batch in ctx.iter_train_batches(model):
        tokens = batch.tokens
        logits = model(tokens)
        # Position t predicts token t+1: the last position has no target.
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, ctx.vocab_size), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
