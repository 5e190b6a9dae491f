import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { ApiPromise, WsProvider } from "@polkadot/api";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli, waitForOutput } from "../../test/run-cli.js";

/** `at.query.subtensorModule[item](...args)` as JSON (the api has no generated types for subtensor). */
async function read(
  at: { query: Record<string, Record<string, unknown> | undefined> },
  item: string,
  ...args: unknown[]
) {
  const query = at.query.subtensorModule?.[item] as
    | ((...a: unknown[]) => Promise<{ toJSON(): unknown }>)
    | undefined;
  if (!query) throw new Error(`no subtensorModule.${item}`);
  return (await query(...args)).toJSON();
}

const FINNEY_GENESIS = "0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03";
const QUICKNET_KEY =
  "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a";

const children: ChildProcess[] = [];
afterAll(() => {
  // A failed assertion must not leave a chain running.
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("platform chain local", () => {
  it("serves a chain @polkadot/api reads, with its own genesis and the dev methods, and stops on SIGTERM", async () => {
    const child = spawnCli([
      "chain",
      "local",
      "--port",
      "0",
      "--block-ms",
      "200",
      "--rate-limit",
      "0",
    ]);
    children.push(child);
    const [, url, genesis, drandKey] = await waitForOutput(
      child,
      /local subtensor: (ws:\/\/127\.0\.0\.1:\d+)\ngenesis: (0x[0-9a-f]{64}).*\n.*\ndrand public key: ([0-9a-f]{192})\n/,
      60_000,
    );
    const api = await ApiPromise.create({ provider: new WsProvider(url), noInitWarn: true });
    try {
      expect(api.genesisHash.toHex()).toBe(genesis);
      expect(genesis).not.toBe(FINNEY_GENESIS);
      // The local subtensor serves finney spec 424 by default (the SubnetEpochIndex counter).
      expect(api.runtimeVersion.specVersion.toNumber()).toBe(424);
      const provider = api as unknown as { _rpcCore: { provider: WsProvider } };
      const uid = await provider._rpcCore.provider.send("dev_registerNeuron", [
        3,
        "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY",
        true,
      ]);
      expect(uid).toBe(0);
      // The printed drand key is the one the chain answers with, and not quicknet's.
      const info = (await provider._rpcCore.provider.send("dev_drandInfo", [])) as {
        public_key: string;
        period: number;
      };
      expect(info.public_key).toBe(drandKey);
      expect(info.period).toBe(3);
      expect(drandKey).not.toBe(QUICKNET_KEY);
      // Finalized two blocks behind: wait until the registration is final, then read it there.
      let at = await api.at(await api.rpc.chain.getFinalizedHead());
      for (let i = 0; ; i++) {
        if ((await read(at, "keys", 3, 0)) === "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY")
          break;
        if (i === 50) throw new Error("the registration never became final");
        await new Promise((resolve) => setTimeout(resolve, 200));
        at = await api.at(await api.rpc.chain.getFinalizedHead());
      }
      // The subnet was created with the flags' settings.
      expect(await read(at, "commitRevealWeightsEnabled", 3)).toBe(false);
      expect(await read(at, "weightsSetRateLimit", 3)).toBe(0);
    } finally {
      await api.disconnect();
    }
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  });

  it("refuses a bad flag without a stack", async () => {
    const result = await runCli(["chain", "local", "--block-ms", "fast"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--block-ms must be an integer");
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const runtime = await runCli(["chain", "local", "--runtime", "spec999"]);
    expect(runtime.code).toBe(1);
    expect(runtime.stderr).toContain('--runtime must be one of spec424, spec393, got "spec999"');
  });

  it("serves the spec-393 runtime with --runtime spec393", async () => {
    const child = spawnCli([
      "chain",
      "local",
      "--port",
      "0",
      "--block-ms",
      "200",
      "--runtime",
      "spec393",
    ]);
    children.push(child);
    const [, url] = await waitForOutput(
      child,
      /local subtensor: (ws:\/\/127\.0\.0\.1:\d+)\n[\s\S]*finney spec393 runtime \(epochs by the block-number formula\)/,
      60_000,
    );
    const api = await ApiPromise.create({ provider: new WsProvider(url), noInitWarn: true });
    try {
      expect(api.runtimeVersion.specVersion.toNumber()).toBe(393);
      expect(api.query.subtensorModule?.subnetEpochIndex).toBeUndefined();
    } finally {
      await api.disconnect();
    }
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  });
});
