import { join } from "node:path";
import type { LoadedChallenge } from "./_dev-challenges.js";
import { type DockerProbe, dockerNotes, dockerProbe } from "./_dev-docker-check.js";
import { devChallengeEnv, devLogLevels } from "./_dev-env.js";
import { applyDevDefaults } from "./_dev-env-defaults.js";
import type { DevLifecycle } from "./_dev-lifecycle.js";
import { projectDir } from "./_dev-project-config.js";
import { activateAt, type DevMaster, registerOrRotate } from "./_dev-registration.js";
import { CliError } from "./_shared.js";

/** A challenge `platform dev` started: what it prints about it. */
export interface StartedChallenge {
  slug: string;
  name: string;
  version: string;
  module: string;
  internalUrl: string;
  proxyUrl: string;
  challengeToken: string;
  /** What the user should know about how it runs here: dev defaults applied, Docker problems. */
  notes: string[];
}

/**
 * Register one loaded challenge with the master (tokens minted there), start it on its own
 * embedded database under `dataDir/challenges/<slug>` with the environment the master would
 * give it, and activate it at the address it got. Its close is registered with `lifecycle`.
 */
async function startDevChallenge(
  item: LoadedChallenge,
  options: {
    master: DevMaster;
    dataDir: string;
    emissionPercent: number;
    lifecycle: DevLifecycle;
    progress: (line: string) => void;
    docker: DockerProbe;
  },
): Promise<StartedChallenge> {
  const { challenge, ref } = item;
  const { master, progress } = options;
  const slug = challenge.slug;
  progress(`registering ${slug} with the master`);
  const registration = {
    slug,
    name: challenge.name,
    version: challenge.version,
    image: item.image ?? `local/${slug}:${challenge.version}`,
    description: challenge.description,
    emissionPercent: options.emissionPercent,
  };
  const tokens = await registerOrRotate(master, registration);
  if (tokens.rotated) progress(`${slug} was registered by an earlier run: its tokens were rotated`);
  const dataDir = join(options.dataDir, "challenges", slug);
  progress(`starting ${slug} ${challenge.version} (embedded database in ${dataDir})`);
  // The project's dev defaults fill what the user left unset (never what dev itself sets).
  const defaults = applyDevDefaults(process.env, item.dev.env);
  const env = {
    ...devChallengeEnv(process.env, {
      slug,
      // PLATFORM_MASTER_URL is where the SDK's broker client posts: the admin listener.
      masterUrl: master.adminUrl,
      challengeToken: tokens.challengeToken,
      brokerToken: tokens.brokerToken,
      logLevel: devLogLevels(process.env).challenges,
    }),
    ...defaults.set,
  };
  const notes = [...defaults.notes];
  if (item.dev.docker) {
    // The images its runs use (a variable set for the challenge names its own): the broker's.
    const images = item.dev.docker.images.map(
      (wanted) => (wanted.env ? env[wanted.env] : undefined) || wanted.image,
    );
    if (images.length > 0 && master.allowTaskImages?.(images) === false) {
      notes.push(
        `PLATFORM_BROKER_IMAGES is set: the broker runs only what it lists (this challenge uses ${images.join(", ")})`,
      );
    }
    notes.push(
      ...(await dockerNotes(item.dev.docker, {
        probe: options.docker,
        env,
        projectDir: projectDir(ref.path),
        cwd: process.cwd(),
      })),
    );
  }
  for (const note of notes) progress(`${slug}: ${note}`);
  const running = await challenge.start({
    env,
    dataDir,
    host: "127.0.0.1",
    port: 0,
  });
  options.lifecycle.onStop(() => running.close());
  await activateAt(master, registration, running.url);
  progress(`${slug} is active at ${master.url}/challenges/${slug}`);
  return {
    slug,
    name: challenge.name,
    version: challenge.version,
    module: ref.path,
    internalUrl: running.url,
    proxyUrl: `${master.url}/challenges/${slug}`,
    challengeToken: tokens.challengeToken,
    notes,
  };
}

/**
 * Start every loaded challenge, sharing the emission equally. A challenge the user named (with
 * --challenge, or the project's own) must start; a reference one that fails is skipped with a
 * line saying why. Throws when none started.
 */
export async function startDevChallenges(
  loaded: readonly LoadedChallenge[],
  options: {
    master: DevMaster;
    dataDir: string;
    lifecycle: DevLifecycle;
    progress: (line: string) => void;
  },
): Promise<StartedChallenge[]> {
  const emissionPercent = loaded.length > 0 ? Number((100 / loaded.length).toFixed(4)) : 0;
  const docker = dockerProbe();
  const started: StartedChallenge[] = [];
  for (const item of loaded) {
    try {
      started.push(await startDevChallenge(item, { ...options, emissionPercent, docker }));
    } catch (error) {
      if (item.ref.origin === "explicit" || item.ref.origin === "project") throw error;
      const reason = (error as Error).message.split("\n")[0];
      options.progress(`skipping ${item.challenge.slug}: ${reason}`);
    }
    options.lifecycle.checkpoint();
  }
  if (started.length === 0)
    throw new CliError("no challenge could be started (see the lines above)");
  return started;
}
