// Test kit for the chain tests: local subtensors, clients, keys, validator databases and
// snapshots, each with its cleanup registered so a failing test still frees its ports.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  type Backend,
  createLogger,
  type Database,
  migrate,
  type WeightsSnapshot,
} from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { Keyring } from "@polkadot/api";
import type { KeyringPair } from "@polkadot/keyring/types";
import { cryptoWaitReady } from "@polkadot/util-crypto";
import { type ChainClient, type ChainClientOptions, createChainClient } from "./chain-client.js";
import {
  type LocalSubtensor,
  type LocalSubtensorDrandInfo,
  type LocalSubtensorFault,
  type LocalSubtensorHyperparameter,
  type LocalSubtensorHyperparameterValue,
  type LocalSubtensorOptions,
  type LocalSubtensorRuntime,
  type LocalSubtensorStatus,
  startLocalSubtensor,
} from "./local-subtensor/index.js";
import { validatorMigrations } from "./submission-store.js";

/** A logger that drops everything (tests assert on state, not on log lines). */
export const quiet = createLogger({ name: "chain-test", level: "error", write: () => {} });

/** A logger that keeps its lines, for tests that check what was logged. */
export function recordingLogger(): { log: typeof quiet; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    name: "chain-test",
    level: "debug",
    write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { log, lines };
}

/** Cleanups run in reverse order, each awaited, errors collected and rethrown after all ran. */
export class Cleanup {
  readonly #steps: (() => unknown)[] = [];

  add<T>(value: T, close: (value: T) => unknown): T {
    this.#steps.push(() => close(value));
    return value;
  }

  async run(): Promise<void> {
    const errors: unknown[] = [];
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  }
}

/** Starts a local subtensor (quiet, 100 ms blocks unless told) and registers its close. */
export function chainNode(
  cleanup: Cleanup,
  options: LocalSubtensorOptions = {},
): Promise<LocalSubtensor> {
  // The spec-393 runtime unless a test asks for another: the validator-side tests were written
  // against its epoch formula and block errors.
  return startLocalSubtensor({ blockMs: 100, log: quiet, runtime: "spec393", ...options }).then(
    (node) => cleanup.add(node, (n) => n.close()),
  );
}

/** A local subtensor in its own process (`_local-subtensor-process.ts`), driven over stdio. */
export interface LocalSubtensorProcess {
  url: string;
  genesisHash: string;
  drandInfo: LocalSubtensorDrandInfo;
  status(): Promise<LocalSubtensorStatus>;
  nextBlock(): Promise<{ number: number; hash: string }>;
  fault(fault: LocalSubtensorFault): Promise<void>;
  skipDrandRound(round?: number): Promise<number>;
  registerNeuron(netuid: number, hotkey: string, validatorPermit?: boolean): Promise<number>;
  setHyperparameter(
    netuid: number,
    name: LocalSubtensorHyperparameter,
    value: LocalSubtensorHyperparameterValue,
  ): Promise<void>;
  /** `dev_setStake`; resolves with the block from which the stake holds. */
  setStake(netuid: number, hotkey: string, stake: number | bigint): Promise<number>;
  /** `dev_setSubnetOwner`; resolves with the block from which the owner holds. */
  setSubnetOwner(netuid: number, hotkey: string): Promise<number>;
  deferEpoch(netuid: number, times?: number): Promise<void>;
  skipEpoch(netuid: number, times?: number): Promise<void>;
  triggerEpoch(netuid: number, at?: number): Promise<number>;
  /** `dev_upgradeRuntime`; resolves with the block whose state holds the new runtime. */
  upgradeRuntime(runtime?: LocalSubtensorRuntime): Promise<number>;
  close(): Promise<void>;
}

/**
 * Starts a local subtensor in a child process (its blocks keep their pace whatever this
 * process is busy with) and registers its stop. The options must be JSON (no logger).
 */
export async function chainNodeProcess(
  cleanup: Cleanup,
  options: Omit<LocalSubtensorOptions, "log"> = {},
): Promise<LocalSubtensorProcess> {
  // tsx's loader by absolute URL, and the sources through the `@platform/source` condition.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const entry = fileURLToPath(new URL("./_local-subtensor-process.ts", import.meta.url));
  const child = spawn(
    process.execPath,
    [
      "--conditions=@platform/source",
      "--import",
      tsx,
      entry,
      JSON.stringify({ blockMs: 100, runtime: "spec393", ...options }),
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let ready: (value: { url: string; genesisHash: string; drand: LocalSubtensorDrandInfo }) => void;
  const started = new Promise<{ url: string; genesisHash: string; drand: LocalSubtensorDrandInfo }>(
    (resolve, reject) => {
      ready = resolve;
      child.once("exit", (code) => reject(new Error(`the local subtensor exited (${code})`)));
    },
  );
  createInterface({ input: child.stdout }).on("line", (line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return; // not the protocol's
    }
    const message = parsed as {
      ready?: { url: string; genesisHash: string; drand: LocalSubtensorDrandInfo };
      id?: number;
      result?: unknown;
      error?: string;
    };
    if (message.ready) return ready(message.ready);
    const call = pending.get(message.id as number);
    pending.delete(message.id as number);
    if (message.error !== undefined) call?.reject(new Error(message.error));
    else call?.resolve(message.result);
  });
  let next = 0;
  const rpc = <T>(method: string, ...params: unknown[]): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  const close = async () => {
    child.stdin.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
  };
  cleanup.add(child, close);
  const info = await started;
  return {
    url: info.url,
    genesisHash: info.genesisHash,
    drandInfo: info.drand,
    status: () => rpc("status"),
    nextBlock: () => rpc("nextBlock"),
    fault: (fault) => rpc("fault", fault),
    skipDrandRound: (round) => rpc("skipDrandRound", round),
    registerNeuron: (netuid, hotkey, permit) => rpc("registerNeuron", netuid, hotkey, permit),
    setHyperparameter: (netuid, name, value) =>
      rpc("setHyperparameter", netuid, name, typeof value === "bigint" ? value.toString() : value),
    setStake: (netuid, hotkey, stake) => rpc("setStake", netuid, hotkey, stake.toString()),
    setSubnetOwner: (netuid, hotkey) => rpc("setSubnetOwner", netuid, hotkey),
    deferEpoch: (netuid, times) => rpc("deferEpoch", netuid, times),
    skipEpoch: (netuid, times) => rpc("skipEpoch", netuid, times),
    triggerEpoch: (netuid, at) => rpc("triggerEpoch", netuid, at),
    upgradeRuntime: (runtime) => rpc("upgradeRuntime", runtime),
    close,
  };
}

/** A chain client on `endpoints`, block time and timeouts scaled to a test chain. */
export function chainClient(
  cleanup: Cleanup,
  endpoints: string[],
  options: Partial<ChainClientOptions> = {},
): ChainClient {
  return cleanup.add(
    createChainClient({
      endpoints,
      blockTimeMs: 100,
      staleHeadBlocks: 10,
      callTimeoutMs: 5_000,
      log: quiet,
      ...options,
    }),
    (c) => c.close(),
  );
}

/** sr25519 dev keys (`//Alice`...), SS58 prefix 42. */
export async function devKeys(): Promise<
  Record<"alice" | "bob" | "charlie" | "dave" | "eve" | "ferdie", KeyringPair>
> {
  await cryptoWaitReady();
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  const uri = (name: string) => keyring.addFromUri(`//${name}`);
  return {
    alice: uri("Alice"),
    bob: uri("Bob"),
    charlie: uri("Charlie"),
    dave: uri("Dave"),
    eve: uri("Eve"),
    ferdie: uri("Ferdie"),
  };
}

/** A fresh database with the validator's migrations applied (as a standalone validator does). */
export async function validatorDatabase(cleanup: Cleanup, backend: Backend): Promise<Database> {
  const db = await createTestDatabase({ backend });
  cleanup.add(db, (d) => d.close());
  await migrate(db.sql, { namespace: "validator", migrations: await validatorMigrations() });
  return db;
}

/**
 * The one backend the chain suites run their database on: PostgreSQL when the test server
 * answers (seconds faster to create), else the embedded PGlite. The store's own suite runs on
 * both; these suites are about the chain.
 */
export async function chainTestBackend(): Promise<Backend> {
  const backends = await testBackends();
  return backends.includes("postgres") ? "postgres" : "pglite";
}

/** A snapshot paying `hotkeys` (fractions of the vector; the rest burned). */
export function snapshotOf(hotkeys: Record<string, number>, id = 1): WeightsSnapshot {
  const paid = Object.values(hotkeys).reduce((a, b) => a + b, 0);
  return {
    id,
    computed_at: new Date(0).toISOString(),
    uids: [],
    weights: [],
    weights_u16: [],
    hotkeys,
    burned: paid === 0,
    sources: [],
  };
}

/** Waits until `predicate` holds, polling every 20 ms, failing after `ms`. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A seeded pseudo-random generator (mulberry32) returning numbers in [0, 1): a test that
 * injects faults at random takes its seed from the environment so a failure reproduces.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Waits until everything the node holds now is final: a validator reads the subnet at the
 * finalized block, so registrations made in setup must be final before it runs (under load the
 * first read can otherwise come before them).
 */
export async function untilFinal(node: LocalSubtensor): Promise<void> {
  const head = node.status().head.number;
  while (node.status().finalized.number < head) await node.nextBlock();
}
