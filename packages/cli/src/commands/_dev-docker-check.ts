import { isAbsolute, relative } from "node:path";
import type Docker from "dockerode";
import type { DevDockerNeeds } from "./_dev-project-config.js";

/** What dev asks of the Docker engine, once per run whatever the number of challenges. */
export interface DockerProbe {
  /** null when an engine answers, else why not. */
  unavailable(): Promise<string | null>;
  /** true / false, or the engine's error when it could not say. */
  hasImage(image: string): Promise<boolean | string>;
}

/**
 * The engine DOCKER_HOST names (else the local socket), as the master's broker and the SDK's
 * docker runner reach it: dev's challenges run their containers there. `docker` replaces it.
 */
export function dockerProbe(options: { docker?: Docker; timeoutMs?: number } = {}): DockerProbe {
  const timeoutMs = options.timeoutMs ?? 3_000;
  let client: Promise<Docker> | undefined = options.docker && Promise.resolve(options.docker);
  let answer: Promise<string | null> | undefined;
  // Loaded on first need: most challenges declare no Docker needs, and --help stays fast.
  const docker = () => {
    client ??= import("dockerode").then(({ default: Engine }) => new Engine());
    return client;
  };
  return {
    unavailable() {
      answer ??= (async () => {
        const { probeDocker } = await import("@platform/challenge-sdk/sandbox");
        const probe = await probeDocker(await docker(), timeoutMs);
        return probe.ok ? null : probe.reason;
      })();
      return answer;
    },
    async hasImage(image) {
      const { dockerMessage, localImage } = await import("@platform/challenge-sdk/sandbox");
      try {
        return (await localImage(await docker(), image)) !== null;
      } catch (error) {
        return dockerMessage(error);
      }
    },
  };
}

const SHELL_SAFE = /^[A-Za-z0-9_./@%+=:,-]+$/;

/** `dir` as the user would type it from `cwd`: relative inside it, absolute outside, quoted if needed. */
export function shellPath(dir: string, cwd: string): string {
  const rel = relative(cwd, dir);
  const path = rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? dir : rel;
  return SHELL_SAFE.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * What the user needs to hear about the engine a challenge runs its work on: nothing when an
 * engine answers and every image it names is there; else that no engine answers (and what the
 * challenge does meanwhile), or which image is missing and the one command that builds it.
 */
export async function dockerNotes(
  needs: DevDockerNeeds,
  options: {
    probe: DockerProbe;
    /** The challenge's environment (an image variable set there names the image to check). */
    env: Record<string, string | undefined>;
    projectDir: string;
    cwd: string;
  },
): Promise<string[]> {
  const reason = await options.probe.unavailable();
  if (reason !== null) {
    return [
      `no Docker engine answers (${reason}): ${needs.note ?? "the work this challenge runs in containers cannot run"}`,
    ];
  }
  const notes: string[] = [];
  for (const wanted of needs.images) {
    const chosen = wanted.env ? options.env[wanted.env] : undefined;
    const image = chosen ? chosen : wanted.image;
    const found = await options.probe.hasImage(image);
    if (found === true) continue;
    if (typeof found === "string") {
      notes.push(`cannot tell whether the image ${image} is on the Docker engine: ${found}`);
    } else if (wanted.build && image === wanted.image) {
      const command = wanted.build.replaceAll(
        "{project}",
        shellPath(options.projectDir, options.cwd),
      );
      notes.push(`the image ${image} is missing; build it with: ${command}`);
    } else {
      // The user's own image: the project's build command makes the default one, not this.
      notes.push(`the image ${image} is not on the Docker engine`);
    }
  }
  return notes;
}
