import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import { devBanner, devReady } from "./_dev-banner.js";
import { startDevChain, startDevChainWatch, startDevRegistrar } from "./_dev-chain.js";
import { discoverChallengeModules, explicitChallenges, loadChallenges } from "./_dev-challenges.js";
import { claimDevDataDir } from "./_dev-data-dir.js";
import { DevLifecycle, StopRequested } from "./_dev-lifecycle.js";
import { startDevMaster } from "./_dev-master.js";
import { collectWeights, deactivateStale } from "./_dev-registration.js";
import { startDevChallenges } from "./_dev-start-challenges.js";
import { runtimeFlag, runtimeOf } from "./_runtime-flag.js";
import { CliError, jsonFlag, runCommand } from "./_shared.js";
import { findTemplateDir } from "./_template.js";

export type { DevReady } from "./_dev-banner.js";

/** Where `platform dev` keeps its state unless --data-dir says otherwise: fresh on every run. */
export const DEFAULT_DEV_DIR = join(".platform", "dev");

function templateDirOrNull(): string | null {
  try {
    return findTemplateDir();
  } catch {
    return null;
  }
}

/**
 * Run it all, step by step: claim the data dir, start the master, load and start the
 * challenges, retire records of an earlier run, collect weights once, print the ready report;
 * then wait for a signal and stop everything in reverse order.
 */
async function runDev(
  args: {
    port: string;
    host: string;
    "admin-port"?: string;
    "admin-host"?: string;
    "data-dir"?: string;
    chain: boolean;
    runtime: string;
    json: boolean;
  },
  explicit: string[],
): Promise<void> {
  const progress = (line: string) => process.stderr.write(`[platform dev] ${line}\n`);
  const port = Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new CliError(`--port must be a port number (0 picks a free one), got "${args.port}"`);
  }
  const adminPort = args["admin-port"] === undefined ? undefined : Number(args["admin-port"]);
  if (
    adminPort !== undefined &&
    (!Number.isInteger(adminPort) || adminPort < 0 || adminPort > 65_535)
  ) {
    throw new CliError(
      `--admin-port must be a port number (0 picks a free one), got "${args["admin-port"]}"`,
    );
  }
  const runtime = runtimeOf(args.runtime);
  const lifecycle = new DevLifecycle(progress);
  try {
    const dataDir = resolve(args["data-dir"] ?? DEFAULT_DEV_DIR);
    lifecycle.onStop(await claimDevDataDir(dataDir, !args["data-dir"]));

    const refs = discoverChallengeModules({
      cwd: process.cwd(),
      explicit,
      templateDir: templateDirOrNull(),
    });
    if (refs.length === 0) {
      throw new CliError(
        "no challenge to run: pass --challenge <module> (a file exporting a challenge)",
      );
    }

    // The local chain and the master's validator on it, unless told not to or pointed elsewhere.
    const chain =
      args.chain && !process.env.PLATFORM_CHAIN_ENDPOINTS
        ? await startDevChain({ dataDir, lifecycle, progress, runtime })
        : undefined;
    lifecycle.checkpoint();
    const master = await startDevMaster({
      host: args.host,
      port,
      ...(chain ? { env: chain.masterEnv } : {}),
      ...(adminPort === undefined ? {} : { adminPort }),
      ...(args["admin-host"] === undefined ? {} : { adminHost: args["admin-host"] }),
      dataDir,
      lifecycle,
      progress,
    });
    lifecycle.checkpoint();
    const loaded = await loadChallenges(refs, {
      progress,
      checkpoint: () => lifecycle.checkpoint(),
    });
    const started = await startDevChallenges(loaded, { master, dataDir, lifecycle, progress });
    if (chain) {
      startDevRegistrar(chain, started, { lifecycle, progress });
      startDevChainWatch(master.url, { lifecycle, progress });
    }

    const stale = await deactivateStale(master, new Set(started.map((item) => item.slug)));
    if (stale.length > 0)
      progress(`deactivated ${stale.join(", ")}: registered by an earlier run, not running now`);
    progress("collecting weights once");
    for (const source of await collectWeights(master)) {
      progress(`  ${source.slug}: ${source.status}${source.error ? ` (${source.error})` : ""}`);
    }
    lifecycle.checkpoint();

    const ready = devReady(master, dataDir, started, chain);
    process.stdout.write(
      args.json ? `${JSON.stringify(ready)}\n` : `${devBanner(ready, master.tokenFromEnv)}\n`,
    );
    progress(`received ${await lifecycle.signal}, stopping`);
  } catch (error) {
    if (!(error instanceof StopRequested)) {
      await lifecycle.stopAll();
      throw error;
    }
    progress("stop requested while starting");
  }
  await lifecycle.stopAll();
  progress("stopped");
}

/** `platform dev`: a master and challenges on this machine, in one command. */
export default defineCommand({
  meta: {
    name: "dev",
    description:
      "Run a local master with challenges behind it: the reference challenges, or the project in this folder. Embedded databases, no Docker, one Ctrl-C to stop.",
  },
  args: {
    port: {
      type: "string",
      description: "The master's port (0 picks a free one)",
      default: "8080",
      valueHint: "port",
    },
    host: {
      type: "string",
      description: "Address the master listens on",
      default: "127.0.0.1",
      valueHint: "addr",
    },
    "admin-port": {
      type: "string",
      description:
        "Port of the master's admin pages, admin API and broker (default: the port plus one; 0 with --port 0)",
      valueHint: "port",
    },
    "admin-host": {
      type: "string",
      description: "Address the admin listener binds (default 127.0.0.1)",
      valueHint: "addr",
    },
    "data-dir": {
      type: "string",
      description: `Keep state here across runs (default: ${DEFAULT_DEV_DIR}, emptied at every start)`,
      valueHint: "dir",
    },
    chain: {
      type: "boolean",
      description:
        "Run a local subtensor beside the master: miners who score get a uid on it, and the master's validator commits their weights (commit-reveal on, as on finney: revealed an epoch later) (--no-chain: none; PLATFORM_CHAIN_ENDPOINTS: that chain instead)",
      default: true,
    },
    ...runtimeFlag,
    challenge: {
      type: "string",
      description:
        "A module exporting a challenge; repeat to run several (default: ./src/challenge.ts in a challenge project, else the template and examples/*)",
      valueHint: "module",
    },
    ...jsonFlag,
  },
  run: async ({ args, rawArgs }) => {
    await runCommand(() => runDev(args, explicitChallenges(rawArgs)));
    // Everything is closed; a library that left a handle open must not keep the process alive.
    setTimeout(() => process.exit(process.exitCode ?? 0), 3000).unref();
  },
});
