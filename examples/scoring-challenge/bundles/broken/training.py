"""EXAMPLE BROKEN BUNDLE: an off-by-one in the loss, the most common bug of a first bundle.

The targets are shifted by one position (position t predicts byte t+1) but the logits are not
trimmed to match, so cross_entropy sees 1024 predictions for 1016 targets and raises on the first
batch. The run ends with an error in the train stage and the service marks the submission failed,
quoting PyTorch's message.
"""

import torch
import torch.nn.functional as F


def train(ctx):
    model = ctx.build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.train()
    for batch in ctx.iter_train_batches(model):
        tokens = batch.tokens
        logits = model(tokens)
        # BUG: should be logits[:, :-1]; the shapes no longer match.
        loss = F.cross_entropy(logits.reshape(-1, ctx.vocab_size), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
