import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { loadKey } from "./_keystore.js";
import { masterUrl } from "./_miner.js";
import { CliError, runCommand } from "./_shared.js";
import { openValidatorDatabase, validatorDatabaseFlags, validatorDataDir } from "./_validator.js";
import { writeStatusFile } from "./_validator-status-file.js";

/** `platform validator run`: the validator loop, or one confirmed submission with --once. */
export default defineCommand({
  meta: {
    name: "run",
    description:
      "Read the master's latest weights snapshot, map its hotkeys to uids with your own read of the chain at a pinned finalized block, check the subnet's rules (the chain's own checks, in its order), set the weights and confirm them from the block's events; then wait for the next allowed block and repeat. On a subnet with commit-reveal on (finney's default) the weights are committed timelocked to a drand round, never set directly, and each commit is followed to its reveal. Nothing is sent while a challenge with emission keeps failing its collections (the health gate), and a snapshot that cannot be fetched or builds to nothing gives way to the last verified one. Exit codes with --once: 0 confirmed (with commit-reveal: revealed), 3 refused by a local check or the health gate (named, with the block it is allowed from), 1 any other failure.",
  },
  args: {
    master: {
      type: "string",
      description:
        "The master whose weights to set (default: PLATFORM_MASTER_URL, else http://127.0.0.1:8080)",
      valueHint: "url",
    },
    chain: {
      type: "string",
      description:
        "Comma-separated ws:// or wss:// subtensor endpoints, tried in order (default: PLATFORM_CHAIN_ENDPOINTS)",
      valueHint: "endpoints",
    },
    netuid: {
      type: "string",
      description: "The subnet (default: PLATFORM_NETUID)",
      valueHint: "n",
    },
    hotkey: {
      type: "string",
      description:
        "The validator's hotkey: a Bittensor wallet hotkey file (~/.bittensor/wallets/W/hotkeys/H), a key file saved by `platform keys`, or the name of a saved key",
      valueHint: "file|name",
    },
    once: {
      type: "boolean",
      description: "Stop after one confirmed submission (or the first refusal or failure)",
      default: false,
    },
    "dry-run": {
      type: "boolean",
      description: "Do everything but send: print the vector that would be set",
      default: false,
    },
    "allow-burn": {
      type: "boolean",
      description: "Submit a vector whose only weight is the burn uid when nothing valid exists",
      default: false,
    },
    "version-key": {
      type: "string",
      description: "version_key to send (default: the subnet's WeightsVersionKey)",
      valueHint: "n",
    },
    "drand-public-key": {
      type: "string",
      description:
        "The drand beacon's public key (96-byte compressed G2, hex) commits are encrypted to (default: PLATFORM_DRAND_PUBLIC_KEY, else drand quicknet on finney and testnet, the local subtensor's own key on it)",
      valueHint: "hex",
    },
    "health-grace": {
      type: "string",
      description:
        "Failed collections in a row a challenge with emission may have before weights are held (default 3)",
      default: "3",
      valueHint: "n",
    },
    "override-health-gate": {
      type: "boolean",
      description: "Send weights even while the health gate is closed (logged at every round)",
      default: false,
    },
    "block-ms": {
      type: "string",
      description:
        "The chain's block time: a head silent for 3 of them marks an endpoint stalled (default 12000)",
      default: "12000",
      valueHint: "ms",
    },
    ...validatorDatabaseFlags,
  },
  run: ({ args }) =>
    runCommand(async () => {
      const endpoints = (args.chain || process.env.PLATFORM_CHAIN_ENDPOINTS || "")
        .split(",")
        .map((item) => item.trim())
        .filter(Boolean);
      if (endpoints.length === 0)
        throw new CliError(
          "give the chain with --chain ws://host:9944 (or PLATFORM_CHAIN_ENDPOINTS)",
        );
      for (const endpoint of endpoints) {
        if (!/^wss?:\/\/\S+$/.test(endpoint))
          throw new CliError("every --chain endpoint must be a ws:// or wss:// URL");
      }
      const netuid = integer(args.netuid || process.env.PLATFORM_NETUID, "--netuid", 1, 65_535);
      const blockTimeMs = integer(args["block-ms"], "--block-ms", 10, 600_000);
      const versionKey =
        args["version-key"] === undefined
          ? undefined
          : BigInt(integer(args["version-key"], "--version-key", 0, Number.MAX_SAFE_INTEGER));
      if (!args.hotkey)
        throw new CliError("give the validator's hotkey with --hotkey <file or saved key name>");
      const master = masterUrl(args.master);
      const grace = integer(args["health-grace"], "--health-grace", 0, 1000);
      const drandPublicKey = args["drand-public-key"] || process.env.PLATFORM_DRAND_PUBLIC_KEY;

      const core = await import("@platform/core");
      const chain = await import("@platform/chain");
      const keypair = await loadValidatorKeypair(args.hotkey);
      const log = core.createLogger({ name: "platform-validator", level: "warn" });
      const say = (line: string) => process.stdout.write(`${line}\n`);
      say(`validator ${keypair.address} on netuid ${netuid}, weights from ${master}`);

      const database = await openValidatorDatabase(args);
      // The embedded database is this process's alone: `platform validator status` reads the
      // newest submissions from a file beside it, rewritten after every step of an attempt.
      const dataDir = validatorDataDir(args);
      const submissions = new chain.SubmissionStore(database.sql);
      let statusWrites = Promise.resolve();
      const recordStatus = () => {
        if (dataDir === null) return;
        statusWrites = statusWrites
          .then(async () => writeStatusFile(dataDir, await submissions.recent({ limit: 50 })))
          .catch((error: unknown) =>
            log.warn("cannot write the validator's status file", { error: String(error) }),
          );
      };
      recordStatus(); // what earlier runs left, before this one's first attempt
      if (drandPublicKey) {
        try {
          chain.parseBeaconPublicKey(drandPublicKey);
        } catch (error) {
          throw new CliError(
            `--drand-public-key is not a drand public key (96-byte compressed G2, hex): ${(error as Error).message}`,
          );
        }
      }
      // The validator sees only the latest snapshot: the gate keeps the ones it was shown.
      const health = chain.observingHealthGate({ graceCollections: grace });
      const client = chain.createChainClient({ endpoints, blockTimeMs, log });
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        const outcome = await chain.runValidator({
          client,
          sql: database.sql,
          netuid,
          keypair,
          snapshotSource: async () => health.observe(await fetchSnapshot(master)),
          healthGate: health.gate,
          overrideHealthGate: args["override-health-gate"],
          ...(drandPublicKey ? { drandPublicKey } : {}),
          once: args.once,
          dryRun: args["dry-run"],
          allowBurn: args["allow-burn"],
          ...(versionKey === undefined ? {} : { versionKey }),
          signal: stop.signal,
          log,
          onEvent: (event) => {
            say(describeEvent(event));
            if (event.type !== "prepared" && event.type !== "sent") recordStatus();
          },
        });
        say(describeOutcome(outcome));
        process.exitCode = outcome.exitCode;
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        await client.close();
        await statusWrites;
        await database.close();
      }
    }),
});

function integer(text: string | undefined, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (text === undefined || !/^\d+$/.test(text) || value < min || value > max)
    throw new CliError(
      `${flag} must be an integer from ${min} to ${max}${text === undefined ? "" : `, got ${JSON.stringify(text)}`}`,
    );
  return value;
}

/** The hotkey: a file (wallet hotkey or saved key) by path, else a saved key by name. */
async function loadValidatorKeypair(hotkey: string) {
  const { readValidatorHotkey, validatorKeypair, HotkeyFileError } = await import(
    "@platform/chain"
  );
  if (existsSync(hotkey)) {
    try {
      const read = await readValidatorHotkey(hotkey);
      return validatorKeypair(read.secret, { expectedAddress: read.pair.address });
    } catch (error) {
      if (error instanceof HotkeyFileError) throw new CliError(error.message);
      throw error;
    }
  }
  if (hotkey.includes("/")) throw new CliError(`no hotkey file at ${hotkey}`);
  const pair = await loadKey(hotkey);
  return validatorKeypair(
    { publicKey: pair.publicKey, secretKey: pair.secretKey },
    { expectedAddress: pair.address },
  );
}

/** GET {master}/v1/weights/latest, checked against the snapshot schema. */
async function fetchSnapshot(master: string) {
  const { WeightsSnapshot } = await import("@platform/core");
  const { TypeCompiler } = await import("@sinclair/typebox/compiler");
  const response = await fetch(`${master}/v1/weights/latest`, {
    signal: AbortSignal.timeout(15_000),
  });
  if (response.status === 404) throw new Error("the master has no weights snapshot yet");
  if (!response.ok)
    throw new Error(`the master answered HTTP ${response.status} for its latest weights`);
  const body: unknown = await response.json();
  const check = TypeCompiler.Compile(WeightsSnapshot);
  if (!check.Check(body)) throw new Error("the master's latest weights are not a weights snapshot");
  return body;
}

type Chain = typeof import("@platform/chain");
type Event = Parameters<NonNullable<Parameters<Chain["runValidator"]>[0]["onEvent"]>>[0];
type Outcome = Awaited<ReturnType<Chain["runValidator"]>>;

function describeEvent(event: Event): string {
  switch (event.type) {
    case "prepared": {
      const p = event.prepared;
      const block = p.rules.block;
      return `snapshot ${p.snapshotId ?? "-"}: ${p.uids.length} uids at finalized block #${block.number} (uid ${p.uid ?? "not registered"}, version_key ${p.versionKey})`;
    }
    case "signed":
      return `signed ${event.record.kind === "commit" ? `a commit to drand round ${event.record.commit?.revealRound}` : "set_weights"}, extrinsic ${event.record.extrinsicHash} (nonce ${event.record.nonce}, valid to block #${event.record.eraDeath})`;
    case "sent":
      return "sent";
    case "in_block":
      return `in block #${event.record.inBlock?.number} ${event.record.inBlock?.hash}`;
    case "settled": {
      const r = event.record;
      if (r.status === "finalized")
        return `confirmed: finalized in block #${r.finalizedBlock?.number} ${r.finalizedBlock?.hash}`;
      if (r.status === "committed")
        return `committed in block #${r.finalizedBlock?.number} (epoch ${r.commit?.commitEpoch}); its reveal is due in epoch ${r.commit?.revealEpoch}`;
      return `${r.status}: ${r.errorName ?? r.errorCode ?? "-"}${r.errorMessage ? ` (${r.errorMessage})` : ""}`;
    }
    case "reveal": {
      const r = event.record;
      if (r.status === "revealed")
        return `revealed in block #${r.commit?.revealBlock?.number}: the chain's weights are the committed ones`;
      return `NOT revealed: ${r.commit?.cause ?? "unknown"}${r.commit?.detail ? ` (${r.commit.detail})` : ""}; the weights go again at the next allowed block`;
    }
    default:
      return JSON.stringify(event);
  }
}

function describeOutcome(outcome: Outcome): string {
  switch (outcome.reason) {
    case "confirmed":
      return outcome.submission.kind === "commit"
        ? `done: weights committed in block #${outcome.submission.finalizedBlock?.number} and revealed in block #${outcome.submission.commit?.revealBlock?.number}`
        : `done: weights confirmed in block #${outcome.submission.finalizedBlock?.number}`;
    case "committed":
      return `done: weights committed in block #${outcome.submission.finalizedBlock?.number} (reveal not awaited)`;
    case "dry_run":
      return `dry run: would set ${outcome.prepared.uids.length} weights: ${JSON.stringify(Object.fromEntries(outcome.prepared.uids.map((uid, i) => [uid, outcome.prepared.weights[i]])))}`;
    case "stopped":
      return "stopped";
    default:
      return `${outcome.reason}: ${"message" in outcome ? outcome.message : ""}`;
  }
}
