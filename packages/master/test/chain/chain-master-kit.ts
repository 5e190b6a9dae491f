import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Backend } from "@platform/core";
import { expect } from "vitest";
import type { ChainConfig } from "../../src/config.js";
import { registerChallenge } from "../proxy/register-challenge.js";
import { jsonInit, startTestMaster, type TestMaster } from "../test-master.js";
import type { FakeChallenge } from "../weights/fake-challenge.js";

// Public test phrases (substrate's development phrase, BIP-39 test vectors), never real keys.
export const VALIDATOR_PHRASE =
  "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
export const MINER_A_PHRASE =
  "legal winner thank year wave sausage worth useful legal winner thank yellow";
export const MINER_B_PHRASE =
  "letter advice cage absurd amount doctor acoustic avoid letter advice cage above";

/** Polls `probe` every 200 ms until it returns a value (at most `tries` times). */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  tries = 400,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A test master wired to a local chain as an operator would wire it: the metagraph from the
 * chain, its validator with VALIDATOR_PHRASE's key from a hotkey file, and `challenge`
 * registered active with all the emission. `chain` overrides any chain setting.
 */
export async function startChainMaster(
  backend: Backend,
  options: {
    chainUrl: string;
    netuid: number;
    challenge: FakeChallenge;
    chain?: Partial<ChainConfig>;
  },
): Promise<TestMaster> {
  const home = mkdtempSync(join(tmpdir(), "chain-master-"));
  const hotkeyFile = join(home, "hotkey");
  writeFileSync(hotkeyFile, JSON.stringify({ secretPhrase: VALIDATOR_PHRASE }));
  const t = await startTestMaster(backend, (config) => {
    config.chain = {
      endpoints: [options.chainUrl],
      netuid: options.netuid,
      metagraphFromChain: true,
      metagraphCacheSeconds: 0,
      validatorHotkeyFile: hotkeyFile,
      allowBurn: false,
      callTimeoutMs: 10_000,
      blockTimeMs: 150,
      healthGateGrace: 3,
      overrideHealthGate: false,
      ...options.chain,
    };
  });
  const { challenge } = options;
  challenge.token = await registerChallenge(t, challenge.slug, "active", challenge.url);
  const share = await t.fetch(
    `/v1/admin/challenges/${challenge.slug}`,
    jsonInit("PATCH", { emission_percent: 100 }, t.admin),
  );
  expect(share.status).toBe(200);
  return t;
}
