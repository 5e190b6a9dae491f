import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LocalSubtensorRuntime } from "@platform/chain/local";
import type { DevLifecycle } from "./_dev-lifecycle.js";
import { epochBlocks, epochModelOf } from "./_runtime-flag.js";

/** The subnet `platform dev` runs on its local chain. */
export const DEV_NETUID = 1;
/** Blocks on the dev chain: fast enough to watch weights land, slow enough to read the log. */
export const DEV_BLOCK_MS = 1000;
/** Blocks between two weight settings of one hotkey on the dev chain (finney: 100). */
export const DEV_RATE_LIMIT_BLOCKS = 10;
/**
 * The dev subnet's tempo (finney: 360): an epoch is 10 one-second blocks (11 on spec 393), so a
 * commit is revealed 10 to 25 s after it is sent. Above 3 (the reveal round's offset into the
 * reveal epoch), or the round's pulse is stored only as the reveal epoch ends.
 */
export const DEV_TEMPO = 10;

/**
 * How `platform dev` sets up its local subtensor (less the logger): its block time, tempo and
 * the dev subnet's weight rules. The time-to-weight bench figure runs the same chain.
 */
export function devSubtensorOptions(commitReveal = true) {
  return {
    blockMs: DEV_BLOCK_MS,
    tempo: DEV_TEMPO,
    subnetDefaults: {
      CommitRevealWeightsEnabled: commitReveal,
      WeightsSetRateLimit: DEV_RATE_LIMIT_BLOCKS,
      MinAllowedWeights: 1,
    },
  };
}

/** The local chain `platform dev` started, and its subnet owner's validator. */
export interface DevChain {
  url: string;
  netuid: number;
  genesisHash: string;
  /** The finney runtime it serves (`--runtime`). */
  runtime: LocalSubtensorRuntime;
  /** Weights go in as timelocked commits (CommitRevealWeightsEnabled). */
  commitReveal: boolean;
  /** The master's validator hotkey (uid 0, with a validator permit) and the file it reads. */
  validatorHotkey: string;
  validatorHotkeyFile: string;
  /** Give `hotkey` a uid on the dev subnet, as a miner's `btcli subnet register` would. */
  register(hotkey: string): Promise<number>;
  /** What the master needs to read uids from this chain and set weights on it. */
  masterEnv: Record<string, string>;
}

/**
 * Start the local subtensor for development: one subnet, a fresh validator hotkey registered on
 * it with a permit (saved under `dataDir`, mode 0600, for the master's in-process validator),
 * commit-reveal on as on finney (the chain is its own drand beacon: weights are committed
 * timelocked to its rounds and revealed an epoch later), unless `commitReveal` is false.
 */
export async function startDevChain(options: {
  dataDir: string;
  lifecycle: DevLifecycle;
  progress: (line: string) => void;
  /** CommitRevealWeightsEnabled on the dev subnet; default true (finney's default). */
  commitReveal?: boolean;
  /** The finney runtime it serves; default spec 424 (the epoch counter, finney today). */
  runtime?: LocalSubtensorRuntime;
}): Promise<DevChain> {
  const commitReveal = options.commitReveal ?? true;
  const runtime = options.runtime ?? "spec424";
  const { startLocalSubtensor } = await import("@platform/chain/local");
  const { createLogger, generateMnemonic, initCrypto, keypairFromMnemonic } = await import(
    "@platform/core"
  );
  const chain = await startLocalSubtensor({
    ...devSubtensorOptions(commitReveal),
    runtime,
    log: createLogger({ name: "local-subtensor", level: "error" }),
  });
  options.lifecycle.onStop(() => chain.close());
  await initCrypto();
  const mnemonic = generateMnemonic();
  const validator = keypairFromMnemonic(mnemonic);
  const validatorHotkeyFile = join(options.dataDir, "validator-hotkey.json");
  // The format `platform keys` saves: the master's validator and `platform validator` read it.
  writeFileSync(
    validatorHotkeyFile,
    `${JSON.stringify({ name: "dev-validator", ss58Address: validator.address, mnemonic }, null, 2)}\n`,
    { mode: 0o600 },
  );
  chmodSync(validatorHotkeyFile, 0o600);
  const uid = await chain.registerNeuron(DEV_NETUID, validator.address, true);
  options.progress(
    `local chain at ${chain.url} (finney ${runtime} runtime, ${epochModelOf(runtime)}; netuid ${DEV_NETUID}); validator ${validator.address} is uid ${uid}`,
  );
  options.progress(
    commitReveal
      ? `commit-reveal on: weights are committed timelocked to the chain's own drand beacon (key ${chain.drandInfo().public_key.slice(0, 16)}…) and revealed an epoch (${epochBlocks(runtime, DEV_TEMPO)} blocks) later`
      : "commit-reveal off: weights are set directly (set_weights)",
  );
  const registered = new Set<string>([validator.address]);
  return {
    url: chain.url,
    netuid: DEV_NETUID,
    genesisHash: chain.genesisHash,
    runtime,
    commitReveal,
    validatorHotkey: validator.address,
    validatorHotkeyFile,
    async register(hotkey) {
      const uid = await chain.registerNeuron(DEV_NETUID, hotkey, false);
      if (!registered.has(hotkey)) {
        registered.add(hotkey);
        options.progress(`registered ${hotkey} on the local chain: uid ${uid}`);
      }
      return uid;
    },
    masterEnv: {
      PLATFORM_CHAIN_ENDPOINTS: chain.url,
      PLATFORM_NETUID: String(DEV_NETUID),
      PLATFORM_METAGRAPH: "chain",
      // A local chain answers at once: read the metagraph fresh at every collection.
      PLATFORM_METAGRAPH_CACHE_SECONDS: "0",
      PLATFORM_VALIDATOR_HOTKEY_FILE: validatorHotkeyFile,
      PLATFORM_CHAIN_BLOCK_MS: String(DEV_BLOCK_MS),
    },
  };
}

/**
 * Register every hotkey a challenge scores on the dev chain, as miners register themselves on a
 * real subnet: polls each challenge's get_weights (with its token, as the master does) every
 * `everyMs` until the lifecycle stops.
 */
export function startDevRegistrar(
  chain: DevChain,
  challenges: readonly { slug: string; internalUrl: string; challengeToken: string }[],
  options: { lifecycle: DevLifecycle; everyMs?: number; progress: (line: string) => void },
): void {
  const seen = new Set<string>();
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      for (const challenge of challenges) {
        const response = await fetch(`${challenge.internalUrl}/internal/v1/get_weights`, {
          headers: {
            authorization: `Bearer ${challenge.challengeToken}`,
            "x-platform-challenge-slug": challenge.slug,
          },
          signal: AbortSignal.timeout(5000),
        }).catch(() => undefined);
        if (!response?.ok) continue;
        const body = (await response.json().catch(() => ({}))) as {
          weights?: Record<string, unknown>;
        };
        for (const [hotkey, weight] of Object.entries(body.weights ?? {})) {
          if (seen.has(hotkey) || typeof weight !== "number" || !(weight > 0)) continue;
          try {
            await chain.register(hotkey);
            seen.add(hotkey);
          } catch (error) {
            options.progress(`could not register ${hotkey}: ${(error as Error).message}`);
            seen.add(hotkey); // not an address the chain takes: do not try every sweep
          }
        }
      }
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void sweep(), options.everyMs ?? 2000);
  timer.unref();
  void sweep();
  options.lifecycle.onStop(async () => clearInterval(timer));
}

/** What the watcher reads of `GET /v1/weights/chain`. */
interface ChainView {
  last_confirmed: {
    kind: "set_weights" | "commit";
    block: { number: number };
    commit_block?: { number: number };
    reveal_round?: number;
    uids: number[];
  } | null;
  last_attempt: {
    kind: string;
    status: string;
    reveal_cause?: string;
    error: string | null;
    at: string;
  } | null;
}

/**
 * Print what the master's validator does on the dev chain, as it happens: each attempt's status
 * (a commit sent, committed, not revealed and why) and each confirmed weights (the reveal's
 * block and the commit's), read from the master's `GET /v1/weights/chain` every `everyMs`. The
 * master itself logs only errors in dev: this is how `npm start` shows a commit, then its reveal.
 */
export function startDevChainWatch(
  masterUrl: string,
  options: { lifecycle: DevLifecycle; everyMs?: number; progress: (line: string) => void },
): void {
  let attempt = "";
  let confirmed = 0;
  let running = false;
  const look = async () => {
    if (running) return;
    running = true;
    try {
      const response = await fetch(`${masterUrl}/v1/weights/chain`, {
        signal: AbortSignal.timeout(5000),
      }).catch(() => undefined);
      if (!response?.ok) return;
      const view = (await response.json().catch(() => null)) as ChainView | null;
      const last = view?.last_attempt;
      const key = last ? `${last.at} ${last.status}` : "";
      if (last && key !== attempt) {
        attempt = key;
        const what = last.kind === "commit" ? "commit" : "set_weights";
        const why = last.reveal_cause ?? last.error;
        // A revealed commit is printed below, with its blocks.
        if (last.status !== "revealed" && last.status !== "finalized")
          options.progress(
            `chain: the validator's ${what} is ${last.status}${why ? ` (${why})` : ""}`,
          );
      }
      const done = view?.last_confirmed;
      if (done && done.block.number !== confirmed) {
        confirmed = done.block.number;
        options.progress(
          done.kind === "commit"
            ? `chain: weights for ${done.uids.length} uid(s) revealed in block #${done.block.number} from the commit in block #${done.commit_block?.number} (drand round ${done.reveal_round})`
            : `chain: weights for ${done.uids.length} uid(s) set in block #${done.block.number}`,
        );
      }
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void look(), options.everyMs ?? 2000);
  timer.unref();
  options.lifecycle.onStop(async () => clearInterval(timer));
}
