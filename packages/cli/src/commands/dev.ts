import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand } from "citty";
import {
  discoverChallengeModules,
  explicitChallenges,
  type LoadedChallenge,
  loadChallenge,
} from "./_dev-challenges.js";
import {
  activateAt,
  collectWeights,
  type DevMaster,
  deactivateStale,
  registerOrRotate,
} from "./_dev-registration.js";
import { CliError, jsonFlag, runCommand, untilSignal } from "./_shared.js";
import { findTemplateDir } from "./_template.js";

/** Where `platform dev` keeps its state unless --data-dir says otherwise: fresh on every run. */
export const DEFAULT_DEV_DIR = join(".platform", "dev");

const LEVELS = new Set(["debug", "info", "warn", "error", "silent"]);

/** A challenge `platform dev` started: what it prints, and how to stop it. */
interface Started {
  slug: string;
  name: string;
  version: string;
  module: string;
  internalUrl: string;
  proxyUrl: string;
  challengeToken: string;
  close(): Promise<void>;
}

/** What `--json` prints once everything is ready. */
export interface DevReady {
  status: "ready";
  master_url: string;
  admin_url: string;
  registry_url: string;
  weights_url: string;
  dashboard_url: string;
  admin_token: string;
  data_dir: string;
  challenges: {
    slug: string;
    name: string;
    version: string;
    module: string;
    proxy_url: string;
    internal_url: string;
    challenge_token: string;
  }[];
}

/** Is a process with this id running (EPERM: it is, and not ours)? */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Take the data dir for this run: refuse one another `platform dev` is using (the embedded
 * databases are single-process, and the default dir is emptied at start), empty the default
 * one, and mark it ours. Returns the release.
 */
function claimDataDir(dataDir: string, fresh: boolean): () => Promise<void> {
  const lock = join(dataDir, "platform-dev.pid");
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, "utf8").trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new CliError(
        `${dataDir} is in use by another platform dev (pid ${pid}); stop it, or pass another --data-dir`,
      );
    }
  }
  if (fresh) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(lock, `${process.pid}\n`);
  return async () => rmSync(lock, { force: true });
}

function without<T extends Record<string, unknown>>(env: T, keys: string[]): T {
  const copy = { ...env };
  for (const key of keys) delete copy[key];
  return copy;
}

function readyText(ready: DevReady, tokenFromEnv: boolean): string {
  const pad = (label: string) => `  ${label.padEnd(12)} `;
  const slugWidth = Math.max(...ready.challenges.map((c) => c.slug.length), 4);
  const slug = ready.challenges[0]?.slug ?? "<slug>";
  // The CLI's miner commands default to this address; any other needs saying.
  const master =
    ready.master_url === "http://127.0.0.1:8080" ? "" : ` --master ${ready.master_url}`;
  const lines = [
    "",
    "platform dev is ready (Ctrl-C stops everything)",
    "",
    `${pad("master")}${ready.master_url}`,
    `${pad("admin")}${ready.admin_url}  (sign in with the admin token)`,
    `${pad("registry")}${ready.registry_url}`,
    `${pad("weights")}${ready.weights_url}`,
    `${pad("dashboard")}${ready.dashboard_url}`,
    `${pad("admin token")}${tokenFromEnv ? "(from ADMIN_TOKEN / ADMIN_TOKEN_FILE)" : ready.admin_token}`,
    `${pad("data")}${ready.data_dir}`,
    "",
    "  challenges (public base through the master; direct address for debugging)",
    ...ready.challenges.map(
      (c) =>
        `    ${c.slug.padEnd(slugWidth)}  ${c.proxy_url}  (${c.name} ${c.version}, direct ${c.internal_url})`,
    ),
    "",
    "  submit as a miner:",
    "    platform keys new",
    `    platform submit ${slug} <file>${master}`,
    `    platform status ${slug} <id> --watch${master}`,
    "",
  ];
  return lines.join("\n");
}

/** Run it all; resolves once stopped by a signal. */
async function runDev(
  args: { port: string; host: string; "data-dir"?: string; json: boolean },
  explicit: string[],
): Promise<void> {
  const progress = (line: string) => process.stderr.write(`[platform dev] ${line}\n`);
  const port = Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new CliError(`--port must be a port number (0 picks a free one), got "${args.port}"`);
  }
  // Progress lines are the console; logs add only what needs attention: the challenges' warnings
  // (their authors want them), the master's errors. LOG_LEVEL sets both.
  const chosen = LEVELS.has(process.env.LOG_LEVEL ?? "") ? process.env.LOG_LEVEL : undefined;
  const level = chosen ?? "warn";
  const masterLevel = chosen ?? "error";

  // A signal at any point stops what has started, in reverse order.
  let stopRequested = false;
  const signal = untilSignal().then((name) => {
    stopRequested = true;
    return name;
  });
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) =>
        progress(`while stopping: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
  };
  const abortIfStopping = () => {
    if (stopRequested) throw new StopRequested();
  };

  try {
    const dataDir = resolve(args["data-dir"] ?? DEFAULT_DEV_DIR);
    cleanups.push(claimDataDir(dataDir, !args["data-dir"]));

    const refs = discoverChallengeModules({
      cwd: process.cwd(),
      explicit,
      templateDir: (() => {
        try {
          return findTemplateDir();
        } catch {
          return null;
        }
      })(),
    });
    if (refs.length === 0) {
      throw new CliError(
        "no challenge to run: pass --challenge <module> (a file exporting a challenge)",
      );
    }

    const { createMaster, loadMasterConfig } = await import("@platform/master");
    const { createLogger, generateToken } = await import("@platform/core");
    const tokenFromEnv = Boolean(process.env.ADMIN_TOKEN || process.env.ADMIN_TOKEN_FILE);
    const masterEnv: Record<string, string | undefined> = {
      ...without(process.env, ["DATABASE_URL"]),
      PLATFORM_WEIGHTS_INTERVAL_SECONDS: process.env.PLATFORM_WEIGHTS_INTERVAL_SECONDS ?? "30",
      PLATFORM_BROKER_REAPER_SECONDS: process.env.PLATFORM_BROKER_REAPER_SECONDS ?? "0",
    };
    if (!tokenFromEnv) masterEnv.ADMIN_TOKEN = generateToken("adm_");
    const config = loadMasterConfig(
      { host: args.host, port, dataDir: join(dataDir, "master") },
      masterEnv,
    );
    // Development image policy: local images (no registry, no tag) are fine here.
    config.imagePolicy = { allowedPrefixes: [], requireTagOrDigest: false, forbidLatest: false };
    progress(`starting the master (embedded database in ${config.dataDir})`);
    const master = await createMaster(config, {
      logger: createLogger({ name: "platform-master", level: masterLevel as "error" }),
    });
    cleanups.push(() => master.close());
    const server = await master.listen().catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EADDRINUSE") throw error;
      throw new CliError(
        `${args.host}:${port} is in use (another master?); pass --port with a free port, or 0 for any`,
      );
    });
    config.broker.masterUrl ??= server.url;
    const devMaster: DevMaster = { url: server.url, adminToken: config.adminToken };
    progress(`master listening on ${server.url}`);
    abortIfStopping();

    const loaded: LoadedChallenge[] = [];
    for (const ref of refs) {
      progress(`loading ${ref.path}`);
      try {
        loaded.push(await loadChallenge(ref));
      } catch (error) {
        if (ref.origin === "explicit" || ref.origin === "project") throw error;
        progress(`skipping it: ${(error as Error).message}`);
      }
      abortIfStopping();
    }
    const slugs = loaded.map((item) => item.challenge.slug);
    const duplicate = slugs.find((slug, index) => slugs.indexOf(slug) !== index);
    if (duplicate) throw new CliError(`two modules define the challenge "${duplicate}"`);

    const emission = loaded.length > 0 ? Number((100 / loaded.length).toFixed(4)) : 0;
    const started: Started[] = [];
    for (const item of loaded) {
      const { challenge, ref } = item;
      const slug = challenge.slug;
      try {
        progress(`registering ${slug} with the master`);
        const registration = {
          slug,
          name: challenge.name,
          version: challenge.version,
          image: item.image ?? `local/${slug}:${challenge.version}`,
          description: challenge.description,
          emissionPercent: emission,
        };
        const tokens = await registerOrRotate(devMaster, registration);
        if (tokens.rotated)
          progress(`${slug} was registered by an earlier run: its tokens were rotated`);
        progress(
          `starting ${slug} ${challenge.version} (embedded database in ${join(dataDir, "challenges", slug)})`,
        );
        const running = await challenge.start({
          env: {
            ...without(process.env, [
              "DATABASE_URL",
              "DATA_DIR",
              "PORT",
              "HOST",
              "ADMIN_TOKEN",
              "ADMIN_TOKEN_FILE",
            ]),
            CHALLENGE_TOKEN: tokens.challengeToken,
            BROKER_TOKEN: tokens.brokerToken,
            PLATFORM_CHALLENGE_SLUG: slug,
            PLATFORM_MASTER_URL: server.url,
            LOG_LEVEL: level,
          },
          dataDir: join(dataDir, "challenges", slug),
          host: "127.0.0.1",
          port: 0,
        });
        cleanups.push(() => running.close());
        await activateAt(devMaster, registration, running.url);
        progress(`${slug} is active at ${server.url}/challenges/${slug}`);
        started.push({
          slug,
          name: challenge.name,
          version: challenge.version,
          module: ref.path,
          internalUrl: running.url,
          proxyUrl: `${server.url}/challenges/${slug}`,
          challengeToken: tokens.challengeToken,
          close: () => running.close(),
        });
      } catch (error) {
        if (ref.origin === "explicit" || ref.origin === "project") throw error;
        progress(`skipping ${slug}: ${(error as Error).message.split("\n")[0]}`);
      }
      abortIfStopping();
    }
    if (started.length === 0)
      throw new CliError("no challenge could be started (see the lines above)");

    const stale = await deactivateStale(devMaster, new Set(started.map((item) => item.slug)));
    if (stale.length > 0)
      progress(`deactivated ${stale.join(", ")}: registered by an earlier run, not running now`);

    progress("collecting weights once");
    for (const source of await collectWeights(devMaster)) {
      progress(`  ${source.slug}: ${source.status}${source.error ? ` (${source.error})` : ""}`);
    }
    abortIfStopping();

    const ready: DevReady = {
      status: "ready",
      master_url: server.url,
      admin_url: `${server.url}/admin`,
      registry_url: `${server.url}/v1/registry`,
      weights_url: `${server.url}/v1/weights/latest`,
      dashboard_url: `${server.url}/v1/challenges/dashboard.svg`,
      admin_token: config.adminToken,
      data_dir: dataDir,
      challenges: started.map((item) => ({
        slug: item.slug,
        name: item.name,
        version: item.version,
        module: item.module,
        proxy_url: item.proxyUrl,
        internal_url: item.internalUrl,
        challenge_token: item.challengeToken,
      })),
    };
    process.stdout.write(
      args.json ? `${JSON.stringify(ready)}\n` : `${readyText(ready, tokenFromEnv)}\n`,
    );

    const name = await signal;
    progress(`received ${name}, stopping`);
  } catch (error) {
    if (!(error instanceof StopRequested)) {
      await stopAll();
      throw error;
    }
    progress("stop requested while starting");
  }
  await stopAll();
  progress("stopped");
}

/** Thrown between start-up steps when a signal asked to stop. */
class StopRequested extends Error {}

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
    "data-dir": {
      type: "string",
      description: `Keep state here across runs (default: ${DEFAULT_DEV_DIR}, emptied at every start)`,
      valueHint: "dir",
    },
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
