import { Keyring } from "@polkadot/keyring";
import type { KeyringPair } from "@polkadot/keyring/types";
import type { Extrinsic } from "@polkadot/types/interfaces";
import { cryptoWaitReady } from "@polkadot/util-crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { LocalChain, type TxStatus } from "./_local-chain.js";
import { PoolError } from "./_pool-error.js";
import { loadNamedRuntime } from "./_runtime.js";

const runtime = loadNamedRuntime("spec393");

function chain(seed = "test", historyBlocks = 300): LocalChain {
  return new LocalChain({
    runtime,
    finalityLag: 2,
    historyBlocks,
    tempo: 360,
    subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 0 },
    genesisSeed: new TextEncoder().encode(seed),
    poolLimit: 16,
    blockMs: 100,
  });
}

interface SignOptions {
  nonce?: number;
  /** Mortal era born at block `birth` (default: the best block) for `period` blocks. */
  birth?: number;
  period?: number;
  genesisHash?: string;
  call?: "set_weights" | "transfer";
}

// Signs offline with polkadot-js, as a client would, against the chain's current state.
function sign(c: LocalChain, pair: KeyringPair, options: SignOptions = {}): Uint8Array {
  const registry = runtime.registry;
  const method =
    options.call === "transfer"
      ? registry.createType("Call", {
          callIndex: runtime.callIndex("Balances", "transfer_keep_alive"),
          args: { dest: { Id: pair.publicKey }, value: 1 },
        })
      : registry.createType("Call", {
          callIndex: runtime.callIndex("SubtensorModule", "set_weights"),
          args: { netuid: 1, dests: [0], weights: [1], version_key: 0 },
        });
  const birth = options.birth ?? c.head().number;
  const ex = registry.createType("Extrinsic", { method }, { version: 4 }) as unknown as Extrinsic;
  ex.sign(pair, {
    blockHash: c.block(birth)?.hash ?? c.genesisHash,
    era: registry.createType("ExtrinsicEra", { current: birth, period: options.period ?? 64 }),
    genesisHash: options.genesisHash ?? c.genesisHash,
    nonce: options.nonce ?? 0,
    runtimeVersion: {
      specVersion: runtime.specVersion,
      transactionVersion: runtime.transactionVersion,
    },
    signedExtensions: registry.signedExtensions,
  } as unknown as Parameters<Extrinsic["sign"]>[1]);
  return ex.toU8a();
}

function refusal(run: () => unknown): { code: number; data: string | undefined } {
  try {
    run();
  } catch (error) {
    if (error instanceof PoolError) return { code: error.code, data: error.data };
    throw error;
  }
  throw new Error("not refused");
}

describe("local chain: blocks, pool and state", () => {
  let alice: KeyringPair;
  beforeAll(async () => {
    await cryptoWaitReady();
    alice = new Keyring({ type: "sr25519" }).addFromUri("//Alice");
  });

  it("has a genesis of its own: fixed by the seed, different per seed", () => {
    expect(chain("a").genesisHash).toBe(chain("a").genesisHash);
    expect(chain("a").genesisHash).not.toBe(chain("b").genesisHash);
  });

  it("chains blocks by parent hash and finalizes behind the head", () => {
    const c = chain();
    for (let i = 0; i < 5; i++) c.produceBlock();
    expect(c.head().number).toBe(5);
    expect(c.finalized().number).toBe(3);
    for (let n = 1; n <= 5; n++) expect(c.block(n)?.header.parentHash).toBe(c.block(n - 1)?.hash);
    expect(c.blockByHash(c.head().hash)?.number).toBe(5);
  });

  it("includes a signed set_weights, then reports inBlock and finalized", async () => {
    const c = chain();
    c.produceBlock();
    await Promise.all([
      c.registerNeuron(1, alice.publicKey, true),
      Promise.resolve(c.produceBlock()),
    ]);
    const statuses: TxStatus[] = [];
    c.submit(sign(c, alice), (s) => statuses.push(s));
    const block = c.produceBlock();
    c.produceBlock();
    c.produceBlock();
    expect(statuses).toEqual(["ready", { inBlock: block.hash }, { finalized: block.hash }]);
    expect(block.extrinsics).toHaveLength(2);
    expect(c.state.nonce(alice.publicKey)).toBe(1);
  });

  it("refuses at the pool as a node does", () => {
    const c = chain();
    for (let i = 0; i < 3; i++) c.produceBlock();
    // Signed for another chain: the genesis is part of what is signed.
    expect(
      refusal(() => c.submit(sign(c, alice, { genesisHash: `0x${"11".repeat(32)}` }))),
    ).toEqual({
      code: 1010,
      data: "Transaction has a bad signature",
    });
    // An era born at the block being built: its hash is not in System.BlockHash yet.
    const current = c.head().number + 1;
    expect(refusal(() => c.submit(sign(c, alice, { birth: current, period: 64 })))).toEqual({
      code: 1010,
      data: "Transaction has an ancient birth block",
    });
    expect(refusal(() => c.submit(sign(c, alice, { call: "transfer" })))).toEqual({
      code: 1010,
      data: "Inability to pay some fees (e.g. account balance too low)",
    });
    c.submit(sign(c, alice));
    c.produceBlock();
    expect(refusal(() => c.submit(sign(c, alice, { nonce: 0 })))).toEqual({
      code: 1010,
      data: "Transaction is outdated",
    });
  });

  it("drops a waiting transaction whose era ends, as invalid", () => {
    const c = chain();
    c.produceBlock();
    const statuses: TxStatus[] = [];
    c.submit(sign(c, alice, { nonce: 3, period: 4 }), (s) => statuses.push(s));
    for (let i = 0; i < 6; i++) c.produceBlock();
    expect(statuses).toEqual(["future", "invalid"]);
    expect(c.pending()).toHaveLength(0);
  });

  it("fails a transaction as reject_next asks, and consumes the fault", () => {
    const c = chain();
    c.produceBlock();
    c.rejectNext("DuplicateUids");
    c.submit(sign(c, alice, { nonce: 0 }));
    c.submit(sign(c, alice, { nonce: 1 }));
    expect(c.pending().map((t) => t.forced?.name)).toEqual(["DuplicateUids", undefined]);
    expect(() => c.rejectNext("NotAnError")).toThrow();
    c.rejectNext("BadProof");
    expect(refusal(() => c.submit(sign(c, alice, { nonce: 2 })))).toEqual({
      code: 1010,
      data: "Transaction has a bad signature",
    });
  });

  it("keeps state readable for the retained history only", () => {
    const c = chain("history", 256);
    const first = c.produceBlock();
    expect(c.stateAt(first.hash)).toBe(1);
    for (let i = 0; i < 300; i++) c.produceBlock();
    expect(() => c.stateAt(first.hash)).toThrow(/State already discarded/);
    expect(c.stateAt(c.block(c.head().number - 256)?.hash)).toBe(c.head().number - 256);
    expect(c.block(1)?.extrinsics).toBeNull();
  });
});
