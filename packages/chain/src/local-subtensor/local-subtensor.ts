import { createLogger, type Logger } from "@platform/core";
import { cryptoWaitReady, decodeAddress } from "@polkadot/util-crypto";
import { routePolkadotConsole } from "../polkadot-console.js";
import {
  type HyperparameterName,
  type HyperparameterValue,
  hyperparameterValue,
} from "./_chain-state.js";
import { LocalBeacon } from "./_local-beacon.js";
import { type BlockRecord, LocalChain } from "./_local-chain.js";
import {
  chainStatus,
  type LocalSubtensorDrandInfo,
  type LocalSubtensorFault,
  type LocalSubtensorStatus,
  roundParam,
  rpcMethods,
  stakeParam,
} from "./_rpc-methods.js";
import { startRpcServer } from "./_rpc-server.js";
import {
  DEFAULT_RUNTIME,
  loadNamedRuntime,
  loadRuntime,
  RUNTIME_FILES,
  type RuntimeName,
  runtimeName,
} from "./_runtime.js";

/** Options of `startLocalSubtensor`. */
// The names an index may re-export (internal files never are): the hyperparameters a dev call
// sets, and the shapes of the dev methods' answers.
export {
  HYPERPARAMETERS as LOCAL_SUBTENSOR_HYPERPARAMETERS,
  type HyperparameterName as LocalSubtensorHyperparameter,
  type HyperparameterValue as LocalSubtensorHyperparameterValue,
} from "./_chain-state.js";
export type {
  LocalSubtensorDrandInfo,
  LocalSubtensorFault,
  LocalSubtensorStatus,
} from "./_rpc-methods.js";

/** The finney runtimes the local subtensor serves: spec 393 (the formula), spec 424 (the counter). */
export type LocalSubtensorRuntime = RuntimeName;

/** Every runtime it serves, the default (spec 424, finney's current epoch model) first. */
export const LOCAL_SUBTENSOR_RUNTIMES: readonly LocalSubtensorRuntime[] = [
  DEFAULT_RUNTIME,
  ...(Object.keys(RUNTIME_FILES) as LocalSubtensorRuntime[]).filter((n) => n !== DEFAULT_RUNTIME),
];

export interface LocalSubtensorOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Milliseconds between blocks; default 250 (finney: 12,000). */
  blockMs?: number;
  /**
   * Simulated milliseconds per block; default 12,000 (finney's block time). The chain's clock is
   * simulated: `Timestamp.Now` of block n is the genesis timestamp (the wall clock at start) plus
   * n times this, whatever `blockMs` is, and the drand beacon publishes a round every 3 s of that
   * clock (4 a block by default). A client computing a reveal round takes `now` from the best
   * block's `Timestamp.Now` and this as the block time; with fast blocks the wall clock is wrong.
   */
  simulatedBlockMs?: number;
  /**
   * Seeds the local drand beacon's BLS key (any string). Default: derived from `genesisSeed`
   * when given (so a deterministic chain has a deterministic beacon), random otherwise.
   */
  drandSeed?: string;
  /** Blocks between the best and the finalized block; default 2. */
  finalityLag?: number;
  /** Tempo of the subnets `dev_registerNeuron` creates; default 360 (finney's default). */
  tempo?: number;
  /** Hyperparameters every new subnet starts with (otherwise finney's defaults). */
  subnetDefaults?: Partial<Record<HyperparameterName, HyperparameterValue>>;
  /** Blocks whose state and bodies stay readable; default 1,024. */
  historyBlocks?: number;
  /** Makes the genesis hash deterministic (any string); random per start when omitted. */
  genesisSeed?: string;
  /** Transactions the pool holds at most; default 8,192. */
  poolLimit?: number;
  /**
   * The runtime it serves (default `spec424`, the current model): `spec424` numbers epochs with
   * the `SubnetEpochIndex` counter (period `tempo`, deferrals, skips), refuses a low stake and a
   * rate-limited `set_weights` at the pool (`1010`, `Custom(1)` / `Custom(6)`), exempts the
   * subnet owner's hotkey from the validator permit and the stake, and stores drand pulses by
   * an unsigned `write_pulse` in the next block. `spec393` keeps the block-number formula,
   * block errors and pulses stored at block initialization. `dev_upgradeRuntime` moves a
   * running spec-393 chain to spec 424.
   */
  runtime?: LocalSubtensorRuntime;
  /** Path of a runtime metadata file to serve instead of `runtime`'s (finney V16 metadata). */
  metadataPath?: string;
  /**
   * Where startup, faults and failures are logged, and commits the chain drops at reveal time
   * (finney only logs those too); default a `local-subtensor` logger.
   */
  log?: Logger;
}

/** A running local subtensor. */
export interface LocalSubtensor {
  /** `ws://host:port`, for `new WsProvider(url)`. */
  url: string;
  port: number;
  /** 0x-hex genesis hash: this chain's own, never finney's. */
  genesisHash: string;
  /** `dev_registerNeuron` in process: resolves with the uid once the next block holds it. */
  registerNeuron(
    netuid: number,
    hotkey: string | Uint8Array,
    validatorPermit?: boolean,
  ): Promise<number>;
  /** `dev_setHyperparameter` in process: resolves once the next block holds it. */
  setHyperparameter(
    netuid: number,
    name: HyperparameterName,
    value: HyperparameterValue,
  ): Promise<void>;
  /** `dev_fault` in process. */
  fault(fault: LocalSubtensorFault): void;
  /** `dev_drandInfo` in process: the local beacon's public key (hex), genesis time and period. */
  drandInfo(): LocalSubtensorDrandInfo;
  /**
   * `dev_skipDrandRound` in process: the beacon never publishes `round` (default: the next one
   * not yet stored), so commits locked to it never reveal. Returns the skipped round.
   */
  skipDrandRound(round?: number | bigint): number;
  /** `dev_status` in process. */
  status(): LocalSubtensorStatus;
  /** `dev_setStake` in process: the hotkey's stake on the subnet, in rao (`TotalHotkeyAlpha`). */
  setStake(netuid: number, hotkey: string | Uint8Array, stake: number | bigint): Promise<void>;
  /** `dev_setSubnetOwner` in process: `SubnetOwnerHotkey(netuid)`. */
  setSubnetOwner(netuid: number, hotkey: string | Uint8Array): Promise<void>;
  /** `dev_deferEpoch` in process: the next `times` (default 1) due epochs each wait a block. */
  deferEpoch(netuid: number, times?: number): void;
  /** `dev_skipEpoch` in process: the next `times` (default 1) due epochs are skipped. */
  skipEpoch(netuid: number, times?: number): void;
  /** `dev_triggerEpoch` in process: `PendingEpochAt = at` (default the next block). */
  triggerEpoch(netuid: number, at?: number): Promise<number>;
  /**
   * `dev_upgradeRuntime` in process: the next block runs `runtime` (default `spec424`);
   * resolves with that block's number.
   */
  upgradeRuntime(runtime?: LocalSubtensorRuntime): Promise<number>;
  /** Resolves with the next block once it is produced. */
  nextBlock(): Promise<{ number: number; hash: string }>;
  /** Every JSON-RPC method clients have called, in first-call order. */
  methodsCalled(): string[];
  /** Stops producing blocks, drops every connection and closes the port. */
  close(): Promise<void>;
}

/**
 * Starts a local subtensor: a JSON-RPC websocket server that `@polkadot/api` connects to as
 * it would to finney (same runtime metadata, same signing payload, same `set_weights` and
 * `commit_timelocked_weights` checks and errors), producing a block every `blockMs`. It has its
 * own genesis hash and its own drand beacon (commits are revealed at their reveal epoch with its
 * pulses, as finney reveals them with quicknet's), applies only those two calls, and adds a
 * `dev_` namespace to register neurons, set subnet hyperparameters, skip drand rounds and inject
 * faults.
 *
 * @example
 * const chain = await startLocalSubtensor({ blockMs: 250 });
 * await chain.registerNeuron(1, alice.address, true);
 * const api = await ApiPromise.create({ provider: new WsProvider(chain.url) });
 */
export async function startLocalSubtensor(
  options: LocalSubtensorOptions = {},
): Promise<LocalSubtensor> {
  await cryptoWaitReady();
  const log = options.log ?? createLogger({ name: "local-subtensor" });
  // Its @polkadot/types registry logs through @polkadot/util too (`platform chain local`, `dev`).
  routePolkadotConsole();
  const blockMs = positive(options.blockMs ?? 250, "blockMs");
  const finalityLag = whole(options.finalityLag ?? 2, "finalityLag");
  // Never less than 256 blocks, nor less than the finalized block needs.
  const historyBlocks = Math.max(
    256,
    finalityLag + 1,
    whole(options.historyBlocks ?? 1024, "historyBlocks"),
  );
  const subnetDefaults = options.subnetDefaults ?? {};
  for (const [name, value] of Object.entries(subnetDefaults)) {
    if (value !== undefined) hyperparameterValue(name, value);
  }
  const runtime =
    options.metadataPath === undefined
      ? loadNamedRuntime(runtimeName(options.runtime ?? DEFAULT_RUNTIME))
      : loadRuntime(options.metadataPath);
  const text = new TextEncoder();
  const genesisSeed =
    options.genesisSeed === undefined ? undefined : text.encode(options.genesisSeed);
  const chain = new LocalChain({
    runtime,
    finalityLag,
    historyBlocks,
    tempo: whole(options.tempo ?? 360, "tempo"),
    subnetDefaults,
    genesisSeed,
    poolLimit: positive(options.poolLimit ?? 8192, "poolLimit"),
    blockMs,
    simulatedBlockMs: positive(options.simulatedBlockMs ?? 12_000, "simulatedBlockMs"),
    // Without a drand seed the chain keys its beacon from the genesis seed (random if none).
    beacon:
      options.drandSeed === undefined
        ? undefined
        : new LocalBeacon({ seed: text.encode(`drand:${options.drandSeed}`) }),
    log,
  });

  const called: string[] = [];
  const seen = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const fault = (f: LocalSubtensorFault) => {
    const seconds = f.seconds ?? (f.kind === "stall" ? 5 : 0);
    if (!(Number.isFinite(seconds) && seconds >= 0)) throw new Error("seconds must be >= 0");
    switch (f.kind) {
      case "close":
        log.warn("dev fault: dropping every connection", { refuseSeconds: seconds });
        server.dropAll(seconds * 1000);
        return;
      case "stall":
        log.warn("dev fault: stalling", { seconds });
        server.stall(seconds * 1000);
        return;
      case "reject_next":
        if (typeof f.error !== "string") throw new Error("reject_next needs an error name");
        chain.rejectNext(f.error);
        return;
      default:
        throw new Error(`unknown fault ${(f as { kind: unknown }).kind}`);
    }
  };

  const server = await startRpcServer({
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 0,
    methods: rpcMethods(chain, { blockMs, fault }),
    onCall: (method) => {
      if (!seen.has(method)) {
        seen.add(method);
        called.push(method);
      }
    },
    onError: (error) => log.error("local subtensor: request failed", { error }),
  });

  // One block per tick; a stall pauses production (no new heads) until it ends.
  const tick = () => {
    timer = undefined;
    if (closed) return;
    const wait = server.stallRemaining();
    if (wait > 0) {
      timer = setTimeout(tick, wait);
      return;
    }
    try {
      chain.produceBlock();
    } catch (error) {
      log.error("local subtensor: block production failed", { error });
    }
    timer = setTimeout(tick, blockMs);
  };
  timer = setTimeout(tick, blockMs);
  log.info("local subtensor listening", {
    url: server.url,
    genesisHash: chain.genesisHash,
    drandPublicKey: chain.beacon.info().public_key,
  });

  return {
    url: server.url,
    port: server.port,
    genesisHash: chain.genesisHash,
    registerNeuron: (netuid, hotkey, validatorPermit = false) =>
      chain.registerNeuron(
        netuid,
        typeof hotkey === "string" ? decodeAddress(hotkey) : hotkey,
        validatorPermit,
      ),
    setHyperparameter: (netuid, name, value) => chain.setHyperparameter(netuid, name, value),
    fault,
    drandInfo: () => chain.beacon.info(),
    skipDrandRound: (round) => Number(chain.skipDrandRound(roundParam(round))),
    status: () => chainStatus(chain),
    setStake: (netuid, hotkey, stake) =>
      chain.setStake(netuid, toAccount(hotkey), stakeParam(stake.toString())),
    setSubnetOwner: (netuid, hotkey) => chain.setSubnetOwner(netuid, toAccount(hotkey)),
    deferEpoch: (netuid, times = 1) => chain.deferEpoch(netuid, times),
    skipEpoch: (netuid, times = 1) => chain.skipEpoch(netuid, times),
    triggerEpoch: (netuid, at) => chain.triggerEpoch(netuid, at),
    upgradeRuntime: (name = "spec424") => chain.upgradeRuntime(loadNamedRuntime(runtimeName(name))),
    nextBlock: () =>
      new Promise((resolve) => {
        const off = chain.onNewHead((b: BlockRecord) => {
          off();
          resolve({ number: b.number, hash: b.hash });
        });
      }),
    methodsCalled: () => [...called],
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      chain.shutdown();
      await server.close();
    },
  };
}

function toAccount(hotkey: string | Uint8Array): Uint8Array {
  return typeof hotkey === "string" ? decodeAddress(hotkey) : hotkey;
}

function positive(value: number, name: string): number {
  if (!(Number.isInteger(value) && value > 0))
    throw new Error(`${name} must be a positive integer`);
  return value;
}

function whole(value: number, name: string): number {
  if (!(Number.isInteger(value) && value >= 0)) throw new Error(`${name} must be an integer >= 0`);
  return value;
}
