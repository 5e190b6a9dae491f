import { join } from "node:path";
import { devLogLevels, devMasterEnv } from "./_dev-env.js";
import type { DevLifecycle } from "./_dev-lifecycle.js";
import type { DevMaster } from "./_dev-registration.js";
import { CliError } from "./_shared.js";

/** The master `platform dev` started. */
export interface StartedDevMaster extends DevMaster {
  /** true when the admin token came from ADMIN_TOKEN / ADMIN_TOKEN_FILE (so it is not printed). */
  tokenFromEnv: boolean;
}

/**
 * Start a master for development: its embedded database under `dataDir/master`, a fresh admin
 * token unless the user set one, and local images allowed (no registry, no tag); the broker runs
 * the task images projects declare. Its close is registered with `lifecycle`.
 */
export async function startDevMaster(options: {
  host: string;
  port: number;
  /** The admin listener (admin pages, admin API, broker); defaults as the master's. */
  adminHost?: string;
  adminPort?: number;
  dataDir: string;
  /** Settings dev adds to the master's environment (the local chain's). */
  env?: Record<string, string>;
  lifecycle: DevLifecycle;
  progress: (line: string) => void;
}): Promise<StartedDevMaster> {
  const { host, port, lifecycle, progress } = options;
  const { createMaster, loadMasterConfig } = await import("@platform/master");
  const { createLogger, generateToken, startTracing } = await import("@platform/core");
  // Before the master: this process serves the challenges too, whose handlers' spans find their
  // parents through AsyncLocalStorage, so tracing here keeps it (the master alone would not).
  await startTracing({ serviceName: "platform-dev", context: "async" });
  const tokenFromEnv = Boolean(process.env.ADMIN_TOKEN || process.env.ADMIN_TOKEN_FILE);
  const env = { ...devMasterEnv(process.env), ...options.env };
  if (!tokenFromEnv) env.ADMIN_TOKEN = generateToken("adm_");
  const flags: Parameters<typeof loadMasterConfig>[0] = {
    host,
    port,
    dataDir: join(options.dataDir, "master"),
  };
  if (options.adminHost !== undefined) flags.adminHost = options.adminHost;
  if (options.adminPort !== undefined) flags.adminPort = options.adminPort;
  const config = loadMasterConfig(flags, env);
  config.imagePolicy = { allowedPrefixes: [], requireTagOrDigest: false, forbidLatest: false };
  // dev runs each challenge in this process, at the address it registers: no container to keep.
  config.reconciler.enabled = false;
  progress(`starting the master (embedded database in ${config.dataDir})`);
  const master = await createMaster(config, {
    logger: createLogger({ name: "platform-master", level: devLogLevels(process.env).master }),
  });
  lifecycle.onStop(() => master.close());
  const server = await master.listen().catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EADDRINUSE") throw error;
    const admin = (error as NodeJS.ErrnoException & { port?: number }).port === config.adminPort;
    throw new CliError(
      admin && config.adminPort !== port
        ? `${config.adminHost}:${config.adminPort} (the admin listener) is in use (another master?); pass --admin-port with a free port, or 0 for any`
        : `${host}:${port} is in use (another master?); pass --port with a free port, or 0 for any`,
    );
  });
  // Challenge containers the broker starts reach the broker where it listens: the admin side.
  config.broker.masterUrl ??= server.admin.url;
  progress(
    `master listening on ${server.url}; admin pages, admin API and broker on ${server.admin.url}`,
  );
  // The broker refuses every image until an operator lists some; in development the images the
  // projects declare are the list (read per request, so challenges started later are covered).
  const userListedImages = Boolean(process.env.PLATFORM_BROKER_IMAGES?.trim());
  return {
    url: server.url,
    adminUrl: server.admin.url,
    adminToken: config.adminToken,
    tokenFromEnv,
    allowTaskImages(images) {
      if (userListedImages) return false;
      const allowed = config.broker.allowedImagePrefixes;
      for (const image of images) if (!allowed.includes(image)) allowed.push(image);
      return true;
    },
  };
}
