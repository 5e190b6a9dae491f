import { randomBytes } from "node:crypto";
import { createLogger } from "@platform/core";
import { ApiPromise, WsProvider } from "@polkadot/api";
import type {
  ApiDecoration,
  QueryableStorageEntry,
  SubmittableExtrinsic,
} from "@polkadot/api/types";
import { Keyring } from "@polkadot/keyring";
import type { KeyringPair } from "@polkadot/keyring/types";
import type { EventRecord, Extrinsic } from "@polkadot/types/interfaces";
import type { ISubmittableResult } from "@polkadot/types/types";
import { hexToU8a, u8aToHex } from "@polkadot/util";
import { blake2AsHex, blake2AsU8a, cryptoWaitReady } from "@polkadot/util-crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRAND_QUICKNET, verifyRoundSignature } from "../drand-beacon.js";
import { epochIndex } from "../rules/epoch.js";
import { timelockEncrypt } from "../timelock.js";
import { encodeWeightsTlockPayload, revealRound } from "../weights-tlock-payload.js";
import { LocalChain, type TxStatus } from "./_local-chain.js";
import { PoolError } from "./_pool-error.js";
import { concatBytes, loadNamedRuntime } from "./_runtime.js";
import { type LocalSubtensor, startLocalSubtensor } from "./local-subtensor.js";

const runtime = loadNamedRuntime("spec393");

// Genesis half a period past round 1,000,000's start: block n stores rounds up to
// 1,000,001 + 4n (12 simulated seconds a block, a round every 3).
const GENESIS_MS = (DRAND_QUICKNET.genesisTime + 3_000_000) * 1000 + 1500;
const roundStoredAt = (block: number) => 1_000_001n + 4n * BigInt(block);

// Subnet 1 with tempo 9: epoch index floor((block + 2) / 10), so epochs start at blocks 8, 18,
// 28, ... and blocks 7, 17, 27, ... run the epoch (a commit there counts for the next one).

function chain(lines: string[] = []): LocalChain {
  return new LocalChain({
    runtime,
    finalityLag: 1,
    historyBlocks: 300,
    tempo: 9,
    subnetDefaults: { CommitRevealWeightsEnabled: true, WeightsSetRateLimit: 0 },
    genesisSeed: new TextEncoder().encode("timelocked-commits"),
    poolLimit: 64,
    blockMs: 100,
    simulatedBlockMs: 12_000,
    genesisTimestamp: GENESIS_MS,
    log: createLogger({ name: "t", level: "debug", write: (line) => lines.push(line) }),
  });
}

function until(c: LocalChain, head: number): void {
  while (c.head().number < head) c.produceBlock();
}

interface CommitOptions {
  round: bigint;
  netuid?: number;
  version?: number;
  nonce?: number;
  uids?: number[];
  values?: number[];
  versionKey?: number;
  /** The payload's hotkey (default the signer's). */
  hotkey?: Uint8Array;
  /** The exact commit bytes (default: the payload encrypted to the chain's beacon). */
  commit?: Uint8Array;
}

// Signs offline with polkadot-js against the chain's best block, as a client would.
function commitTx(c: LocalChain, pair: KeyringPair, o: CommitOptions): Uint8Array {
  const payload = encodeWeightsTlockPayload({
    hotkey: o.hotkey ?? pair.publicKey,
    uids: o.uids ?? [0, 1],
    values: o.values ?? [1, 3],
    versionKey: o.versionKey ?? 0,
  });
  const commit = o.commit ?? timelockEncrypt(payload, o.round, c.beacon.publicKey);
  const registry = runtime.registry;
  const method = registry.createType("Call", {
    callIndex: runtime.callIndex("SubtensorModule", "commit_timelocked_weights"),
    args: {
      netuid: o.netuid ?? 1,
      commit: u8aToHex(commit),
      reveal_round: o.round,
      commit_reveal_version: o.version ?? 4,
    },
  });
  const ex = registry.createType("Extrinsic", { method }, { version: 4 }) as unknown as Extrinsic;
  const birth = c.head().number;
  ex.sign(pair, {
    blockHash: c.block(birth)?.hash,
    era: registry.createType("ExtrinsicEra", { current: birth, period: 64 }),
    genesisHash: c.genesisHash,
    nonce: o.nonce ?? c.nextIndex(pair.publicKey),
    runtimeVersion: {
      specVersion: runtime.specVersion,
      transactionVersion: runtime.transactionVersion,
    },
    signedExtensions: registry.signedExtensions,
  } as unknown as Parameters<Extrinsic["sign"]>[1]);
  return ex.toU8a();
}

/** `section.Method` of every event in block `n`, with its phase. */
function events(c: LocalChain, n: number): { name: string; phase: string; data: unknown }[] {
  const raw = c.store.get(c.state.key("System", "Events"), n);
  if (raw === null) return [];
  const records = runtime.registry.createType("Vec<EventRecord>", raw) as unknown as EventRecord[];
  return records.map((r) => ({
    name: `${r.event.section}.${r.event.method}`,
    phase: r.phase.type,
    data: r.event.data.toJSON(),
  }));
}

const names = (c: LocalChain, n: number) => events(c, n).map((e) => e.name);

describe("timelocked commits on the local chain (in process)", () => {
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  let alice: KeyringPair;
  let bob: KeyringPair;

  beforeAll(async () => {
    await cryptoWaitReady();
    alice = keyring.addFromUri("//Alice");
    bob = keyring.addFromUri("//Bob");
  });

  async function withNeurons(lines: string[] = []): Promise<LocalChain> {
    const c = chain(lines);
    const registered = Promise.all([
      c.registerNeuron(1, alice.publicKey, true),
      c.registerNeuron(1, bob.publicKey, true),
    ]);
    c.produceBlock();
    await registered;
    return c;
  }

  it("stores a commit under its block's epoch, or the next one at the block that runs the epoch", async () => {
    const c = await withNeurons();
    until(c, 15);
    c.submit(commitTx(c, alice, { round: roundStoredAt(40) }));
    const at16 = c.produceBlock();
    // Block 17 runs subnet 1's epoch: its commits belong to epoch 2.
    c.submit(commitTx(c, bob, { round: roundStoredAt(40) }));
    c.produceBlock();
    expect(c.state.timelockedCommitEpochs(1)).toEqual([1, 2]);
    const [stored] = c.state.timelockedCommits(1, 1);
    expect(stored?.who).toEqual(alice.publicKey);
    expect(stored?.commitBlock).toBe(16n);
    expect(stored?.revealRound).toBe(roundStoredAt(40));
    expect(c.state.timelockedCommits(1, 2).map((x) => x.who)).toEqual([bob.publicKey]);
    const committed = events(c, 16).find(
      (e) => e.name === "subtensorModule.TimelockedWeightsCommitted",
    );
    expect(committed?.data).toEqual([
      alice.address,
      1,
      u8aToHex(blake2AsU8a(stored?.commit as Uint8Array)),
      Number(roundStoredAt(40)),
    ]);
    // The commit moved LastUpdate, as set_weights would.
    expect(c.state.lastUpdate(1, 0)).toBe(16n);
    expect(at16.number).toBe(16);
  });

  it("reveals at the first block of the reveal epoch when the pulse is there, else the block after it lands", async () => {
    const lines: string[] = [];
    const c = await withNeurons(lines);
    until(c, 10);
    // Stored by block 11, the inclusion block: ready when epoch 2 opens at block 18.
    c.submit(commitTx(c, alice, { round: roundStoredAt(11), uids: [0, 1], values: [1, 3] }));
    // Stored at block 20: revealed at block 21.
    c.submit(commitTx(c, bob, { round: roundStoredAt(20), uids: [1], values: [9] }));
    c.produceBlock();
    expect(c.state.timelockedCommitEpochs(1)).toEqual([1]);
    until(c, 17);
    expect(c.state.read("SubtensorModule", "Weights", [1, 0]).toJSON()).toEqual([]);
    until(c, 18);
    expect(events(c, 18).slice(0, 2)).toEqual([
      { name: "subtensorModule.WeightsSet", phase: "Initialization", data: [1, 0] },
      {
        name: "subtensorModule.TimelockedWeightsRevealed",
        phase: "Initialization",
        data: [1, alice.address],
      },
    ]);
    // Max-upscaled as set_weights stores them.
    expect(c.state.read("SubtensorModule", "Weights", [1, 0]).toJSON()).toEqual([
      [0, 21845],
      [1, 65535],
    ]);
    // Under commit-reveal the reveal leaves LastUpdate where the commit put it.
    expect(c.state.lastUpdate(1, 0)).toBe(11n);
    expect(c.state.timelockedCommits(1, 1).map((x) => x.who)).toEqual([bob.publicKey]);
    until(c, 20);
    expect(names(c, 19)).not.toContain("subtensorModule.TimelockedWeightsRevealed");
    expect(names(c, 20)).not.toContain("subtensorModule.TimelockedWeightsRevealed");
    until(c, 21);
    expect(names(c, 21)).toContain("subtensorModule.TimelockedWeightsRevealed");
    expect(c.state.read("SubtensorModule", "Weights", [1, 1]).toJSON()).toEqual([[1, 65535]]);
    expect(c.state.timelockedCommitEpochs(1)).toEqual([]);
    expect(lines.some((l) => l.includes("waits for its drand round"))).toBe(true);
  });

  it("drops a commit whose pulse comes after its reveal epoch, and one to a skipped round, when the epoch ends", async () => {
    const lines: string[] = [];
    const c = await withNeurons(lines);
    until(c, 10);
    const skipped = c.skipDrandRound(roundStoredAt(15));
    expect(skipped).toBe(roundStoredAt(15));
    c.submit(commitTx(c, alice, { round: skipped }));
    c.submit(commitTx(c, bob, { round: roundStoredAt(28) }));
    c.produceBlock();
    until(c, 27);
    expect(c.state.hasPulse(skipped)).toBe(false);
    expect(c.state.hasPulse(skipped - 1n)).toBe(true);
    expect(c.state.timelockedCommits(1, 1)).toHaveLength(2);
    until(c, 28);
    expect(c.state.timelockedCommitEpochs(1)).toEqual([]);
    for (let n = 11; n <= 28; n++) {
      expect(names(c, n)).not.toContain("subtensorModule.TimelockedWeightsRevealed");
    }
    const expired = lines.filter((l) => l.includes("expired unrevealed"));
    expect(expired).toHaveLength(2);
    expect(expired[0]).toContain(alice.address);
    expect(() => c.skipDrandRound(roundStoredAt(28))).toThrow(/already stored/);
    // Without a round: the next one not yet stored.
    expect(c.skipDrandRound()).toBe(roundStoredAt(28) + 1n);
  });

  it("reveals RevealPeriodEpochs later, with the tempo and flags the chain has at reveal time", async () => {
    const c = await withNeurons();
    await Promise.all([
      c.setHyperparameter(1, "RevealPeriodEpochs", 2),
      Promise.resolve(c.produceBlock()),
    ]);
    until(c, 10);
    c.submit(commitTx(c, alice, { round: roundStoredAt(11) }));
    c.produceBlock();
    until(c, 27);
    for (let n = 12; n <= 27; n++) {
      expect(names(c, n)).not.toContain("subtensorModule.TimelockedWeightsRevealed");
    }
    until(c, 28);
    expect(names(c, 28)).toContain("subtensorModule.TimelockedWeightsRevealed");

    // Commit-reveal turned off between commit and reveal: the reveal is then rate limited and
    // moves LastUpdate, as internal_set_weights does without commit-reveal.
    until(c, 30);
    c.submit(commitTx(c, bob, { round: roundStoredAt(31), uids: [1], values: [1] }));
    c.produceBlock();
    await Promise.all([
      c.setHyperparameter(1, "CommitRevealWeightsEnabled", false),
      Promise.resolve(c.produceBlock()),
    ]);
    until(c, 48);
    expect(names(c, 48)).toContain("subtensorModule.TimelockedWeightsRevealed");
    expect(c.state.lastUpdate(1, 1)).toBe(48n);
  });

  it("refuses at the pool what the chain refuses: a passed round (Custom 15), an oversized commit", async () => {
    const c = await withNeurons();
    until(c, 3);
    const last = c.state.lastStoredRound();
    expect(last).toBe(roundStoredAt(3));
    const refusal = (bytes: Uint8Array) => {
      try {
        c.submit(bytes);
      } catch (error) {
        if (error instanceof PoolError) return `${error.code} ${error.data ?? error.message}`;
        throw error;
      }
      return "accepted";
    };
    expect(refusal(commitTx(c, alice, { round: last - 1n }))).toBe("1010 Custom error: 15");
    expect(refusal(commitTx(c, alice, { round: last, commit: new Uint8Array(5001) }))).toMatch(
      /^1001 Extrinsic has invalid format: commit is longer than 5000 bytes/,
    );
    // Valid at the pool, stale once the next block has stored its pulses: the block leaves it
    // out and the pool drops it, as a block builder does with a transaction turned invalid.
    const statuses: TxStatus[] = [];
    c.submit(commitTx(c, alice, { round: last + 1n }), (s) => statuses.push(s));
    const next = c.produceBlock();
    expect(statuses).toEqual(["ready", "invalid"]);
    expect(next.extrinsics).toHaveLength(1);
    expect(c.state.nonce(alice.publicKey)).toBe(0);
  });
});

// ---- through the real client ----

type Tx = SubmittableExtrinsic<"promise">;
type At = ApiPromise | ApiDecoration<"promise">;

function query(at: At, pallet: string, item: string): QueryableStorageEntry<"promise"> {
  const entry = at.query[pallet]?.[item];
  if (!entry) throw new Error(`no storage ${pallet}.${item}`);
  return entry;
}
const read = async (at: At, item: string, ...args: unknown[]) =>
  (await query(at, "subtensorModule", item)(...args)).toJSON();

interface Outcome {
  block: string;
  events: { name: string; data: unknown }[];
  error?: string;
}

// Signs and sends; resolves once the transaction is in a block (rejects on a pool refusal).
// InBlock or Finalized, whichever the client reports first: it drops the InBlock result when
// Finalized arrives while it is still fetching that block's events (a switchMap).
function send(api: ApiPromise, tx: Tx, signer: KeyringPair, nonce?: number): Promise<Outcome> {
  return new Promise<Outcome>((resolve, reject) => {
    let unsub: (() => void) | undefined;
    let done = false;
    const onStatus = (result: ISubmittableResult) => {
      if (result.status.isInBlock || result.status.isFinalized) {
        done = true;
        unsub?.();
        const outcome: Outcome = {
          block: (result.status.isInBlock
            ? result.status.asInBlock
            : result.status.asFinalized
          ).toHex(),
          events: result.events.map(({ event }) => ({
            name: `${event.section}.${event.method}`,
            data: event.data.toJSON(),
          })),
        };
        if (result.dispatchError?.isModule) {
          const meta = api.registry.findMetaError(result.dispatchError.asModule);
          outcome.error = meta.name;
        }
        resolve(outcome);
      } else if (result.status.isInvalid || result.status.isDropped) {
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

// LegacyWeightsTlockPayload {uids, values, version_key}: what pre-v4 clients encrypted.
function legacyPayload(uids: number[], values: number[], versionKey: bigint): Uint8Array {
  const u16s = (list: number[]) => [list.length << 2, ...list.flatMap((v) => [v & 0xff, v >> 8])];
  const key = new Uint8Array(8);
  new DataView(key.buffer).setBigUint64(0, versionKey, true);
  return concatBytes([Uint8Array.from([...u16s(uids), ...u16s(values)]), key]);
}

// Subnet 1's tempo here: 20 blocks (2 s) an epoch, so a commit sent at an epoch's start has
// seconds to spare before its round is stored, even on a busy machine.
const TEMPO = 19;

describe("commit-reveal v4 through @polkadot/api", () => {
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  const lines: string[] = [];
  let node: LocalSubtensor;
  let api: ApiPromise;
  let provider: WsProvider;
  let pairs: Record<"alice" | "bob" | "charlie" | "dave" | "eve" | "ferdie", KeyringPair>;
  const commit = (netuid: number, bytes: Uint8Array, round: bigint | number, version = 4): Tx => {
    const call = api.tx.subtensorModule?.commitTimelockedWeights;
    if (!call) throw new Error("no subtensorModule.commitTimelockedWeights");
    return call(netuid, u8aToHex(bytes), round, version);
  };

  beforeAll(async () => {
    await cryptoWaitReady();
    node = await startLocalSubtensor({
      blockMs: 100,
      finalityLag: 1,
      tempo: TEMPO,
      genesisSeed: "commit-reveal-through-the-api",
      subnetDefaults: { CommitRevealWeightsEnabled: true, WeightsSetRateLimit: 0 },
      log: createLogger({ name: "t", level: "debug", write: (line) => lines.push(line) }),
    });
    provider = new WsProvider(node.url);
    api = await ApiPromise.create({ provider, noInitWarn: true });
    pairs = {
      alice: keyring.addFromUri("//Alice"),
      bob: keyring.addFromUri("//Bob"),
      charlie: keyring.addFromUri("//Charlie"),
      dave: keyring.addFromUri("//Dave"),
      eve: keyring.addFromUri("//Eve"),
      ferdie: keyring.addFromUri("//Ferdie"),
    };
    // Subnet 1 (uids in this order, all validators); 2, 3, 4 hold alice only.
    for (const pair of Object.values(pairs)) await node.registerNeuron(1, pair.address, true);
    await Promise.all(
      [2, 3, 4].map((netuid) => node.registerNeuron(netuid, pairs.alice.address, true)),
    );
    await Promise.all([
      node.setHyperparameter(1, "WeightsVersionKey", 5),
      node.setHyperparameter(2, "CommitRevealWeightsEnabled", false),
      node.setHyperparameter(3, "WeightsSetRateLimit", 1000),
      node.setHyperparameter(4, "Tempo", 1000),
    ]);
  });

  afterAll(async () => {
    await api?.disconnect();
    await node?.close();
  });

  it("commits, then reveals in the reveal epoch; drops a foreign hotkey, another beacon's key, a skipped round and a stale version key without an event", async () => {
    const info = (await provider.send("dev_drandInfo", [])) as {
      public_key: string;
      genesis_time: number;
      period: number;
    };
    expect(info).toEqual(node.drandInfo());
    const key = hexToU8a(`0x${info.public_key}`);
    const config = (await query(api, "drand", "beaconConfig")()).toJSON() as { publicKey: string };
    expect(config.publicKey).toBe(`0x${info.public_key}`);
    expect(await read(api, "commitRevealWeightsVersion")).toBe(4);

    // The reveal round as bittensor-drand computes it, on the chain's own clock, at the start of
    // an epoch (the latest point would leave 4 blocks before the round is stored).
    let head = await api.rpc.chain.getHeader();
    while (
      epochIndex(1, TEMPO, head.number.toNumber() - 1) ===
      epochIndex(1, TEMPO, head.number.toNumber())
    ) {
      await new Promise((r) => setTimeout(r, 20));
      head = await api.rpc.chain.getHeader();
    }
    const at = await api.at(head.hash);
    const nowMs = Number((await query(at, "timestamp", "now")()).toString());
    const round = BigInt(
      revealRound({
        currentBlock: head.number.toNumber(),
        netuid: 1,
        tempo: (await read(at, "tempo", 1)) as number,
        revealPeriodEpochs: (await read(at, "revealPeriodEpochs", 1)) as number,
        blockTimeSeconds: 12,
        nowSeconds: nowMs / 1000,
        genesisTime: info.genesis_time,
        period: info.period,
      }),
    );
    expect(await provider.send("dev_skipDrandRound", [Number(round + 1n)])).toBe(
      Number(round + 1n),
    );

    const { alice, bob, charlie, dave, eve, ferdie } = pairs;
    const payload = (pair: KeyringPair, versionKey = 5, hotkey = pair.publicKey) =>
      encodeWeightsTlockPayload({ hotkey, uids: [0, 1, 2], values: [10, 20, 40], versionKey });
    const quicknet = hexToU8a(`0x${DRAND_QUICKNET.publicKeyHex}`);
    const commits: [KeyringPair, Uint8Array, bigint][] = [
      [alice, timelockEncrypt(payload(alice), round, key), round],
      [bob, timelockEncrypt(payload(bob, 5, charlie.publicKey), round, key), round],
      [charlie, timelockEncrypt(payload(charlie), round, quicknet), round],
      [dave, timelockEncrypt(payload(dave), round + 1n, key), round + 1n],
      [eve, timelockEncrypt(payload(eve, 4), round, key), round],
      [ferdie, timelockEncrypt(legacyPayload([3, 4], [1, 2], 5n), round, key), round],
    ];
    const outcomes = await Promise.all(
      commits.map(([pair, bytes, r]) => send(api, commit(1, bytes, r), pair)),
    );
    outcomes.forEach((o, i) => {
      const [pair, bytes, r] = commits[i] as [KeyringPair, Uint8Array, bigint];
      expect(o.error).toBeUndefined();
      expect(o.events).toEqual([
        {
          name: "subtensorModule.TimelockedWeightsCommitted",
          data: [pair.address, 1, blake2AsHex(bytes), Number(r)],
        },
        { name: "transactionPayment.TransactionFeePaid", data: expect.anything() },
        { name: "system.ExtrinsicSuccess", data: expect.anything() },
      ]);
    });

    // Stored under (netuid index, epoch) with the metadata's hashers: the client's own
    // `entries` finds them, and LastUpdate moved to the commit's block.
    const alicesBlock = await api.rpc.chain.getHeader(outcomes[0]?.block);
    const atCommit = await api.at(alicesBlock.hash);
    const entries = await query(atCommit, "subtensorModule", "timelockedWeightCommits").entries(1);
    const stored = entries.flatMap(([k, v]) =>
      (v.toJSON() as [string, number, string, number][]).map((c) => ({
        epoch: Number(k.args[1]?.toString()),
        c,
      })),
    );
    const mine = stored.find(({ c }) => c[0] === alice.address);
    expect(mine?.c).toEqual([
      alice.address,
      alicesBlock.number.toNumber(),
      u8aToHex(commits[0]?.[1]),
      Number(round),
    ]);
    expect(((await read(atCommit, "lastUpdate", 1)) as number[])[0]).toBe(
      alicesBlock.number.toNumber(),
    );
    const epoch = mine?.epoch as number;

    // Every block's events until the commits are gone (the skipped one expires an epoch later).
    const seen: { block: number; name: string; phase: string; data: unknown }[] = [];
    let next = alicesBlock.number.toNumber() + 1;
    for (let i = 0; ; i++) {
      const best = (await api.rpc.chain.getHeader()).number.toNumber();
      for (; next <= best; next++) {
        // `.at(hash)` on the entry, not `api.at`: that one decorates the whole metadata per block.
        const hash = await api.rpc.chain.getBlockHash(next);
        const records = (await query(api, "system", "events").at(hash)) as unknown as EventRecord[];
        for (const r of records) {
          seen.push({
            block: next,
            name: `${r.event.section}.${r.event.method}`,
            phase: r.phase.type,
            data: r.event.data.toJSON(),
          });
        }
      }
      if ((await query(api, "subtensorModule", "timelockedWeightCommits").entries(1)).length === 0)
        break;
      if (i === 300) throw new Error("the commits never left storage");
      await new Promise((r) => setTimeout(r, 100));
    }
    const revealed = seen.filter((e) => e.name === "subtensorModule.TimelockedWeightsRevealed");
    expect(revealed.map((e) => e.data)).toEqual([
      [1, alice.address],
      [1, ferdie.address],
    ]);
    expect(revealed.every((e) => e.phase === "Initialization")).toBe(true);
    const revealBlock = revealed[0]?.block as number;
    expect(epochIndex(1, TEMPO, revealBlock)).toBe(epoch + 1);
    expect(seen.filter((e) => e.name === "subtensorModule.WeightsSet").map((e) => e.data)).toEqual([
      [1, 0],
      [1, 5],
    ]);

    // The weights as committed, max-upscaled; nothing for the dropped commits.
    const atReveal = await api.at(await api.rpc.chain.getBlockHash(revealBlock));
    expect(await read(atReveal, "weights", 1, 0)).toEqual([
      [0, 16384],
      [1, 32768],
      [2, 65535],
    ]);
    expect(await read(atReveal, "weights", 1, 5)).toEqual([
      [3, 32768],
      [4, 65535],
    ]);
    for (const uid of [1, 2, 3, 4]) expect(await read(api, "weights", 1, uid)).toEqual([]);

    // The pulse that opened them is the beacon's signature of the round; the skipped one never came.
    const pulse = (await query(atReveal, "drand", "pulses")(round)).toJSON() as {
      signature: string;
    };
    expect(verifyRoundSignature(key, round, hexToU8a(pulse.signature))).toBe(true);
    expect((await query(api, "drand", "pulses")(round + 1n)).isEmpty).toBe(true);
    expect(BigInt(String(await query(api, "drand", "lastStoredRound")()))).toBeGreaterThan(
      round + 1n,
    );

    // Each drop is in the chain's log, and only there.
    const log = (who: KeyringPair) => lines.filter((l) => l.includes(who.address)).join("\n");
    expect(log(bob)).toContain("hotkey mismatch in payload");
    expect(log(charlie)).toContain("could not decrypt the commit (decryption-failed)");
    expect(log(eve)).toContain("IncorrectWeightVersionKey");
    expect(log(dave)).toContain("expired unrevealed");
  }, 90_000);

  it("fails each refused commit with the chain's error, and refuses a passed round at the pool", async () => {
    const { alice, bob } = pairs;
    const stranger = keyring.addFromUri("//Stranger");
    const last = BigInt(String(await query(api, "drand", "lastStoredRound")()));
    const round = last + 1000n;
    const bytes = new Uint8Array(randomBytes(303));
    const cases: [string, Tx, KeyringPair][] = [
      ["MechanismDoesNotExist", commit(77, bytes, round), alice],
      ["CommitRevealDisabled", commit(2, bytes, round), alice],
      ["IncorrectCommitRevealVersion", commit(1, bytes, round, 3), alice],
      ["HotKeyNotRegisteredInSubNet", commit(1, bytes, round), stranger],
      ["CommittingWeightsTooFast", commit(3, bytes, round), alice],
      ["CommitRevealEnabled", api.tx.subtensorModule?.setWeights?.(1, [0], [1], 5) as Tx, bob],
    ];
    // Ten commits of one hotkey fit in an epoch; the eleventh does not.
    for (let i = 0; i < 10; i++) cases.push(["", commit(4, bytes, round), alice]);
    cases.push(["TooManyUnrevealedCommits", commit(4, bytes, round), alice]);
    const next = new Map<string, number>();
    for (const pair of [alice, bob, stranger]) {
      next.set(pair.address, (await api.rpc.system.accountNextIndex(pair.address)).toNumber());
    }
    const outcomes = await Promise.all(
      cases.map(([, tx, signer]) => {
        const nonce = next.get(signer.address) as number;
        next.set(signer.address, nonce + 1);
        return send(api, tx, signer, nonce);
      }),
    );
    expect(outcomes.map((o) => o.error ?? "")).toEqual(cases.map(([name]) => name));

    const stale = commit(1, bytes, last - 1n);
    await stale.signAsync(bob);
    await expect(api.rpc.author.submitExtrinsic(stale.toHex())).rejects.toThrow(
      /1010: Invalid Transaction: Custom error: 15/,
    );
  }, 90_000);
});
