import type Docker from "dockerode";
import { isMissing } from "./docker-errors.js";
import { pullImage } from "./image-pull.js";
import { SandboxRefusal } from "./sandbox-refusal.js";

/** The image on the engine, or null when the engine does not have it. */
export async function localImage(
  docker: Docker,
  image: string,
): Promise<Docker.ImageInspectInfo | null> {
  try {
    return await docker.getImage(image).inspect();
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** Options of {@link ensureImage}. */
export interface EnsureImageOptions {
  /** Pull an image the engine does not have (false: refuse it). */
  pull: boolean;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/**
 * The image's inspect data, pulling it first when the engine lacks it and `pull` allows.
 * Refuses (`image_unavailable`) an image that cannot be had; an engine that does not answer
 * throws Docker's own error. A pull stopped by `signal` rejects too: check the signal.
 * @example const info = await ensureImage(docker, task.image, { pull: true, timeoutMs: 300_000 });
 */
export async function ensureImage(
  docker: Docker,
  image: string,
  options: EnsureImageOptions,
): Promise<Docker.ImageInspectInfo> {
  const found = await localImage(docker, image);
  if (found) return found;
  if (!options.pull) {
    throw new SandboxRefusal(
      "image_unavailable",
      `Image "${image}" is not on the engine (pulling is off)`,
    );
  }
  try {
    await pullImage(docker, image, { timeoutMs: options.timeoutMs, signal: options.signal });
  } catch (error) {
    throw new SandboxRefusal(
      "image_unavailable",
      `Image "${image}" could not be pulled and is not on the engine: ${(error as Error).message}`,
      {},
      { cause: error },
    );
  }
  const pulled = await localImage(docker, image);
  if (!pulled) {
    throw new SandboxRefusal(
      "image_unavailable",
      `Image "${image}" is not on the engine after pulling it`,
    );
  }
  return pulled;
}

/** What a task container takes from its image: its configured user and declared volumes. */
export interface ImageRunFacts {
  /** Empty or unset means root, as Docker reads it. */
  user: string | undefined;
  /** Paths the image declares as VOLUMEs, /tmp aside (always a tmpfs). */
  volumes: string[];
}

/** The {@link ImageRunFacts} of an inspected image. */
export function imageRunFacts(info: Docker.ImageInspectInfo): ImageRunFacts {
  const volumes = (info.Config?.Volumes as Record<string, unknown> | null | undefined) ?? {};
  return {
    user: (info.Config?.User as string | undefined) || undefined,
    volumes: Object.keys(volumes).filter((path) => path !== "/tmp"),
  };
}
