// Helpers for the service's tests: start the challenge on a fresh database with its own secret key
// file (what production requires next to CHALLENGE_TOKEN), and make small, unique agent ZIPs.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Backend } from "@platform/challenge-sdk/testing";
import { startTestChallenge, type TestChallenge } from "@platform/challenge-sdk/testing";
import type { AgentEvalState } from "../src/agent-eval-state.js";
import type { QuoteVerifier } from "../src/attestation/index.js";
import { challenge } from "../src/challenge.js";

/** A started agent-eval challenge, its state typed. */
export type AgentEvalTest = TestChallenge<unknown> & { state: AgentEvalState };

/** A fresh 32-byte key in a private temporary file: the SECRET_KEY_FILE of one test run. */
export function secretKeyFile(): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "agent-eval-key-"));
  const path = join(dir, "secret.key");
  writeFileSync(path, randomBytes(32).toString("hex"), { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Start the challenge on `backend` (development attestation unless `env` says otherwise). */
export async function startAgentEval(
  backend: Backend,
  env: Record<string, string | undefined> = {},
): Promise<AgentEvalTest> {
  const key = secretKeyFile();
  const t = await startTestChallenge(challenge, {
    backend,
    env: { SECRET_KEY_FILE: key.path, ATTESTATION_VERIFIER: "dev", ...env },
  });
  const close = t.close.bind(t);
  return Object.assign(t, {
    state: t.runtime.state as AgentEvalState,
    close: async () => {
      await close();
      key.remove();
    },
  }) as AgentEvalTest;
}

/**
 * The smallest valid ZIP: an empty archive (its end-of-central-directory record) whose comment
 * is `tag`, so every call with a new tag is a different artifact with a different sha256.
 */
export function agentZip(tag: string = randomBytes(8).toString("hex"), padTo = 0): Buffer {
  const comment = Buffer.from(tag.padEnd(Math.max(0, padTo - 22), "."), "utf8");
  const record = Buffer.alloc(22);
  record.writeUInt32LE(0x06054b50, 0);
  record.writeUInt16LE(comment.length, 20);
  return Buffer.concat([record, comment]);
}

/** What the quote verifier answers during an outage of its collateral service. */
export const verifierOutage: QuoteVerifier["verify"] = async () => ({
  status: "unavailable",
  code: "collateral_unavailable",
  message: "down",
});

/**
 * Run `fn` while the challenge's quote verifier answers as `verify` does (an outage unless
 * told), then put the real one back, whatever `fn` did.
 */
export async function withVerifier<T>(
  t: AgentEvalTest,
  fn: () => Promise<T>,
  verify: QuoteVerifier["verify"] = verifierOutage,
): Promise<T> {
  const working = t.state.verifier;
  t.state.verifier = { kind: working.kind, confidential: working.confidential, verify };
  try {
    return await fn();
  } finally {
    t.state.verifier = working;
  }
}
