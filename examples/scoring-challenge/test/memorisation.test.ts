// The memorisation attack (issue 31, finding 1) through the service, in the real image: a bundle
// that carries bytes it expects to be scored on and predicts each row from its memory, using only
// earlier bytes (causal: the twin check cannot object), after answering the step-0 probe with an
// honest random-init model. It scored 0.94-0.9999 when the stream was the pool's first bytes.
// Now the pool's first bytes buy nothing, and the epoch's stream itself (leaked from an earlier
// run of the epoch) is found out and scored on the holdout, which never leaves the scorer: it
// buys no more than carrying as many bytes of the public pool, within the memorisation gap's
// tolerance (src/score.ts; 0.1 bits per byte at the production sizes, 0.22 here).
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

/**
 * bundles/good plus a recall: the byte that followed the last 2K bytes in its memory, mixed into
 * good's prediction once train(ctx) opens the gate (closed as built: the step-0 probe sees good's
 * random-init model). `carried`: the memory holds those bytes from the start (the attack); null:
 * it starts empty and train(ctx) writes each batch into it after it was charged (the honest cache
 * model the same code makes without smuggled bytes).
 */
function recaller(carried: Buffer | null, size: number): Buffer {
  const initial = carried === null ? `[-1.0] * ${size}` : JSON.stringify([...carried]);
  const architecture = `${goodArchitecture.replace(/\ndef build_model\(ctx\):[\s\S]*$/, "\n")}
import torch.nn.functional as F

MEMORY = ${initial}
K = 4  # two keys of K bytes: the last 2K bytes before a position


class Recaller(nn.Module):
    def __init__(self, vocab, max_len):
        super().__init__()
        self.honest = ByteTransformer(vocab, max_len)
        self.gate = nn.Parameter(torch.zeros(1))
        self.register_buffer("memory", torch.tensor(MEMORY, dtype=torch.float64))
        self.register_buffer("weights", (256.0 ** torch.arange(K - 1, -1, -1, dtype=torch.float64)).view(1, 1, K))

    def keys(self, values, shift):
        window = F.pad(values.unsqueeze(1), (K - 1 + shift, 0), value=-1.0)
        return F.conv1d(window[:, :, : values.shape[1] + K - 1], self.weights).squeeze(1)

    def forward(self, tokens):
        logits = self.honest(tokens)
        memory = self.memory.view(1, -1)
        # Memory position i answers "what followed the 2K bytes ending at i": the byte at i + 1.
        near, far = self.keys(memory, 0)[:, :-1], self.keys(memory, K)[:, :-1]
        after = memory[:, 1:]
        valid = (after >= 0.0) & (far >= 0.0)
        queries = tokens.double()
        match = (self.keys(queries, 0).unsqueeze(-1) == near.unsqueeze(1)) & (self.keys(queries, K).unsqueeze(-1) == far.unsqueeze(1)) & valid.unsqueeze(1)
        found = match.any(-1, keepdim=True)
        index = match.double().argmax(-1).flatten()
        recalled = after.view(-1).index_select(0, index).clamp_min(0.0).long().view(tokens.shape)
        # Sure but not reckless: a wrong recall costs good's prediction and 3.3 bits more.
        mixed = torch.log(0.9 * F.one_hot(recalled, 256).float() + 0.1 * F.softmax(logits, dim=-1))
        return logits + self.gate * (torch.where(found, mixed, logits) - logits)


def build_model(ctx):
    return Recaller(ctx.vocab_size, ctx.sequence_length)
`;
  const training = `"""good's loop; the recall opens once the probe is answered${carried === null ? "; each batch joins the memory after it was charged" : ""}."""

import torch
import torch.nn.functional as F


def train(ctx):
    model = ctx.build_model()
    optimizer = torch.optim.AdamW(model.honest.parameters(), lr=1e-2, betas=(0.9, 0.98), weight_decay=0.01)
    model.train()
    filled = 0
    for batch in ctx.iter_train_batches(model):
        tokens = batch.tokens
        with torch.no_grad():
            model.gate.fill_(1.0)
            ${carried === null ? "" : "# "}seen = tokens[:, 1:].reshape(-1) if filled else tokens.reshape(-1)
            ${carried === null ? "" : "# "}model.memory[filled : filled + seen.numel()] = seen.double()[: model.memory.numel() - filled]
            ${carried === null ? "" : "# "}filled = min(model.memory.numel(), filled + seen.numel())
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
  /** Bits per byte the run's holdout cost (from the stored report). */
  holdout_bpb: number;
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
    const record = (await (await t.fetch(`/v1/submissions/${id}`)).json()) as Scored;
    const [row] = await t.sql<
      { report: { holdout: { covered_bytes: number; nll_nats: number } } }[]
    >`
      select report from submissions where id = ${id}::bigint`;
    const holdout = row!.report.holdout;
    return { ...record, holdout_bpb: holdout.nll_nats / (Math.LN2 * holdout.covered_bytes) };
  };

  // The honest comparator is the same code without smuggled bytes: a cache of what it was shown.
  let honest: Scored;
  beforeAll(async () => {
    honest = await score(recaller(null, 16384));
    expect(honest).toMatchObject({ status: "completed", error: null });
  });
  afterAll(async () => {
    for (const t of started) await t.close();
  });

  it("carrying the pool's first bytes (the old stream) earns no more than honest", async () => {
    const corpus = await loadCorpus();
    const attack = await score(recaller(corpus.training.subarray(0, 16384), 16384));
    console.info("memorisation figures (the pool's first bytes)", { honest, attack, TOLERANCE });
    expect(attack).toMatchObject({ status: "completed", error: null });
    expect(attack.bpb!).toBeGreaterThanOrEqual(honest.bpb! - TOLERANCE);
  });

  // What a miner can know in advance: the public pool. A bundle that carries as many bytes of it,
  // drawn like a sample (with a secret of the miner's own), carries knowledge of the pool's text.
  let carriedPublic: Scored;
  const sample = async (secret: string, epochId: number) =>
    scoredBytes(await loadCorpus(), epochSeed(Buffer.from(secret, "hex"), epochId), {
      tokenBudget: Number(BUDGET.TOKEN_BUDGET),
      holdoutBytes: Number(BUDGET.HOLDOUT_BYTES),
    }).stream;

  it("carrying a sample of the public pool is knowledge, not the scored bytes: no gap", async () => {
    const carried = await sample("a1".repeat(32), honest.epoch_id);
    carriedPublic = await score(recaller(carried, carried.length));
    console.info("memorisation figures (a public sample)", { honest, carriedPublic });
    expect(carriedPublic).toMatchObject({ status: "completed", error: null });
  });

  it("carrying the epoch's own stream, leaked from an earlier run, earns no more than carrying public text", async () => {
    const stream = await sample(SECRET, honest.epoch_id);
    const attack = await score(recaller(stream, stream.length));
    console.info("memorisation figures (the epoch's stream)", {
      honest,
      carriedPublic,
      attack,
      TOLERANCE,
    });
    expect(attack.status).toBe("completed");
    // It did predict the stream from memory (at under half the honest cost)...
    const streamCost = Number(
      /^memorisation gap: the stream cost ([0-9.]+) /.exec(attack.error ?? "")?.[1],
    );
    expect(streamCost, attack.error ?? "").toBeLessThan(honest.bpb! / 2);
    // ...so the score counted the holdout, text it had not seen, less the tolerance (before, it
    // was scored at its stream cost)...
    expect(attack.bpb!).toBeCloseTo(attack.holdout_bpb - TOLERANCE, 2);
    // ...and on text it had not seen, knowing the scored bytes bought no more than carrying as
    // many bytes of the public pool, within the sampling noise of two holdout costs (the same
    // tolerance): what it gains over that carrier is at most the tolerance twice.
    expect(attack.holdout_bpb).toBeGreaterThanOrEqual(carriedPublic.holdout_bpb - TOLERANCE);
    expect(attack.bpb!).toBeGreaterThanOrEqual(carriedPublic.bpb! - 2 * TOLERANCE);
  });
});
