import { readFileSync } from "node:fs";
import { createLogger } from "@platform/core";
import { ApiPromise, Keyring, WsProvider } from "@polkadot/api";
import type { KeyringPair } from "@polkadot/keyring/types";
import type { RuntimeVersion } from "@polkadot/types/interfaces";
import { u8aToHex } from "@polkadot/util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { findChainDataFile, RUNTIME_FILES } from "./_runtime.js";
import { type LocalSubtensor, startLocalSubtensor } from "./local-subtensor.js";

// The local subtensor over JSON-RPC on its default runtime (spec 424), and the upgrade from
// spec 393 seen by a client that stays connected.

const quiet = createLogger({ name: "local-subtensor-test", level: "error", write: () => {} });
const metadataHex = (name: keyof typeof RUNTIME_FILES) =>
  u8aToHex(readFileSync(findChainDataFile(RUNTIME_FILES[name])));

describe("local subtensor, spec 424 over JSON-RPC", () => {
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  let alice: KeyringPair;
  let bob: KeyringPair;
  const open: { node: LocalSubtensor; api: ApiPromise }[] = [];

  beforeAll(() => {
    alice = keyring.addFromUri("//Alice");
    bob = keyring.addFromUri("//Bob");
  });

  afterEach(async () => {
    for (const { node, api } of open.splice(0)) {
      await api.disconnect();
      await node.close();
    }
  });

  async function start(options: Parameters<typeof startLocalSubtensor>[0] = {}) {
    const node = await startLocalSubtensor({ blockMs: 100, log: quiet, tempo: 9, ...options });
    const api = await ApiPromise.create({ provider: new WsProvider(node.url), noInitWarn: true });
    open.push({ node, api });
    return { node, api };
  }

  const rpc = (api: ApiPromise, method: string, params: unknown[]) =>
    (api as unknown as { _rpcCore: { provider: WsProvider } })._rpcCore.provider.send(
      method,
      params,
    );

  it("serves spec 424 by default: its version, its metadata and the counter's storage", async () => {
    const { node, api } = await start();
    expect(api.runtimeVersion.specVersion.toNumber()).toBe(424);
    expect((await api.rpc.state.getMetadata()).toHex()).toBe(metadataHex("spec424"));
    expect(node.status().specVersion).toBe(424);
    await node.registerNeuron(1, alice.address, true);
    const counter = api.query.subtensorModule?.subnetEpochIndex;
    expect(counter).toBeDefined();
    // Tempo 9: the counter has moved nine blocks after the subnet was created.
    const created = node.status().head.number;
    while ((await api.rpc.chain.getHeader()).number.toNumber() < created + 9) {
      await node.nextBlock();
    }
    expect(Number((await counter?.(1))?.toString())).toBeGreaterThanOrEqual(1);
  });

  it("answers a low stake and a rate-limited set_weights with 1010 Custom(n), as finney does", async () => {
    const { node, api } = await start({
      subnetDefaults: { CommitRevealWeightsEnabled: false },
    });
    await node.registerNeuron(1, alice.address, true);
    await node.registerNeuron(1, bob.address, true);
    await rpc(api, "dev_setHyperparameter", [0, "StakeThreshold", "1000"]);
    await rpc(api, "dev_setHyperparameter", [1, "WeightsSetRateLimit", 0]);
    const setWeights = api.tx.subtensorModule?.setWeights;
    if (!setWeights) throw new Error("no setWeights");
    const tx = await setWeights(1, [0, 1], [1, 1], 0).signAsync(alice);
    await expect(api.rpc.author.submitExtrinsic(tx.toHex())).rejects.toThrow(
      /1010: Invalid Transaction: Custom error: 1/,
    );
    expect(await rpc(api, "dev_setStake", [1, alice.address, "1000"])).toBe(true);
    await api.rpc.author.submitExtrinsic(tx.toHex());
    await node.nextBlock();
    await rpc(api, "dev_setHyperparameter", [1, "WeightsSetRateLimit", 1000]);
    const again = await setWeights(1, [0, 1], [1, 2], 0).signAsync(alice);
    // Set a block or two ago: LastUpdate is within the 1,000-block limit.
    await expect(
      new Promise((resolve, reject) => {
        again.send(resolve).catch(reject);
      }),
    ).rejects.toThrow(/1010: Invalid Transaction: Custom error: 6/);
  });

  it("takes the epoch and stake dev methods with their parameters checked", async () => {
    const { node, api } = await start();
    await node.registerNeuron(1, alice.address, true);
    expect(await rpc(api, "dev_deferEpoch", [1, 2])).toBe(true);
    expect(await rpc(api, "dev_skipEpoch", [1])).toBe(true);
    expect(await rpc(api, "dev_setSubnetOwner", [1, alice.address])).toBe(true);
    const head = (await api.rpc.chain.getHeader()).number.toNumber();
    expect(await rpc(api, "dev_triggerEpoch", [1, head + 3])).toBe(head + 3);
    const owner = await api.query.subtensorModule?.subnetOwnerHotkey?.(1);
    expect(owner?.toString()).toBe(alice.address);
    await expect(rpc(api, "dev_deferEpoch", [0])).rejects.toThrow(/netuid/);
    await expect(rpc(api, "dev_setStake", [1, alice.address, "-1"])).rejects.toThrow(/u64/);
    await expect(rpc(api, "dev_upgradeRuntime", ["spec999"])).rejects.toThrow(/spec393, spec424/);
    await expect(rpc(api, "dev_upgradeRuntime", ["spec424"])).rejects.toThrow(/not newer/);
  });

  it("upgrades a spec-393 chain while a client follows: version, metadata, LastRuntimeUpgrade", async () => {
    const { node, api } = await start({ runtime: "spec393" });
    await node.registerNeuron(1, alice.address, true);
    expect(api.runtimeVersion.specVersion.toNumber()).toBe(393);
    await expect(rpc(api, "dev_deferEpoch", [1])).rejects.toThrow(/spec 393/);
    const versions: number[] = [];
    const unsub = await api.rpc.state.subscribeRuntimeVersion((v: RuntimeVersion) => {
      versions.push(v.specVersion.toNumber());
    });
    const before = await api.rpc.chain.getBlockHash();
    const upgraded = (await rpc(api, "dev_upgradeRuntime", ["spec424"])) as {
      block: number;
      specVersion: number;
    };
    expect(upgraded.specVersion).toBe(424);
    const upgradeHash = await api.rpc.chain.getBlockHash(upgraded.block);
    while (versions.length < 2) await node.nextBlock();
    unsub();
    expect(versions).toEqual([393, 424]);
    // Metadata and version at each block are that block's runtime's.
    expect((await api.rpc.state.getMetadata(before)).toHex()).toBe(metadataHex("spec393"));
    expect((await api.rpc.state.getMetadata(upgradeHash)).toHex()).toBe(metadataHex("spec424"));
    expect((await api.rpc.state.getRuntimeVersion(before)).specVersion.toNumber()).toBe(393);
    // polkadot-js swaps its metadata on the version change and reads the new storage.
    while (api.runtimeVersion.specVersion.toNumber() !== 424) await node.nextBlock();
    const last = await api.query.system?.lastRuntimeUpgrade?.();
    expect(last?.toJSON()).toEqual({ specVersion: 424, specName: "node-subtensor" });
    // The first block to run spec 424 migrates: after it (block b) the counter is the
    // formula's epoch at b + 1, so the epoch keys carry on.
    const first = upgraded.block + 1;
    while ((await api.rpc.chain.getHeader()).number.toNumber() < first) await node.nextBlock();
    const at = await api.at(await api.rpc.chain.getBlockHash(first));
    const seeded = Number((await at.query.subtensorModule?.subnetEpochIndex?.(1))?.toString());
    expect(seeded).toBe(Math.floor((first + 1 + 2) / 10));
    expect(node.status().specVersion).toBe(424);
  });
});
