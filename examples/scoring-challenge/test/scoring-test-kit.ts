// Helpers for the service's tests: start the challenge on a fresh database, build bundles, wait
// for a condition, and decide whether the evaluation image is there (skip loudly outside CI,
// fail under CI).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Backend } from "@platform/challenge-sdk/testing";
import { startTestChallenge, type TestChallenge } from "@platform/challenge-sdk/testing";
import { challenge } from "../src/challenge.js";
import { DEFAULT_CORPUS_DIR } from "../src/corpus.js";
import { DEFAULT_EVAL_IMAGE } from "../src/harness-task.js";
import type { ScoringState } from "../src/scoring-state.js";
import { writeZip } from "./zip-writer.js";

/** A started scoring challenge, its state typed. */
export type ScoringTest = TestChallenge<unknown> & { state: ScoringState };

/**
 * Start the challenge on `backend`. Defaults: no background worker (tests drive process-next),
 * LLM gate off, small budgets, the evaluation image `EVAL_IMAGE` names when it is set (the one
 * evalImageReady checks; a harness being worked on can be built under another tag); `env`
 * overrides.
 */
export async function startScoring(
  backend: Backend,
  env: Record<string, string | undefined> = {},
): Promise<ScoringTest> {
  const t = await startTestChallenge(challenge, {
    backend,
    env: {
      WORKER_ENABLED: "false",
      LLM_GATE: "off",
      TOKEN_BUDGET: "16384",
      HOLDOUT_BYTES: "4096",
      RUN_TIMEOUT_SECONDS: "300",
      // The small pinned corpus: fast to load, the same on every machine (the built public pool
      // is 132 MB and only where corpus/build-pool.sh ran).
      CORPUS_DIR: fileURLToPath(DEFAULT_CORPUS_DIR),
      ...(process.env["EVAL_IMAGE"] ? { EVAL_IMAGE: process.env["EVAL_IMAGE"] } : {}),
      ...env,
    },
  });
  return Object.assign(t, { state: t.runtime.state as ScoringState }) as ScoringTest;
}

/** A bundle ZIP of `architecture` and `training` (plus any other files). */
export function bundleZip(
  architecture: string,
  training: string,
  extra: Record<string, string> = {},
): Buffer {
  return writeZip([
    { name: "architecture.py", data: architecture },
    { name: "training.py", data: training },
    ...Object.entries(extra).map(([name, data]) => ({ name, data })),
  ]);
}

/** A model that predicts every byte uniformly; `tag` makes the source (and its hash) unique. */
export function uniformArchitecture(tag: string): string {
  return `"""Uniform model ${tag}."""
import torch


class Uniform(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab
        self.scale = torch.nn.Parameter(torch.zeros(1))

    def forward(self, tokens):
        return torch.zeros(tokens.shape[0], tokens.shape[1], self.vocab) * self.scale


def build_model(ctx):
    return Uniform(ctx.vocab_size)
`;
}

/**
 * Another model with uniform predictions, written differently enough from
 * {@link uniformArchitecture} not to be its near-duplicate.
 */
export function flatArchitecture(tag: string): string {
  return `import torch
from torch import nn


class Flat(nn.Module):
    """Every position gets the same learned bias (zero at first): ${tag}."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(size))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        rows, width = ids.shape
        return self.bias.view(1, 1, -1).expand(rows, width, -1)


def build_model(ctx):
    return Flat(ctx.vocab_size)
`;
}

/** A training loop that draws every batch and learns nothing. */
export const DRAIN_TRAINING = `def train(ctx):
    model = ctx.build_model()
    for batch in ctx.iter_train_batches(model):
        pass
`;

/** One of the example bundles in bundles/. */
export function exampleBundle(name: string): Buffer {
  return readFileSync(new URL(`../bundles/${name}.zip`, import.meta.url));
}

/** A signed JSON submission of `zip` (as the miner's own client sends it). */
export function submitBody(zip: Buffer, filename = "bundle.zip", metadata = {}) {
  return { filename, code: zip.toString("base64"), metadata };
}

/** CI, as CI services set it: any non-empty value other than "false". */
export function underCi(): boolean {
  const value = process.env["CI"];
  return value !== undefined && value !== "" && value.toLowerCase() !== "false";
}

/**
 * Whether the evaluation image is on the local engine. Missing: outside CI the tests that need
 * it are skipped with a loud warning; under CI that is an error (CI builds it first).
 */
export function evalImageReady(image = process.env["EVAL_IMAGE"] ?? DEFAULT_EVAL_IMAGE): boolean {
  try {
    execFileSync("docker", ["image", "inspect", image], { stdio: "ignore" });
    return true;
  } catch {
    const message = `${image} is not on the local Docker engine (bash eval-image/build.sh builds it)`;
    if (underCi()) throw new Error(`${message}: CI must build it before the tests`);
    console.warn(`\n!! ${message}: the tests that run it are SKIPPED\n`);
    return false;
  }
}
