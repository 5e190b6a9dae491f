import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createLogger } from "@platform/core";
import { ApiPromise, Keyring, WsProvider } from "@polkadot/api";
import type {
  ApiDecoration,
  QueryableStorageEntry,
  SubmittableExtrinsic,
} from "@polkadot/api/types";
import type { KeyringPair } from "@polkadot/keyring/types";
import type { EventRecord, Header } from "@polkadot/types/interfaces";
import type { ISubmittableResult } from "@polkadot/types/types";
import { u8aToHex } from "@polkadot/util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChainDataFile } from "./_runtime.js";
import { type LocalSubtensor, startLocalSubtensor } from "./local-subtensor.js";

const FINNEY_GENESIS = (
  JSON.parse(readFileSync(findChainDataFile("vectors.json"), "utf8")) as {
    finney: { genesis_hash: string };
  }
).finney.genesis_hash;

const quiet = createLogger({ name: "local-subtensor-test", level: "error", write: () => {} });

type Tx = SubmittableExtrinsic<"promise">;
type At = ApiPromise | ApiDecoration<"promise">;

// The metadata decorates these at run time; without generated augmentations TypeScript only
// knows them as optional index entries.
function storage(at: At, pallet: string, item: string): QueryableStorageEntry<"promise"> {
  const entry = at.query[pallet]?.[item];
  if (!entry) throw new Error(`no storage ${pallet}.${item}`);
  return entry;
}
const read = async (at: At, item: string, ...args: unknown[]): Promise<unknown> =>
  (await storage(at, "subtensorModule", item)(...args)).toJSON();
const nonceOf = async (at: At, address: string) =>
  ((await storage(at, "system", "account")(address)).toJSON() as { nonce: number }).nonce;

function setWeights(
  api: ApiPromise,
  netuid: number,
  uids: number[],
  values: number[],
  version = 0,
): Tx {
  const call = api.tx.subtensorModule?.setWeights;
  if (!call) throw new Error("no subtensorModule.setWeights");
  return call(netuid, uids, values, version);
}

interface Outcome {
  statuses: string[];
  inBlock: string;
  finalized: string;
  events: string[];
  /** `Section.Name` of the dispatch error, when the extrinsic failed. */
  error?: string;
}

// Signs and sends, resolving once the transaction is finalized (or rejecting on a refusal).
function send(api: ApiPromise, tx: Tx, signer: KeyringPair, nonce?: number): Promise<Outcome> {
  const statuses: string[] = [];
  let inBlock = "";
  return new Promise<Outcome>((resolve, reject) => {
    let unsub: (() => void) | undefined;
    let done = false;
    const onStatus = (result: ISubmittableResult) => {
      statuses.push(result.status.type);
      if (result.status.isInBlock) inBlock = result.status.asInBlock.toHex();
      if (result.status.isFinalized) {
        done = true;
        unsub?.();
        const outcome: Outcome = {
          statuses,
          inBlock,
          finalized: result.status.asFinalized.toHex(),
          events: result.events.map(({ event }) => `${event.section}.${event.method}`),
        };
        if (result.dispatchError?.isModule) {
          const meta = api.registry.findMetaError(result.dispatchError.asModule);
          outcome.error = `${meta.section}.${meta.name}`;
        }
        resolve(outcome);
      } else if (result.status.isInvalid || result.status.isDropped || result.status.isUsurped) {
        done = true;
        unsub?.();
        reject(new Error(`transaction ${result.status.type}`));
      }
    };
    tx.signAndSend(signer, nonce === undefined ? {} : { nonce }, onStatus).then((u) => {
      unsub = u;
      if (done) u();
    }, reject);
  });
}

async function waitFinalized(api: ApiPromise, atLeast: number): Promise<string> {
  for (;;) {
    const hash = await api.rpc.chain.getFinalizedHead();
    const header = await api.rpc.chain.getHeader(hash);
    if (header.number.toNumber() >= atLeast) return hash.toHex();
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("local subtensor through @polkadot/api", () => {
  let node: LocalSubtensor;
  let api: ApiPromise;
  let provider: WsProvider;
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  let alice: KeyringPair;
  let bob: KeyringPair;
  let charlie: KeyringPair;
  let dave: KeyringPair;

  beforeAll(async () => {
    node = await startLocalSubtensor({
      // The spec-393 runtime: these tests assert its block errors and pulse timing.
      runtime: "spec393",
      blockMs: 100,
      finalityLag: 2,
      // Weights go straight to the chain, without waiting between sets, unless a test says so.
      subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 0 },
      log: quiet,
    });
    provider = new WsProvider(node.url);
    api = await ApiPromise.create({ provider });
    alice = keyring.addFromUri("//Alice");
    bob = keyring.addFromUri("//Bob");
    charlie = keyring.addFromUri("//Charlie");
    dave = keyring.addFromUri("//Dave");
    // Subnet 1: alice (uid 0, permit), bob (uid 1, no permit), charlie (uid 2, permit).
    // Each registration lands in the next block; issued together they share it.
    await Promise.all([
      node.registerNeuron(1, alice.address, true),
      node.registerNeuron(2, alice.address, true),
      node.registerNeuron(3, alice.address, true),
      node.registerNeuron(4, alice.address, true),
      node.registerNeuron(5, alice.address, true),
      node.registerNeuron(6, alice.address, true),
    ]);
    await Promise.all([
      node.registerNeuron(1, bob.address, false),
      node.registerNeuron(4, bob.address, false),
      node.registerNeuron(5, bob.address, false),
    ]);
    await Promise.all([
      node.registerNeuron(1, charlie.address, true),
      node.registerNeuron(5, charlie.address, false),
      node.setHyperparameter(2, "CommitRevealWeightsEnabled", true),
      node.setHyperparameter(3, "WeightsVersionKey", 5),
      node.setHyperparameter(4, "MaxWeightsLimit", 30000),
      node.setHyperparameter(5, "MinAllowedWeights", 3),
      node.setHyperparameter(6, "WeightsSetRateLimit", 100000),
      // No subnet 99 and the root subnet 0: only their commit-reveal flags are written.
      node.setHyperparameter(99, "CommitRevealWeightsEnabled", false),
      node.setHyperparameter(0, "CommitRevealWeightsEnabled", false),
    ]);
  });

  afterAll(async () => {
    await api?.disconnect();
    await node?.close();
  });

  it("is its own chain, serving finney's runtime", async () => {
    expect(api.genesisHash.toHex()).toBe(node.genesisHash);
    expect(node.genesisHash).not.toBe(FINNEY_GENESIS);
    expect(api.runtimeVersion.specName.toString()).toBe("node-subtensor");
    expect(api.runtimeVersion.specVersion.toNumber()).toBe(393);
    expect(api.runtimeVersion.transactionVersion.toNumber()).toBe(1);
    expect(api.runtimeMetadata.version).toBe(16);
    expect(api.registry.chainSS58).toBe(42);
    expect(api.registry.chainDecimals).toEqual([9]);
    expect(api.registry.chainTokens).toEqual(["TAO"]);
    expect(setWeights(api, 1, [], []).method.callIndex).toEqual(new Uint8Array([7, 0]));
  });

  it("serves headers whose SCALE hash, computed by the client, is the block hash", async () => {
    const header = await api.rpc.chain.getHeader();
    const n = header.number.toNumber();
    expect(n).toBeGreaterThan(0);
    expect(header.hash.toHex()).toBe((await api.rpc.chain.getBlockHash(n)).toHex());
    const parent = await api.rpc.chain.getHeader(header.parentHash);
    expect(parent.number.toNumber()).toBe(n - 1);
    expect(parent.hash.toHex()).toBe(header.parentHash.toHex());
    expect((await api.rpc.chain.getBlockHash(0)).toHex()).toBe(node.genesisHash);
    const block = await api.rpc.chain.getBlock(header.hash);
    // Every block starts with the timestamp inherent.
    expect(block.block.extrinsics[0]?.method.section).toBe("timestamp");
    const finalized = await api.rpc.chain.getHeader(await api.rpc.chain.getFinalizedHead());
    const best = await api.rpc.chain.getHeader();
    expect(finalized.number.toNumber()).toBeLessThan(best.number.toNumber());
    expect(Number((await storage(api, "system", "number")()).toJSON())).toBeGreaterThanOrEqual(n);
  });

  it("follows new and finalized heads by subscription", async () => {
    const heads: Header[] = [];
    const finals: Header[] = [];
    const unsubHeads = await api.rpc.chain.subscribeNewHeads((h) => {
      heads.push(h);
    });
    const unsubFinal = await api.rpc.chain.subscribeFinalizedHeads((h) => {
      finals.push(h);
    });
    while (heads.length < 4 || finals.length < 4) await new Promise((r) => setTimeout(r, 50));
    unsubHeads();
    unsubFinal();
    const numbers = heads.map((h) => h.number.toNumber());
    for (let i = 1; i < numbers.length; i++)
      expect(numbers[i]).toBe((numbers[i - 1] as number) + 1);
    for (let i = 1; i < heads.length; i++) {
      expect(heads[i]?.parentHash.toHex()).toBe(heads[i - 1]?.hash.toHex());
    }
    const lastFinal = finals[finals.length - 1] as Header;
    expect((await api.rpc.chain.getBlockHash(lastFinal.number.toNumber())).toHex()).toBe(
      lastFinal.hash.toHex(),
    );
  });

  it("reads SubtensorModule storage at a pinned finalized block, as it was then", async () => {
    const block = await node
      .registerNeuron(8, dave.address, true)
      .then(() => node.status().head.number);
    const pinned = await waitFinalized(api, block);
    const at = await api.at(pinned);
    expect(await read(at, "keys", 8, 0)).toBe(dave.address);
    expect(await read(at, "uids", 8, dave.address)).toBe(0);
    expect(await read(at, "uids", 8, alice.address)).toBeNull();
    expect(await read(at, "subnetworkN", 8)).toBe(1);
    expect(await read(at, "networksAdded", 8)).toBe(true);
    expect(await read(at, "networksAdded", 77)).toBe(false);
    expect(await read(at, "validatorPermit", 8)).toEqual([true]);
    expect(await read(at, "lastUpdate", 8)).toEqual([block]);
    expect(await read(at, "tempo", 8)).toBe(360);
    expect(await read(at, "minAllowedWeights", 8)).toBe(1);
    expect(await read(at, "maxWeightsLimit", 8)).toBe(65535);
    expect(await read(at, "weightsSetRateLimit", 8)).toBe(0);
    expect(await read(at, "commitRevealWeightsEnabled", 8)).toBe(false);
    expect(await read(at, "weightsVersionKey", 8)).toBe(0);
    expect(await read(at, "revealPeriodEpochs", 8)).toBe(1);
    expect(await read(at, "commitRevealWeightsVersion")).toBe(4);
    // Finney's defaults hold for a subnet nobody configured.
    expect(await read(at, "commitRevealWeightsEnabled", 1234)).toBe(true);
    expect(await read(at, "weightsSetRateLimit", 1234)).toBe(100);

    // Later changes show at the head, never at the pinned block.
    await node.setHyperparameter(8, "WeightsVersionKey", 7);
    await node.setHyperparameter(8, "Tempo", 99);
    expect(await read(api, "weightsVersionKey", 8)).toBe(7);
    expect(await read(api, "tempo", 8)).toBe(99);
    expect(await read(at, "weightsVersionKey", 8)).toBe(0);
    expect(await read(at, "tempo", 8)).toBe(360);
  });

  it("takes a signed set_weights through ready, inBlock and finalized, with its events and storage", async () => {
    const outcome = await send(api, setWeights(api, 1, [0, 1, 2], [10, 20, 40]), alice);
    expect(outcome.statuses).toEqual(["Ready", "InBlock", "Finalized"]);
    expect(outcome.inBlock).toBe(outcome.finalized);
    expect(outcome.error).toBeUndefined();
    expect(outcome.events).toEqual([
      "subtensorModule.WeightsSet",
      "transactionPayment.TransactionFeePaid",
      "system.ExtrinsicSuccess",
    ]);
    const at = await api.at(outcome.finalized);
    const events = (await storage(at, "system", "events")()) as unknown as EventRecord[];
    const weightsSet = events.find((e) => e.event.method === "WeightsSet");
    expect(weightsSet?.event.data.toJSON()).toEqual([1, 0]);
    expect(weightsSet?.phase.isApplyExtrinsic).toBe(true);
    const header = await api.rpc.chain.getHeader(outcome.finalized);
    // Max-upscaled as the chain stores them; LastUpdate moves to the including block.
    expect(await read(at, "weights", 1, 0)).toEqual([
      [0, 16384],
      [1, 32768],
      [2, 65535],
    ]);
    expect(await read(at, "lastUpdate", 1)).toEqual([
      header.number.toNumber(),
      expect.any(Number),
      expect.any(Number),
    ]);
    expect(await nonceOf(at, alice.address)).toBe(1);
  });

  it("fails each broken set_weights in its block with the chain's module error", async () => {
    const set = (netuid: number, uids: number[], values: number[], version = 0) =>
      setWeights(api, netuid, uids, values, version);
    const cases: [string, Tx, KeyringPair][] = [
      ["CommitRevealEnabled", set(2, [0], [1]), alice],
      ["MechanismDoesNotExist", set(99, [0], [1]), alice],
      ["CanNotSetRootNetworkWeights", set(0, [0], [1]), alice],
      ["WeightVecNotEqualSize", set(1, [0, 1], [1]), alice],
      ["UidsLengthExceedUidsInSubNet", set(1, [0, 1, 2, 2], [1, 1, 1, 1]), alice],
      ["HotKeyNotRegisteredInSubNet", set(1, [0], [1]), dave],
      ["IncorrectWeightVersionKey", set(3, [0], [1], 4), alice],
      ["SettingWeightsTooFast", set(6, [0], [1]), alice],
      ["NeuronNoValidatorPermit", set(1, [0, 1], [1, 1]), bob],
      ["DuplicateUids", set(1, [1, 1], [1, 1]), alice],
      ["UidVecContainInvalidOne", set(1, [1, 50], [1, 1]), alice],
      ["WeightVecLengthIsLow", set(5, [1, 2], [1, 1]), alice],
      ["MaxWeightExceeded", set(4, [0, 1], [65535, 1]), alice],
    ];
    // Explicit nonces let one signer's transactions share the pool and the blocks.
    const next = new Map<string, number>();
    for (const pair of [alice, bob, dave]) {
      next.set(pair.address, (await api.rpc.system.accountNextIndex(pair.address)).toNumber());
    }
    const outcomes = await Promise.all(
      cases.map(([, tx, signer]) => {
        const nonce = next.get(signer.address) as number;
        next.set(signer.address, nonce + 1);
        return send(api, tx, signer, nonce);
      }),
    );
    const names = outcomes.map((o) => o.error);
    expect(names).toEqual(cases.map(([name]) => `subtensorModule.${name}`));
    for (const o of outcomes) {
      // Signing is asynchronous, so a later nonce may reach the pool first and wait as Future.
      expect(o.statuses.slice(-3)).toEqual(["Ready", "InBlock", "Finalized"]);
      expect(o.events).toEqual(["transactionPayment.TransactionFeePaid", "system.ExtrinsicFailed"]);
    }
    // The failed extrinsics still used their nonces.
    expect(await nonceOf(api, alice.address)).toBe(next.get(alice.address));
  });

  it("refuses invalid transactions at the pool with substrate's JSON-RPC errors", async () => {
    const tx = setWeights(api, 1, [0], [1]);
    await tx.signAsync(charlie);
    // Flip a bit of the sr25519 signature (it sits right before the extensions and the call).
    const bad = tx.toU8a();
    const sigAt = bad.length - tx.method.toU8a().length - 4 - 64;
    bad[sigAt] = (bad[sigAt] as number) ^ 1;
    await expect(api.rpc.author.submitExtrinsic(u8aToHex(bad))).rejects.toThrow(
      /1010: Invalid Transaction: Transaction has a bad signature/,
    );

    // A future nonce waits in the pool, so resubmissions meet it there: the same bytes are
    // already imported, another transaction with that nonce is too low a priority.
    const eve = keyring.addFromUri("//Eve");
    const waiting = setWeights(api, 1, [0], [1]);
    await waiting.signAsync(eve, { nonce: 5 });
    await api.rpc.author.submitExtrinsic(waiting.toHex());
    await expect(api.rpc.author.submitExtrinsic(waiting.toHex())).rejects.toThrow(
      /1013: Transaction Already Imported/,
    );
    const rival = setWeights(api, 1, [0], [2]);
    await rival.signAsync(eve, { nonce: 5 });
    await expect(api.rpc.author.submitExtrinsic(rival.toHex())).rejects.toThrow(
      /1014: Priority is too low/,
    );

    // A used nonce is outdated.
    const used = (await api.rpc.system.accountNextIndex(charlie.address)).toNumber();
    await send(api, setWeights(api, 1, [0], [3]), charlie, used);
    const stale = setWeights(api, 1, [0], [4]);
    await stale.signAsync(charlie, { nonce: used });
    await expect(api.rpc.author.submitExtrinsic(stale.toHex())).rejects.toThrow(
      /1010: Invalid Transaction: Transaction is outdated/,
    );

    // Any call but set_weights costs a fee, and no account here holds a balance.
    const transfer = api.tx.balances?.transferKeepAlive?.(bob.address, 1) as Tx;
    await transfer.signAsync(charlie);
    await expect(api.rpc.author.submitExtrinsic(transfer.toHex())).rejects.toThrow(
      /1010: Invalid Transaction: Inability to pay some fees/,
    );
    // Bytes that are no extrinsic of this runtime (sent raw: the client would not encode them).
    await expect(provider.send("author_submitExtrinsic", ["0x0c04ffff"])).rejects.toThrow(
      /1001: Extrinsic has invalid format/,
    );
  });

  it("holds a future nonce until the gap closes", async () => {
    const nonce = (await api.rpc.system.accountNextIndex(charlie.address)).toNumber();
    const laterTx = setWeights(api, 1, [2], [1], 0);
    const later = send(api, laterTx, charlie, nonce + 1);
    // It waits in the pool across blocks.
    while (!(await api.rpc.author.pendingExtrinsics()).some((x) => x.hash.eq(laterTx.hash))) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await node.nextBlock();
    await node.nextBlock();
    expect((await api.rpc.author.pendingExtrinsics()).some((x) => x.hash.eq(laterTx.hash))).toBe(
      true,
    );
    const first = await send(api, setWeights(api, 1, [2], [1], 0), charlie, nonce);
    const second = await later;
    expect(second.statuses).toEqual(["Future", "Ready", "InBlock", "Finalized"]);
    expect(first.error).toBeUndefined();
    expect(second.error).toBeUndefined();
  });

  it("rejects the next extrinsic as a dev fault asks: module error or pool error", async () => {
    await provider.send("dev_fault", [{ kind: "reject_next", error: "SettingWeightsTooFast" }]);
    const failed = await send(api, setWeights(api, 1, [0], [1], 0), alice);
    expect(failed.error).toBe("subtensorModule.SettingWeightsTooFast");
    const ok = await send(api, setWeights(api, 1, [0], [1], 0), alice);
    expect(ok.error).toBeUndefined();

    await provider.send("dev_fault", [{ kind: "reject_next", error: "Stale" }]);
    await expect(send(api, setWeights(api, 1, [0], [1], 0), alice)).rejects.toThrow(
      /1010: Invalid Transaction: Transaction is outdated/,
    );
    await expect(
      provider.send("dev_fault", [{ kind: "reject_next", error: "NoSuchError" }]),
    ).rejects.toThrow(/-32602/);
  });

  it("pages the Keys map of a 4,096-neuron subnet, at a pinned block", async () => {
    const hotkeys = Array.from({ length: 4096 }, () => new Uint8Array(randomBytes(32)));
    const uids = await Promise.all(hotkeys.map((h) => node.registerNeuron(7, h)));
    expect(new Set(uids).size).toBe(4096);
    const pinned = (await api.rpc.chain.getBlockHash()).toHex();
    await node.registerNeuron(7, new Uint8Array(randomBytes(32)));

    const prefix = storage(api, "subtensorModule", "keys").keyPrefix(7);
    const keys: string[] = [];
    let start: string | undefined;
    for (;;) {
      const page = await api.rpc.state.getKeysPaged(prefix, 1000, start, pinned);
      if (page.length === 0) break;
      keys.push(...page.map((k) => k.toHex()));
      start = keys[keys.length - 1];
    }
    expect(keys.length).toBe(4096);
    expect([...keys].sort()).toEqual(keys);
    const pageUids = keys.map((k) => {
      const b = Buffer.from(k.slice(-4), "hex");
      return b.readUInt16LE(0);
    });
    expect(new Set(pageUids)).toEqual(new Set(uids));

    const at = await api.at(pinned);
    const entries = await storage(at, "subtensorModule", "keys").entries(7);
    expect(entries.length).toBe(4096);
    const byUid = new Map(
      entries.map(([k, v]) => [Number(k.args[1]?.toJSON()), u8aToHex(v.toU8a())]),
    );
    expect(byUid.get(uids[4095] as number)).toBe(u8aToHex(hotkeys[4095]));
    expect((await storage(api, "subtensorModule", "keys").entries(7)).length).toBe(4097);
  });

  it("calls only methods it implements (the client's own list)", async () => {
    const { methods } = (await api.rpc.rpc.methods()).toJSON() as { methods: string[] };
    const called = node.methodsCalled().filter((m) => !m.startsWith("dev_"));
    for (const method of called) expect(methods).toContain(method);
    for (const method of [
      "chain_getBlockHash",
      "state_getRuntimeVersion",
      "system_chain",
      "system_properties",
      "rpc_methods",
      "state_call",
      "chain_getHeader",
      "chain_getFinalizedHead",
      "state_getStorage",
      "author_submitAndWatchExtrinsic",
      "chain_getBlock",
      "state_getKeysPaged",
    ]) {
      expect(called).toContain(method);
    }
  });
});

describe("local subtensor dev faults", () => {
  let node: LocalSubtensor;
  let api: ApiPromise;
  let provider: WsProvider;

  beforeAll(async () => {
    node = await startLocalSubtensor({ blockMs: 100, log: quiet, runtime: "spec393" });
    provider = new WsProvider(node.url);
    api = await ApiPromise.create({ provider });
  });

  afterAll(async () => {
    await api?.disconnect();
    await node?.close();
  });

  it("stall: calls hang and no heads arrive until it ends, on an open socket", async () => {
    const heads: number[] = [];
    const unsub = await api.rpc.chain.subscribeNewHeads((h) => {
      heads.push(h.number.toNumber());
    });
    while (heads.length === 0) await new Promise((r) => setTimeout(r, 20));
    await provider.send("dev_fault", [{ kind: "stall", seconds: 3 }]);
    // Heads sent before the stall may still be on their way through the client's callbacks.
    await new Promise((r) => setTimeout(r, 200));
    const seenAtStall = heads.length;
    let answered = false;
    const call = api.rpc.chain.getHeader().then((h) => {
      answered = true;
      return h;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(answered).toBe(false);
    expect(heads.length).toBe(seenAtStall);
    expect(api.isConnected).toBe(true);
    const header = await call;
    expect(header.number.toNumber()).toBeGreaterThan(0);
    while (heads.length === seenAtStall) await new Promise((r) => setTimeout(r, 50));
    unsub();
  });

  it("close: drops the client's socket; the client reconnects and carries on", async () => {
    const disconnected = new Promise<void>((resolve) => {
      const off = provider.on("disconnected", () => {
        off();
        resolve();
      });
    });
    await provider.send("dev_fault", [{ kind: "close" }]);
    await disconnected;
    expect(api.isConnected).toBe(false);
    await new Promise<void>((resolve) => {
      const off = provider.on("connected", () => {
        off();
        resolve();
      });
    });
    await api.isReady;
    const header = await api.rpc.chain.getHeader();
    expect(header.number.toNumber()).toBeGreaterThan(0);
  });
});
