// The memorisation attack (issue 31, finding 1) through the service, in the real image: a bundle
// that carries bytes it expects to be scored on and predicts each row from its memory, using only
// earlier bytes (causal: the twin check cannot object), after answering the step-0 probe with an
// honest random-init model. It scored 0.94-0.9999 when the stream was the pool's first bytes.
// Now it earns no more than the honest model it carries (bundles/good), within the sampling
// tolerance of the memorisation gap, whether it carries the pool's first bytes (what a miner
// could know in advance) or the epoch's stream itself (leaked from an earlier run of the epoch):
// the holdout, which never leaves the scorer, decides.
import { readFileSync } from "node:fs";
import { createMinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCorpus } from "../src/corpus.js";
import { memorisationTolerance } from "../src/score.js";
import { epochSeed, scoredBytes } from "../src/scored-bytes.js";
import {
  bundleZip,
  evalImageReady,
  type ScoringTest,
  startScoring,
  submitBody,
} from "./scoring-test-kit.js";

const ready = evalImageReady();
const backend = (await testBackends())[0]!;
const SECRET = "5e".repeat(32);
const BUDGET = { TOKEN_BUDGET: "16384", HOLDOUT_BYTES: "16384" };
// The most a bundle gains over the model it carries: the sampling tolerance of the two samples
// (129 rows each here; 0.24 bits per byte at the production defaults).
const TOLERANCE = memorisationTolerance(16384 / 127, 16384 / 127);

const goodArchitecture = readFileSync(
  new URL("../bundles/good/architecture.py", import.meta.url),
  "utf8",
);
const goodTraining = readFileSync(new URL("../bundles/good/training.py", import.meta.url), "utf8");

/** bundles/good plus a memory of `memory` and a gate that train(ctx) opens after the probe. */
function memoriser(memory: Buffer): Buffer {
  const literal = JSON.stringify([...memory]);
  const architecture = `${goodArchitecture.replace(/\ndef build_model\(ctx\):[\s\S]*$/, "\n")}
import torch.nn.functional as F

MEMORY = ${literal}
K = 4  # two keys of K bytes: the last 2K bytes before a position


class Memoriser(nn.Module):
    """good's transformer, and a recall: the byte that followed the last 2K bytes in MEMORY."""

    def __init__(self, vocab, max_len):
        super().__init__()
        self.honest = ByteTransformer(vocab, max_len)
        self.gate = nn.Parameter(torch.zeros(1))  # closed as built: the probe sees the honest model
        memory = torch.tensor(MEMORY, dtype=torch.float64)
        weights = 256.0 ** torch.arange(K - 1, -1, -1, dtype=torch.float64)
        n = len(MEMORY) - 2 * K
        near = sum(memory[K + j : K + j + n] * weights[j] for j in range(K))
        far = sum(memory[j : j + n] * weights[j] for j in range(K))
        self.register_buffer("near", near.view(1, 1, -1))
        self.register_buffer("far", far.view(1, 1, -1))
        self.register_buffer("after", torch.tensor(MEMORY[2 * K :], dtype=torch.long))
        self.register_buffer("weights", weights.view(1, 1, K))

    def keys(self, tokens, shift):
        window = F.pad(tokens.double().unsqueeze(1), (K - 1 + shift, 0), value=-1.0)
        return F.conv1d(window[:, :, : tokens.shape[1] + K - 1], self.weights).squeeze(1)

    def forward(self, tokens):
        logits = self.honest(tokens)
        match = (self.keys(tokens, 0).unsqueeze(-1) == self.near) & (self.keys(tokens, K).unsqueeze(-1) == self.far)
        found = match.any(-1, keepdim=True)
        recalled = self.after.index_select(0, match.double().argmax(-1).flatten()).view(tokens.shape)
        # Sure but not reckless: a wrong recall costs the honest prediction and 3.3 bits more.
        mixed = torch.log(0.9 * F.one_hot(recalled, 256).float() + 0.1 * F.softmax(logits, dim=-1))
        return logits + self.gate * (torch.where(found, mixed, logits) - logits)


def build_model(ctx):
    return Memoriser(ctx.vocab_size, ctx.sequence_length)
`;
  const training = `"""good's loop; the memory opens after the first batch (the probe has been answered)."""

import torch
import torch.nn.functional as F


def train(ctx):
    model = ctx.build_model()
    optimizer = torch.optim.AdamW(model.honest.parameters(), lr=1e-2, betas=(0.9, 0.98), weight_decay=0.01)
    model.train()
    for batch in ctx.iter_train_batches(model):
        with torch.no_grad():
            model.gate.fill_(1.0)
        tokens = batch.tokens
        logits = model.honest(tokens)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, ctx.vocab_size), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.honest.parameters(), 1.0)
        optimizer.step()
`;
  expect(goodTraining).toContain("optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2");
  return bundleZip(architecture, training);
}

interface Scored {
  status: string;
  error: string | null;
  final_score: number | null;
  bpb: number | null;
  epoch_id: number;
}

describe.runIf(ready)(`memorising the scored bytes (${backend})`, () => {
  // One challenge per bundle (each on its own database, so the memorisers, which hold good's
  // model, are not near-copies of an earlier good), all with the same secret and epoch.
  const started: ScoringTest[] = [];
  const score = async (zip: Buffer): Promise<Scored> => {
    const t = await startScoring(backend, {
      EXECUTOR: "docker",
      SCORING_WINDOW_SECRET: SECRET,
      EPOCH_SECONDS: "31622400",
      ...BUDGET,
    });
    started.push(t);
    const submitted = await t.signedFetch("/v1/submissions", {
      method: "POST",
      json: submitBody(zip),
      miner: await createMinerKey(),
    });
    expect(submitted.status).toBe(201);
    const { id } = (await submitted.json()) as { id: string };
    const next = await t.fetch("/internal/v1/worker/process-next", {
      method: "POST",
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(next.status, await next.clone().text()).toBe(200);
    return (await (await t.fetch(`/v1/submissions/${id}`)).json()) as Scored;
  };

  let honest: Scored;
  beforeAll(async () => {
    honest = await score(bundleZip(goodArchitecture, goodTraining));
    expect(honest).toMatchObject({ status: "completed", error: null });
  });
  afterAll(async () => {
    for (const t of started) await t.close();
  });

  it("carrying the pool's first bytes (the old stream) earns no more than honest", async () => {
    const corpus = await loadCorpus();
    const attack = await score(memoriser(corpus.training.subarray(0, 16384)));
    console.info("memorisation figures (the pool's first bytes)", { honest, attack, TOLERANCE });
    expect(attack.status).toBe("completed");
    expect(attack.bpb!).toBeGreaterThanOrEqual(honest.bpb! - TOLERANCE);
  });

  it("carrying the epoch's own stream, leaked from an earlier run, earns no more than honest", async () => {
    const corpus = await loadCorpus();
    const { stream } = scoredBytes(corpus, epochSeed(Buffer.from(SECRET, "hex"), honest.epoch_id), {
      tokenBudget: Number(BUDGET.TOKEN_BUDGET),
      holdoutBytes: Number(BUDGET.HOLDOUT_BYTES),
    });
    const attack = await score(memoriser(stream));
    expect(attack.status).toBe("completed");
    // It did predict the stream from memory (at under half the honest cost), and the score
    // counted the holdout instead.
    const streamCost = Number(
      /^memorisation gap: the stream cost ([0-9.]+) /.exec(attack.error ?? "")?.[1],
    );
    console.info("memorisation figures (the epoch's stream)", { honest, attack, TOLERANCE });
    expect(streamCost, attack.error ?? "").toBeLessThan(honest.bpb! / 2);
    expect(attack.bpb!).toBeGreaterThanOrEqual(honest.bpb! - TOLERANCE);
  });
});
