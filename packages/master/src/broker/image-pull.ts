import type Docker from "dockerode";
import { dockerMessage, dockerStatus } from "./docker-client.js";

/** One progress line of `docker pull` (Docker's own JSON shape, fields kept as sent). */
export interface PullProgress {
  status?: string;
  id?: string;
  progress?: string;
  progressDetail?: { current?: number; total?: number };
}

/** Options of {@link pullImage}. */
export interface PullOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Pull `image`, yielding Docker's progress lines; throws with Docker's reason when the pull
 * fails (unknown image, registry unreachable, timeout). Errors in the stream count too: Docker
 * answers 200 and reports a failed layer as an `error` line.
 */
export async function* pullImage(
  docker: Docker,
  image: string,
  options: PullOptions,
): AsyncGenerator<PullProgress> {
  const stream = (await docker.pull(image)) as NodeJS.ReadableStream & {
    destroy(error?: Error): void;
  };
  const stop = (reason: string) => stream.destroy(new Error(reason));
  const timer = setTimeout(
    () => stop(`the pull took longer than ${options.timeoutMs} ms`),
    options.timeoutMs,
  );
  const onAbort = () => stop("the pull was cancelled");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let rest = "";
  try {
    for await (const chunk of stream) {
      rest += chunk.toString();
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.trim()) continue;
        let event: PullProgress & { error?: string; errorDetail?: { message?: string } };
        try {
          event = JSON.parse(line);
        } catch {
          continue;
        }
        if (event.error || event.errorDetail)
          throw new Error(event.errorDetail?.message ?? event.error);
        yield {
          status: event.status,
          id: event.id,
          progress: event.progress,
          progressDetail: event.progressDetail,
        } as PullProgress;
      }
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** Pull `image` to completion; resolves, or rejects with a one-line reason. */
export async function pullImageQuietly(
  docker: Docker,
  image: string,
  options: PullOptions,
): Promise<void> {
  for await (const _ of pullImage(docker, image, options)) {
    // Progress is not reported on this path.
  }
}

/** Is `image` present on the engine? Its inspect data when it is. */
export async function localImage(
  docker: Docker,
  image: string,
): Promise<Docker.ImageInspectInfo | null> {
  try {
    return await docker.getImage(image).inspect();
  } catch (error) {
    if (dockerStatus(error) === 404) return null;
    throw error;
  }
}

/** A pull failure's reason, short enough for an API answer. */
export function pullFailure(error: unknown): string {
  return dockerMessage(error).split("\n")[0]!.slice(0, 500);
}
